"""Consolidation: merges, contradictions, episode summaries, decay and retirement, promotion;
idempotent; one judge call per cluster; on the durable queue with the audit log. Real
Postgres (VaultStore, JobQueue, AuditLog); only the chat model is scripted."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta
from typing import Any

import pytest
from langgraph.store.base import BaseStore

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.jobs import AsyncJobQueue, ConsolidationWorker, JobQueue
from langmem_vault.memory._lifecycle.consolidation import (
    ConsolidationPolicy,
    aconsolidate,
    consolidate,
)
from langmem_vault.memory._lifecycle.consolidation_judge import (
    FactVerdict,
    FactView,
    ModelJudge,
    OfflineJudge,
)
from langmem_vault.memory._models import utcnow
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.usage import usage_namespace
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.models import ScriptedModel

SEMANTIC = ("memories", "u1", "semantic")


def _facts(vault: MemoryVault) -> dict[str, Any]:
    return {m.key: m.value for m in vault.list(status=None)}


def test_merges_duplicates_keeping_both_evidences_and_is_idempotent(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    a = vault.remember("Likes green tea", source="conversation", confidence=0.9, evidence="e1").key
    b = vault.remember("likes green tea.", source="conversation", confidence=0.7, evidence="e2").key
    vault.remember("Plays chess on Sundays", source="conversation")
    first = consolidate(store, user_id="u1")
    assert first.merged == [(a, b)] and first.judge_calls == 1
    facts = _facts(vault)
    assert facts[a].status == "active" and facts[a].evidence == "e1 | e2"
    assert facts[a].mentions == 2 and facts[a].confidence == pytest.approx(0.97)
    assert facts[b].status == "superseded" and facts[b].superseded_by == a
    second = consolidate(store, user_id="u1")
    assert not second.changed and second.judge_calls == 0
    assert _facts(vault) == facts


def test_flags_contradictions_for_confirmation(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    old = vault.remember("Lives in Lyon", category="personal", source="conversation").key
    new = vault.remember("Lives in Paris", category="personal", source="conversation").key
    report = consolidate(store, user_id="u1")
    assert report.flagged == [(old, new)]
    facts = _facts(vault)
    assert facts[new].status == "pending_confirmation" and facts[new].supersedes == old
    assert facts[old].status == "active"
    vault.confirm(new)  # the user settles it: the old one closes
    facts = _facts(vault)
    assert facts[old].status == "superseded" and facts[new].layer == "long_term"
    assert not consolidate(store, user_id="u1").changed


async def test_async_summarises_episode_clusters_once_with_the_model(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for day in ("Monday", "Wednesday", "Friday"):
        await vault.aadd_episode(f"Practised Spanish verbs on {day}", topics=["spanish"])
    await vault.aadd_episode("Asked about the weather", topics=["weather"])
    model = ScriptedModel(script=[{"summary": "Is learning Spanish and practises often"}])
    judge = ModelJudge(model)
    report = await aconsolidate(astore, user_id="u1", judge=judge)
    assert len(report.summaries) == 1 and model.calls == 1
    (key,) = report.summaries
    summary = (await vault.aget(key)).value  # type: ignore[union-attr]
    assert summary.text == "Is learning Spanish and practises often"
    assert summary.layer == "long_term" and "spanish" in summary.tags
    assert len(summary.source_message_ids) == 3  # the episodes it summarises
    again = await aconsolidate(astore, user_id="u1", judge=judge)
    assert not again.changed and model.calls == 1


def test_model_judge_names_facts_by_number_and_falls_back_offline(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    a = vault.remember("Works at Acme", category="company", source="conversation").key
    b = vault.remember("Works for Acme Corp", category="company", source="conversation").key
    model = ScriptedModel(script=[{"duplicates": [[1, 2]], "contradictions": []}])
    report = consolidate(store, user_id="u1", judge=ModelJudge(model))
    assert report.merged == [(a, b)] and model.calls == 1
    assert "Works at Acme" in model.prompts[0][-1].content  # type: ignore[operator]
    # A model that fails (or names a fact that is not there): the offline rules decide.
    c = vault.remember("Lives in Oslo", category="personal", source="conversation").key
    d = vault.remember("Lives in Bergen", category="personal", source="conversation").key
    broken = ScriptedModel(script=[{"duplicates": [[1, 9]]}])
    report = consolidate(store, user_id="u1", judge=ModelJudge(broken))
    assert report.flagged == [(c, d)] and broken.calls == 1


def test_decay_of_unused_facts_retires_them_only_while_the_user_is_active(
    store: BaseStore,
) -> None:
    vault = MemoryVault(store, user_id="u1")
    used = vault.remember("Lives in Lyon", source="conversation").key
    unused = vault.remember("Owns a red bicycle", source="conversation").key
    stated = vault.remember("Is allergic to nuts").key  # the user's own: never retired
    recorder = AccessRecorder(inline=True)
    policy = ConsolidationPolicy(retire_below=0.45)
    assert not consolidate(store, user_id="u1", policy=policy).changed  # user idle: no decay
    for cycle in range(1, 4):
        recorder.record(store, [(SEMANTIC, used)], cited=[(SEMANTIC, used)])
        report = consolidate(store, user_id="u1", policy=policy)
        facts = _facts(vault)
        assert report.folded == 1
        # 0.5 x 0.95^n: 0.475, 0.451, then 0.429 < 0.45 -> retired at the third cycle
        expected = round(0.5 * 0.95**cycle, 6)
        if cycle < 3:
            assert facts[unused].utility == pytest.approx(expected) and not report.retired
        else:
            assert report.retired == [unused] and facts[unused].status == "superseded"
        assert facts[used].utility > 0.5 and facts[stated].status == "active"
        assert not consolidate(store, user_id="u1", policy=policy).changed  # idempotent


def test_promotes_by_use_through_the_cycle(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    key = vault.remember("Prefers aisle seats", layer="working", source="conversation").key
    recorder = AccessRecorder(inline=True)
    for _ in range(2):
        recorder.record(store, [(SEMANTIC, key)], cited=[(SEMANTIC, key)])
    report = consolidate(store, user_id="u1")
    assert report.promoted == {key: "long_term"}
    assert vault.get(key).value.layer == "long_term"  # type: ignore[union-attr]
    assert store.get(usage_namespace(SEMANTIC), key).value["citations"] == 2  # type: ignore[union-attr]


def test_prunes_usage_records_of_memories_that_are_gone(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    kept = vault.remember("Lives in Lyon", source="conversation").key
    gone = vault.remember("Is in a meeting until noon", source="conversation").key
    AccessRecorder(inline=True).record(store, [(SEMANTIC, kept), (SEMANTIC, gone)])
    store.delete(SEMANTIC, gone)  # as the store's TTL sweep does when a layer expires
    usage = usage_namespace(SEMANTIC)
    # A run that began before the record was written leaves it (its memory may be new).
    early = consolidate(store, user_id="u1", now=utcnow() - timedelta(minutes=5))
    assert early.pruned_usage == [] and store.get(usage, gone) is not None
    report = consolidate(store, user_id="u1")
    assert report.pruned_usage == [gone] and store.get(usage, gone) is None
    assert store.get(usage, kept) is not None
    assert not consolidate(store, user_id="u1").changed


async def test_async_prunes_usage_records_of_memories_that_are_gone(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    gone = (await vault.aremember("Is at the dentist", source="conversation")).key
    await AccessRecorder(inline=True).arecord(astore, [(SEMANTIC, gone)])
    await astore.adelete(SEMANTIC, gone)
    report = await aconsolidate(astore, user_id="u1")
    assert report.pruned_usage == [gone]
    assert await astore.aget(usage_namespace(SEMANTIC), gone) is None


@contextmanager
def _store_and_queue(
    pg_uri: str, schema: str, index: dict[str, object]
) -> Iterator[tuple[VaultStore, JobQueue]]:
    with open_pool(pg_uri, max_size=3) as pool:
        store = VaultStore(pool, schema=schema, index=index)  # type: ignore[arg-type]
        store.setup()
        queue = JobQueue(pool, schema=schema)
        queue.setup()
        yield store, queue


def test_worker_schedules_hourly_runs_triggers_and_audits(
    pg_uri: str, schema: str, index: dict[str, object]
) -> None:
    with _store_and_queue(pg_uri, schema, index) as (store, queue):
        audit = AuditLog(store.conn, schema=schema)
        audit.setup()
        worker = ConsolidationWorker(queue, store, audit=audit)
        first = worker.schedule("u1")
        assert worker.schedule("u1") == first  # one job per user and slot
        assert worker.run_pending() == 0  # the slot has not started yet
        vault = MemoryVault(store, user_id="u1")
        a = vault.remember("Likes green tea", source="conversation").key
        b = vault.remember("Likes green tea!", source="conversation").key
        worker.trigger("u1")
        assert worker.run_pending() == 1
        assert _facts(vault)[b].superseded_by == a
        (event,) = audit.query("u1", component="consolidate")
        assert event.memory_key == b and event.detail == {"consolidation": "merge", "kept": a}
        assert len(queue.list(status="pending")) == 1  # the scheduled slot is still waiting


def test_worker_never_runs_a_user_twice_at_once(
    pg_uri: str, schema: str, index: dict[str, object]
) -> None:
    with _store_and_queue(pg_uri, schema, index) as (store, queue):
        worker = ConsolidationWorker(queue, store)
        worker.trigger("u1")
        # Another worker is in the middle of u1's run (it folds u1's usage signals) ...
        [busy] = queue.claim(["consolidate"], worker_id="other", one_per_thread=True)
        worker.trigger("u1")  # ... when a manual run is asked for: it waits its turn
        worker.trigger("u2")
        assert worker.run_pending() == 1  # u2 only
        assert [j.payload["user_id"] for j in queue.list(status="pending")] == ["u1"]
        queue.complete(busy)
        assert worker.run_pending() == 1 and queue.list(status="pending") == []


class SlowJudge(OfflineJudge):
    """The offline rules, after a wait longer than the worker's lease."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.started = threading.Event()

    def judge_facts(self, facts: Sequence[FactView]) -> FactVerdict:
        self.started.set()
        time.sleep(self.seconds)
        return super().judge_facts(facts)

    async def ajudge_facts(self, facts: Sequence[FactView]) -> FactVerdict:
        self.started.set()
        await asyncio.sleep(self.seconds)
        return super().judge_facts(facts)


def test_a_slow_run_keeps_its_lease(pg_uri: str, schema: str, index: dict[str, object]) -> None:
    with _store_and_queue(pg_uri, schema, index) as (store, queue):
        judge = SlowJudge(2.0)
        worker = ConsolidationWorker(queue, store, judge, lease_seconds=0.6)
        vault = MemoryVault(store, user_id="u1")
        vault.remember("Likes green tea", source="conversation")
        vault.remember("Likes green tea!", source="conversation")
        job = worker.trigger("u1")
        with ThreadPoolExecutor(1) as pool:
            run = pool.submit(worker.run_pending)
            assert judge.started.wait(10)
            time.sleep(1.2)  # two leases' time into the judge call
            # Another worker finds nothing to take over: the run renewed its lease.
            assert queue.claim(["consolidate"], worker_id="other", lease_seconds=60) == []
            assert run.result() == 1
        assert queue.get(job).status == "done"  # type: ignore[union-attr]


@asynccontextmanager
async def _astore_and_queue(
    pg_uri: str, schema: str, index: dict[str, object]
) -> AsyncIterator[tuple[AsyncVaultStore, AsyncJobQueue]]:
    pool = await aopen_pool(pg_uri, max_size=3)
    try:
        store = AsyncVaultStore(pool, schema=schema, index=index)  # type: ignore[arg-type]
        await store.setup()
        queue = AsyncJobQueue(pool, schema=schema)
        await queue.setup()
        yield store, queue
    finally:
        await pool.close()


async def test_async_slow_run_keeps_its_lease(
    pg_uri: str, schema: str, index: dict[str, object]
) -> None:
    async with _astore_and_queue(pg_uri, schema, index) as (store, queue):
        judge = SlowJudge(2.0)
        worker = ConsolidationWorker(queue, store, judge, lease_seconds=0.6)
        vault = MemoryVault(store, user_id="u1")
        await vault.aremember("Likes green tea", source="conversation")
        await vault.aremember("Likes green tea!", source="conversation")
        job = await worker.atrigger("u1")
        run = asyncio.create_task(worker.arun_pending())
        while not judge.started.is_set():
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.2)
        assert await queue.claim(["consolidate"], worker_id="other", lease_seconds=60) == []
        assert await run == 1
        assert (await queue.get(job)).status == "done"  # type: ignore[union-attr]


async def test_async_worker_runs_a_triggered_job_and_reschedules(
    pg_uri: str, schema: str, index: dict[str, object]
) -> None:
    async with _astore_and_queue(pg_uri, schema, index) as (store, queue):
        audit = AsyncAuditLog(store.conn, schema=schema)
        await audit.setup()
        worker = ConsolidationWorker(queue, store, audit=audit, interval_seconds=3600)
        vault = MemoryVault(store, user_id="u1")
        old = (await vault.aremember("Lives in Lyon", category="personal", source="import")).key
        new = (await vault.aremember("Lives in Rome", category="personal", source="import")).key
        job = await worker.atrigger("u1")
        assert await worker.arun_pending() == 1
        assert (await queue.get(job)).status == "done"  # type: ignore[union-attr]
        facts = {m.key: m.value for m in await vault.alist(status=None)}
        assert facts[new].status == "pending_confirmation" and facts[new].supersedes == old
        (event,) = await audit.query("u1", component="consolidate")
        assert event.detail == {"consolidation": "contradiction", "supersedes": old}
        # A manual run does not start a cycle; a scheduled one keeps the cycle going.
        assert await queue.list(status="pending") == []
        await worker.aschedule("u1")
        assert len(await queue.list(status="pending")) == 1
