"""Closing a store writes the bookkeeping (accounting increments, access stamps) the
background writers still hold for it; a write that cannot be made is one warning line."""

from __future__ import annotations

import logging

import pytest

from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.accounting import CounterBuffer, accounting_namespace
from langmem_vault.memory._recall.usage import usage_namespace
from langmem_vault.store import AsyncVaultStore, VaultStore

FACT = (("memories", "u1", "semantic"), "tea")


def _idle(*writers: CounterBuffer | AccessRecorder) -> None:
    for writer in writers:
        writer.interval = 600.0  # the writer thread's round never comes during the test


def test_closing_a_sync_store_writes_what_its_writers_hold(
    pg_uri: str, schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    buffer, recorder = CounterBuffer(), AccessRecorder()
    _idle(buffer, recorder)
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        buffer.add(store, [(accounting_namespace("u1"), "day", {"calls": 2})])
        recorder.record(store, [FACT])
        assert store.get(accounting_namespace("u1"), "day") is None  # held, not yet written
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        calls = store.get(accounting_namespace("u1"), "day")
        stamp = store.get(usage_namespace(FACT[0]), FACT[1])
    assert calls is not None and calls.value["calls"] == 2
    assert stamp is not None and stamp.value["access_count"] == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_closing_an_async_store_writes_the_access_stamps(pg_uri: str, schema: str) -> None:
    recorder = AccessRecorder()
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
        await recorder.arecord(store, [FACT], cited=[FACT])
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        stamp = await store.aget(usage_namespace(FACT[0]), FACT[1])
    assert stamp is not None
    assert (stamp.value["access_count"], stamp.value["citations"]) == (1, 1)


def test_a_write_after_the_store_closed_is_one_warning_line(
    pg_uri: str, schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    buffer = CounterBuffer()
    _idle(buffer)
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
    buffer.add(store, [(accounting_namespace("u1"), "2026-11-27|latency|inject", {"count": 1})])
    with caplog.at_level(logging.WARNING):
        buffer.flush()  # the pool is closed: logged, not raised
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.exc_info is None  # one line, no traceback
    message = warning.getMessage()
    assert "dropped token and latency accounting for 1 record(s)" in message
    assert "2026-11-27|latency|inject" in message and "closed" in message


async def test_an_async_write_after_the_store_closed_is_one_warning_line(
    pg_uri: str, schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = AccessRecorder()
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
    with caplog.at_level(logging.WARNING):
        await recorder.arecord(store, [FACT])
        await recorder.aflush()
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.exc_info is None
    assert "dropped memory access counts for 1 record(s)" in warning.getMessage()
    assert "tea" in warning.getMessage()


def test_an_in_memory_store_is_written_at_once_in_the_callers_thread() -> None:
    # InMemoryStore is not thread-safe: a writer thread's put during a turn's search raised
    # "dictionary changed size during iteration" (and inject went without its block).
    from langgraph.store.memory import InMemoryStore

    buffer = CounterBuffer()
    _idle(buffer)
    store = InMemoryStore()
    buffer.add(store, [(accounting_namespace("u1"), "day", {"calls": 2})])
    item = store.get(accounting_namespace("u1"), "day")
    assert item is not None and item.value["calls"] == 2
