"""The accounting records: batched writes (counted), percentiles from the latency
histogram, model calls metered into the stage's ledger, cost, and erase taking them."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langmem_vault.db._steps import run_steps
from langmem_vault.memory._recall.accounting import (
    LATENCY_BOUNDS_MS,
    CounterBuffer,
    accounting_namespace,
    accounting_plan,
    observe,
    with_cost,
)
from langmem_vault.privacy._subject_rights.erase import erase_user
from langmem_vault.telemetry import metered_call
from tests.support.models import MeteredModel


class GatedStore(BaseStore):
    """Counts batches; the first waits until the test opens the gate. It wraps an
    InMemoryStore rather than being one: an InMemoryStore is written in the caller's thread,
    never by the writer thread this file tests."""

    def __init__(self) -> None:
        self.inner = InMemoryStore()
        self.batches = 0
        self.entered = threading.Event()
        self.gate = threading.Event()

    def batch(self, ops: Any) -> Any:
        self.batches += 1
        if self.batches == 1:
            self.entered.set()
            self.gate.wait(10)
        return self.inner.batch(ops)

    async def abatch(self, ops: Any) -> Any:
        return self.batch(ops)


def test_increments_that_arrive_during_a_write_share_the_next() -> None:
    store, buffer = GatedStore(), CounterBuffer()
    record = (("counts",), "k", {"n": 1})
    buffer.add(store, [record])  # the writer takes it and waits at the gate
    assert store.entered.wait(10)
    for _ in range(10):
        buffer.add(store, [record])  # held: one write for all ten
    store.gate.set()
    buffer.flush()
    # the fallback read-add-put is two batches per write: two writes in all, not eleven
    assert store.batches == 4
    assert store.get(("counts",), "k").value == {"n": 11}  # type: ignore[union-attr]


def test_a_failing_store_never_raises_to_the_turn() -> None:
    class Broken(InMemoryStore):
        def batch(self, ops: Any) -> Any:
            raise ConnectionError("down")

    buffer = CounterBuffer()
    with observe("inject", Broken(), "u1", buffer=buffer):
        pass
    buffer.flush()  # logged, not raised


def _stage(store: BaseStore, buffer: CounterBuffer, model: MeteredModel, calls: int) -> None:
    with observe("extract", store, "u1", buffer=buffer):
        for _ in range(calls):
            with metered_call("extract", model):
                model.invoke("hello")
    buffer.flush()


def test_a_stage_accounts_its_model_calls_and_latency() -> None:
    store, buffer = InMemoryStore(), CounterBuffer()
    model = MeteredModel(default=AIMessage("{}"), tokens_in=10, tokens_out=2)
    _stage(store, buffer, model, calls=3)
    _stage(store, buffer, model, calls=1)
    report = run_steps(accounting_plan("u1", days=1), store)
    (row,) = report.tokens
    assert (row.input_tokens, row.output_tokens, row.calls) == (40, 8, 4)
    assert report.latency_ms["extract"]["count"] == 2
    priced = with_cost(report, {"scripted-metered": (1.0, 1.0), "other": (9.0, 9.0)})
    assert priced.cost == 48 / 1e6
    assert with_cost(report, {"other": (9.0, 9.0)}).cost is None  # unpriced: tokens only
    assert run_steps(accounting_plan("u2"), store).tokens == []  # per user


def test_percentiles_from_the_histogram() -> None:
    store = InMemoryStore()
    fields: dict[str, Any] = {"count": 100, "b10": 90, "b30": 10}
    store.put(accounting_namespace("u1"), "2026-01-01|latency|inject", fields)
    store.put(accounting_namespace("u1"), "2020-01-01|latency|inject", fields)  # too old
    latency = run_steps(accounting_plan("u1", days=3660), store).latency_ms["inject"]
    assert latency == {"count": 200, "p50": LATENCY_BOUNDS_MS[10], "p95": LATENCY_BOUNDS_MS[30]}
    window = run_steps(accounting_plan("u1", days=2000), store).latency_ms["inject"]
    assert window["count"] == 100  # the days outside the window are left out


def test_erase_takes_the_users_accounting() -> None:
    store, buffer = InMemoryStore(), CounterBuffer()
    with (
        observe("inject", store, "u1", buffer=buffer),
        observe("inject", store, "u2", buffer=buffer),
    ):
        pass
    buffer.flush()
    erase_user(store, "u1")
    assert store.search(accounting_namespace("u1")) == []
    assert len(store.search(accounting_namespace("u2"))) == 1


def _stuck_sessions(pg_uri: str, schema: str) -> list[str]:
    """States of the backends idle in a transaction whose last statement touched ``schema``
    (ended here, so a regression fails this test instead of hanging the schema's DROP)."""
    import psycopg

    with psycopg.connect(pg_uri, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT state, pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE pid <> pg_backend_pid() AND query LIKE %s"
            " AND state LIKE 'idle in transaction%%'",
            (f"%{schema}.store_items%",),
        ).fetchall()
    return [state for state, _ in rows]


def test_loop_stopped_mid_write_leaves_no_open_transaction(pg_uri: str, schema: str) -> None:
    """An app's loop stops running while a turn's accounting write is in flight (held here
    behind a table lock): no backend is left idle in a transaction, which would block the
    schema's DROP and every later write to its rows."""
    import asyncio
    import time

    import psycopg

    from langmem_vault.store import AsyncVaultStore

    loop = asyncio.new_event_loop()
    buffer = CounterBuffer()
    opened = AsyncVaultStore.from_conn_string(pg_uri, schema=schema)
    store = loop.run_until_complete(opened.__aenter__())
    try:
        loop.run_until_complete(store.setup())
        with psycopg.connect(pg_uri) as blocker:
            blocker.execute(f"LOCK TABLE {schema}.store_items IN EXCLUSIVE MODE")
            loop.run_until_complete(
                buffer.aadd(store, [(accounting_namespace("u1"), "day", {"calls": 1})])
            )
            loop.run_until_complete(asyncio.sleep(0.3))  # the write waits on the lock
            blocker.rollback()  # the statement ends while the loop is not running
        time.sleep(0.5)
        stuck = _stuck_sessions(pg_uri, schema)
    finally:
        loop.run_until_complete(opened.__aexit__(None, None, None))
        loop.close()
    assert stuck == []


async def test_closing_an_async_store_finishes_its_pending_write(pg_uri: str, schema: str) -> None:
    """A turn's accounting write still queued when the app closes the store is written
    before the pool closes, not lost to a closed pool."""
    from langmem_vault.store import AsyncVaultStore

    buffer = CounterBuffer()
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
        await buffer.aadd(store, [(accounting_namespace("u1"), "day", {"calls": 2})])
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        record = await store.aget(accounting_namespace("u1"), "day")
    assert record is not None and record.value["calls"] == 2
