"""Background extraction end to end on a real Postgres: node enqueues, workers extract and
reconcile, crashes are retried after the lease without duplicates."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from langmem_vault.graphs._state import MemoryState
from langmem_vault.jobs import AsyncJobQueue, ExtractionWorker, JobQueue
from langmem_vault.jobs._worker import LeaseLost
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.nodes._extract import create_extract_node
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.messages import ai, human, proposal, transcript_of
from tests.support.models import ScriptedModel

CONFIG = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
NS = MemoryNamespaces().resolve(CONFIG)


def lives_in(prompt: list[BaseMessage]) -> Any:
    text = transcript_of(prompt)
    found = [c for c in ("Oslo", "Lima", "Kyiv") if c in text]
    return proposal(
        facts=[
            {"text": f"User lives in {c}", "evidence": f"I live in {c}", "confidence": 0.9}
            for c in found
        ],
        episode={"summary": "Talked about home", "importance": 0.5} if found else None,
    )


def turn(city: str) -> list[BaseMessage]:
    return [human(f"I live in {city}."), ai("Noted.")]


def fact_texts(store: Any) -> list[str]:
    return sorted(i.value["text"] for i in store.search(NS.semantic, limit=100))


def graph(node: Any, store: Any) -> Any:
    builder = StateGraph(MemoryState)
    builder.add_node("extract", node)
    builder.add_edge(START, "extract")
    return builder.compile(checkpointer=InMemorySaver(), store=store)


def test_background_node_returns_at_once_and_worker_applies(
    env: tuple[VaultStore, JobQueue],
) -> None:
    store, queue = env
    model = ScriptedModel(default=lives_in)
    node = create_extract_node(
        model, queue=queue, every_n_messages=2, debounce_seconds=0, start_worker=False
    )
    app = graph(node, store)
    app.invoke({"messages": turn("Oslo")}, CONFIG)
    assert model.calls == 0 and queue.counts()["pending"] == 1
    # The first job still waits for a worker, so it absorbs the second turn.
    app.invoke({"messages": turn("Lima")}, CONFIG)
    assert queue.counts()["pending"] == 1
    worker = ExtractionWorker(queue, store, model)
    assert worker.run_pending() == 1
    assert model.calls == 1
    assert fact_texts(store) == ["User lives in Lima", "User lives in Oslo"]
    assert len(store.search(NS.episodes)) == 1
    # A turn after the job ran becomes a new job.
    app.invoke({"messages": turn("Kyiv")}, CONFIG)
    assert worker.run_pending() == 1
    assert "Oslo" not in transcript_of(model.prompts[1])
    assert queue.counts()["done"] == 2


def test_debounce_merges_turns_into_one_call(env: tuple[VaultStore, JobQueue]) -> None:
    store, queue = env
    model = ScriptedModel(default=lives_in)
    node = create_extract_node(
        model, queue=queue, every_n_messages=2, debounce_seconds=0.5, start_worker=False
    )
    app = graph(node, store)
    app.invoke({"messages": turn("Oslo")}, CONFIG)
    app.invoke({"messages": turn("Lima")}, CONFIG)
    worker = ExtractionWorker(queue, store, model)
    assert worker.run_pending() == 0  # still debouncing
    time.sleep(0.6)
    assert worker.run_pending() == 1
    assert model.calls == 1
    assert "Oslo" in transcript_of(model.prompts[0]) and "Lima" in transcript_of(model.prompts[0])


def test_stalled_worker_loses_the_job_and_writes_nothing(env: tuple[VaultStore, JobQueue]) -> None:
    """Worker 1 hangs mid-extraction past its lease; worker 2 retries; worker 1 wakes late."""
    store, queue = env
    node = create_extract_node(
        ScriptedModel(), queue=queue, every_n_messages=2, debounce_seconds=0, start_worker=False
    )
    graph(node, store).invoke({"messages": turn("Kyiv")}, CONFIG)

    release, entered = threading.Event(), threading.Event()

    def hang(prompt: list[BaseMessage]) -> Any:
        entered.set()
        release.wait(10)
        return lives_in(prompt)

    model1, model2 = ScriptedModel(default=hang), ScriptedModel(default=lives_in)
    # A hung call: the lease is renewed for at most max_extract_seconds, then lost.
    worker1 = ExtractionWorker(
        queue, store, model1, worker_id="w1", lease_seconds=0.5, max_extract_seconds=0.1
    )
    worker2 = ExtractionWorker(queue, store, model2, worker_id="w2", lease_seconds=30)
    [job] = queue.claim(["extract"], worker_id="w1", lease_seconds=0.5)
    errors: list[BaseException] = []

    def crashy() -> None:
        try:
            worker1.run_job(job)
        except BaseException as exc:
            errors.append(exc)

    th = threading.Thread(target=crashy)
    th.start()
    assert entered.wait(5)
    assert worker2.run_pending() == 0  # the lease still holds
    time.sleep(0.6)
    assert worker2.run_pending() == 1
    release.set()
    th.join(5)
    assert len(errors) == 1 and isinstance(errors[0], LeaseLost)
    assert fact_texts(store) == ["User lives in Kyiv"]
    done = queue.get(job.id)
    assert done is not None and done.status == "done" and done.attempts == 2
    assert done.worker_id == "w2"


class ProcessDied(BaseException):
    """Stands for the worker process being killed (not an Exception: nothing catches it)."""


class DiesBeforeComplete(JobQueue):
    """A queue whose worker process 'dies' right after reconcile, before marking done."""

    def complete(self, job: Any) -> bool:
        raise ProcessDied("killed")


def test_crash_after_reconcile_is_retried_without_duplicates(
    env: tuple[VaultStore, JobQueue],
) -> None:
    store, queue = env
    node = create_extract_node(
        ScriptedModel(), queue=queue, every_n_messages=2, debounce_seconds=0, start_worker=False
    )
    graph(node, store).invoke({"messages": turn("Oslo")}, CONFIG)
    model1, model2 = ScriptedModel(default=lives_in), ScriptedModel(default=lives_in)
    dying = DiesBeforeComplete(queue.db.conn, schema=queue.schema)
    worker1 = ExtractionWorker(dying, store, model1, worker_id="w1", lease_seconds=0.4)
    [job] = dying.claim(["extract"], worker_id="w1", lease_seconds=0.4)
    with pytest.raises(ProcessDied):
        worker1.run_job(job)
    assert fact_texts(store) == ["User lives in Oslo"]
    time.sleep(0.5)
    worker2 = ExtractionWorker(queue, store, model2, worker_id="w2")
    assert worker2.run_pending() == 1
    assert model2.calls == 0  # the saved result was reused: no second LLM call
    [item] = store.search(NS.semantic)
    assert item.value["mentions"] == 1 and item.value["confidence"] == 0.9
    assert len(store.search(NS.episodes)) == 1
    assert queue.counts() == {"pending": 0, "running": 0, "done": 1, "failed": 0}


def test_model_errors_are_recorded_and_retried(env: tuple[VaultStore, JobQueue]) -> None:
    store, queue = env
    node = create_extract_node(
        ScriptedModel(), queue=queue, every_n_messages=2, debounce_seconds=0, start_worker=False
    )
    graph(node, store).invoke({"messages": turn("Lima")}, CONFIG)
    model = ScriptedModel(script=[TimeoutError("model timed out")], default=lives_in)
    worker = ExtractionWorker(queue, store, model, retry_in_seconds=0)
    assert worker.run_pending(limit=1) == 0
    [job] = queue.list()
    assert job.status == "pending" and job.attempts == 1
    assert job.last_error == "TimeoutError: model timed out"
    assert worker.run_pending() == 1
    assert fact_texts(store) == ["User lives in Lima"]


def test_node_starts_a_worker_thread(env: tuple[VaultStore, JobQueue]) -> None:
    store, queue = env
    model = ScriptedModel(default=lives_in)
    node = create_extract_node(model, queue=queue, every_n_messages=2, debounce_seconds=0)
    graph(node, store).invoke({"messages": turn("Oslo")}, CONFIG)
    deadline = time.monotonic() + 10
    while queue.counts()["done"] < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fact_texts(store) == ["User lives in Oslo"]
    node.node.background.worker.stop()


async def test_async_background_and_task_worker(
    aenv: tuple[AsyncVaultStore, AsyncJobQueue],
) -> None:
    store, queue = aenv
    model = ScriptedModel(default=lives_in)
    node = create_extract_node(model, queue=queue, every_n_messages=2, debounce_seconds=0)
    app = graph(node, store)
    await app.ainvoke({"messages": turn("Oslo")}, CONFIG)
    await app.ainvoke({"messages": turn("Kyiv")}, CONFIG)
    for _ in range(200):
        if (await queue.counts())["done"] == 2:
            break
        await asyncio.sleep(0.05)
    texts = sorted(i.value["text"] for i in await store.asearch(NS.semantic, limit=10))
    assert texts == ["User lives in Kyiv", "User lives in Oslo"]
    await node.node.background.worker.astop()


async def test_async_crash_mid_extraction_two_workers(
    aenv: tuple[AsyncVaultStore, AsyncJobQueue],
) -> None:
    store, queue = aenv
    node = create_extract_node(
        ScriptedModel(), queue=queue, every_n_messages=2, debounce_seconds=0, start_worker=False
    )
    await graph(node, store).ainvoke({"messages": turn("Lima")}, CONFIG)
    model1 = ScriptedModel(script=[ProcessDied()])  # the process dies in the call
    worker1 = ExtractionWorker(queue, store, model1, worker_id="w1", lease_seconds=0.3)
    [job] = await queue.claim(["extract"], worker_id="w1", lease_seconds=0.3)
    with pytest.raises(ProcessDied):
        await worker1.arun_job(job)
    model2 = ScriptedModel(default=lives_in)
    worker2 = ExtractionWorker(queue, store, model2, worker_id="w2")
    assert await worker2.arun_pending() == 0
    await asyncio.sleep(0.4)
    assert await worker2.arun_pending() == 1
    assert await worker2.arun_pending() == 0
    texts = [i.value["text"] for i in await store.asearch(NS.semantic, limit=10)]
    assert texts == ["User lives in Lima"]
    got = await queue.get(job.id)
    assert got is not None and got.attempts == 2 and got.status == "done"


def test_wrong_driver_is_a_clear_error(env: tuple[VaultStore, JobQueue]) -> None:
    store, queue = env
    worker = ExtractionWorker(queue, store, ScriptedModel())
    with pytest.raises(TypeError, match="AsyncJobQueue"):
        asyncio.run(worker.arun_pending())
    with pytest.raises(ValueError, match="lease_seconds"):
        ExtractionWorker(queue, store, ScriptedModel(), lease_seconds=0)


def test_enqueue_failure_does_not_break_the_turn(
    env: tuple[VaultStore, JobQueue], pg_uri: str, caplog: pytest.LogCaptureFixture
) -> None:
    _, queue = env
    import psycopg

    node = create_extract_node(
        ScriptedModel(), queue=queue, every_n_messages=2, debounce_seconds=0, start_worker=False
    )
    with psycopg.connect(pg_uri, autocommit=True) as conn:  # the queue's table is gone
        conn.execute(f"ALTER TABLE {queue.schema}.vault_jobs RENAME TO vault_jobs_away")
    first = turn("Oslo")
    with caplog.at_level("WARNING", logger="langmem_vault.extract"):
        node.invoke({"messages": first}, CONFIG)
    assert "the next turn retries it" in caplog.text
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {queue.schema}.vault_jobs_away RENAME TO vault_jobs")
    node.invoke({"messages": [*first, *turn("Lima")]}, CONFIG)
    [job] = queue.list()
    assert len(job.payload["message_ids"]) == 4  # nothing skipped


def test_async_queue_in_a_sync_run_is_a_clear_error(pg_uri: str) -> None:
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(pg_uri, open=False)
    node = create_extract_node(ScriptedModel(), queue=AsyncJobQueue(pool))
    with pytest.raises(TypeError, match="ainvoke"):
        node.invoke({"messages": turn("Oslo")}, CONFIG)


def test_slow_model_keeps_its_lease(env: tuple[VaultStore, JobQueue]) -> None:
    """A model call longer than the lease: the heartbeat renews it, no other worker steals it."""
    store, queue = env
    node = create_extract_node(
        ScriptedModel(), queue=queue, every_n_messages=2, debounce_seconds=0, start_worker=False
    )
    graph(node, store).invoke({"messages": turn("Oslo")}, CONFIG)
    release, entered = threading.Event(), threading.Event()

    def slow(prompt: list[BaseMessage]) -> Any:
        entered.set()
        release.wait(10)
        return lives_in(prompt)

    worker1 = ExtractionWorker(queue, store, ScriptedModel(default=slow), lease_seconds=0.3)
    worker2 = ExtractionWorker(queue, store, ScriptedModel(default=lives_in), lease_seconds=30)
    [job] = queue.claim(["extract"], worker_id=worker1.worker_id, lease_seconds=0.3)
    th = threading.Thread(target=worker1.run_job, args=(job,))
    th.start()
    assert entered.wait(5)
    time.sleep(1.0)  # more than three leases
    assert worker2.run_pending() == 0
    release.set()
    th.join(5)
    done = queue.get(job.id)
    assert done is not None and done.status == "done" and done.attempts == 1
    assert fact_texts(store) == ["User lives in Oslo"]


async def test_astop_ends_the_task_when_a_wake_up_and_the_stop_come_together(
    aenv: tuple[AsyncVaultStore, AsyncJobQueue],
) -> None:
    # A turn wakes the worker (enqueue) in the same loop step as the app stops it: on 3.11,
    # asyncio.wait_for around the wake-up wait returned and swallowed the cancel (CPython
    # gh-86296), and the task polled on, so astop (and the test suite) waited forever.
    store, queue = aenv
    worker = ExtractionWorker(queue, store, ScriptedModel(), poll_interval=30)
    task = worker.astart()
    await asyncio.sleep(0.3)  # it has polled once and waits to be woken
    assert worker._awake is not None
    worker._awake.set()
    stop = asyncio.ensure_future(worker.astop())
    done, _ = await asyncio.wait({stop}, timeout=5)  # (wait_for would cancel, and so end, it)
    stop.cancel()
    assert done and task.cancelled(), "astop did not end the polling task"
