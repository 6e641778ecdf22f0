"""The durable job queue on a real Postgres: enqueue, watermark, claim, lease, retry."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.jobs import AsyncJobQueue, JobQueue


def payload_for(new_ids: list[str]) -> dict[str, Any]:
    return {"messages": [{"id": i} for i in new_ids], "message_ids": new_ids, "namespaces": {}}


@pytest.fixture
def queue(pg_uri: str, schema: str) -> Iterator[JobQueue]:
    pool = open_pool(pg_uri, max_size=6)
    q = JobQueue(pool, schema=schema)
    q.setup()
    yield q
    pool.close()


@pytest.fixture
async def aqueue(pg_uri: str, schema: str) -> AsyncIterator[AsyncJobQueue]:
    pool = await aopen_pool(pg_uri, max_size=6)
    q = AsyncJobQueue(pool, schema=schema)
    await q.setup()
    yield q
    await pool.close()


def ids(n: int, start: int = 0) -> list[str]:
    return [f"m{i}" for i in range(start, start + n)]


def test_setup_is_idempotent(queue: JobQueue) -> None:
    queue.setup()
    assert queue.counts() == {"pending": 0, "running": 0, "done": 0, "failed": 0}


def test_threshold_and_watermark(queue: JobQueue) -> None:
    assert queue.enqueue_span("extract", "t1", ids(3), payload_for, min_new=4) is None
    first = queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4)
    assert first is not None and first.message_ids == tuple(ids(4))
    # The same messages again: nothing new, nothing enqueued.
    assert queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=1) is None
    # Another thread has its own watermark.
    assert queue.enqueue_span("extract", "t2", ids(4), payload_for, min_new=4) is not None


def test_waiting_job_absorbs_next_span(queue: JobQueue) -> None:
    first = queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4, delay_seconds=30)
    second = queue.enqueue_span("extract", "t1", ids(8), payload_for, min_new=4, delay_seconds=30)
    assert first is not None and second is not None
    assert second.merged and second.job_id == first.job_id
    job = queue.get(first.job_id)
    assert job is not None
    assert job.payload["message_ids"] == ids(8)
    assert [m["id"] for m in job.payload["messages"]] == ids(8)
    assert job.dedupe_key == "extract:t1:m0:m7"
    assert queue.counts()["pending"] == 1


def test_claimed_job_is_not_merged(queue: JobQueue) -> None:
    first = queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4)
    assert first is not None
    [job] = queue.claim(["extract"], worker_id="w1")
    second = queue.enqueue_span("extract", "t1", ids(8), payload_for, min_new=4)
    assert second is not None and not second.merged and second.job_id != job.id
    assert second.message_ids == tuple(ids(4, 4))


def test_compaction_removing_messages_skips_nothing(queue: JobQueue) -> None:
    queue.enqueue_span("extract", "t1", ids(6), payload_for, min_new=4)
    queue.claim(["extract"], worker_id="w1")
    # Compaction removed m0..m4; m6..m9 arrived. Only the new four are enqueued.
    present = ["m5", *ids(4, 6)]
    got = queue.enqueue_span("extract", "t1", present, payload_for, min_new=4)
    assert got is not None and got.message_ids == tuple(ids(4, 6))


def test_same_span_twice_is_one_job(queue: JobQueue, pg_uri: str, schema: str) -> None:
    first = queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4)
    queue.claim(["extract"], worker_id="w1")
    import psycopg

    with psycopg.connect(pg_uri, autocommit=True) as conn:  # lose the watermark
        conn.execute(f"DELETE FROM {schema}.vault_job_watermarks")
    again = queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4)
    assert first is not None and again is not None and again.job_id == first.job_id
    assert len(queue.list(thread_id="t1")) == 1


def test_bad_arguments_raise_and_change_nothing(queue: JobQueue) -> None:
    with pytest.raises(ValueError, match="min_new"):
        queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=0)
    with pytest.raises(ValueError, match="thread_id"):
        queue.enqueue_span("extract", "", ids(4), payload_for)
    with pytest.raises(ValueError, match="lease_seconds"):
        queue.claim(["extract"], worker_id="w", lease_seconds=0)
    with pytest.raises(ValueError, match="status"):
        queue.list(status="lost")
    assert sum(queue.counts().values()) == 0


def test_delay_holds_the_job_back(queue: JobQueue) -> None:
    queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4, delay_seconds=30)
    assert queue.claim(["extract"], worker_id="w1") == []


def test_concurrent_workers_never_share_a_job(queue: JobQueue) -> None:
    for t in range(12):
        queue.enqueue_span("extract", f"t{t}", ids(4), payload_for, min_new=4)
    claimed: list[list[int]] = [[], [], []]

    def work(slot: int) -> None:
        while jobs := queue.claim(["extract"], worker_id=f"w{slot}"):
            claimed[slot].extend(j.id for j in jobs)
            time.sleep(0.01)
            assert queue.complete(jobs[0])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    every = [j for c in claimed for j in c]
    assert len(every) == 12 and len(set(every)) == 12
    assert queue.counts()["done"] == 12


def test_one_per_thread_never_runs_two_jobs_of_a_thread_at_once(queue: JobQueue) -> None:
    for t in range(3):
        for n in range(4):
            queue.enqueue("consolidate", f"c{t}:{n}", {}, thread_id=f"u{t}")
    running: dict[str, str] = {}  # thread -> worker holding one of its jobs
    overlaps: list[str] = []
    guard = threading.Lock()

    def work(slot: int) -> None:
        while jobs := queue.claim(["consolidate"], worker_id=f"w{slot}", one_per_thread=True):
            (job,) = jobs
            with guard:
                if job.thread_id in running:
                    overlaps.append(job.thread_id)
                running[job.thread_id] = f"w{slot}"
            time.sleep(0.005)
            with guard:
                del running[job.thread_id]
            assert queue.complete(job)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert overlaps == [] and queue.counts()["done"] == 12


async def test_async_one_per_thread_passes_over_a_busy_thread(aqueue: AsyncJobQueue) -> None:
    for key, thread in (("a1", "u1"), ("a2", "u1"), ("b1", "u2")):
        await aqueue.enqueue("consolidate", key, {}, thread_id=thread)
    [first] = await aqueue.claim(["consolidate"], worker_id="w1", one_per_thread=True)
    assert first.dedupe_key == "a1"
    # u1 is busy: u2's job comes next, even when asked for more, and then nothing.
    second = await aqueue.claim(["consolidate"], worker_id="w2", limit=5, one_per_thread=True)
    assert [j.dedupe_key for j in second] == ["b1"]
    assert await aqueue.claim(["consolidate"], worker_id="w2", one_per_thread=True) == []
    # Without the option the same queue hands u1's second job out at once.
    [other] = await aqueue.claim(["consolidate"], worker_id="w3", lease_seconds=0.2)
    assert other.dedupe_key == "a2"
    assert await aqueue.complete(first) and await aqueue.complete(second[0])
    # Once u1's job is done and the other lease has lapsed, its job is handed out again.
    await asyncio.sleep(0.3)
    [again] = await aqueue.claim(["consolidate"], worker_id="w1", one_per_thread=True)
    assert again.dedupe_key == "a2"


def test_lease_expiry_hands_the_job_to_another_worker(queue: JobQueue) -> None:
    queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4)
    [held] = queue.claim(["extract"], worker_id="w1", lease_seconds=0.5)
    assert queue.claim(["extract"], worker_id="w2") == []  # still leased
    time.sleep(0.7)
    [retried] = queue.claim(["extract"], worker_id="w2", lease_seconds=30)
    assert retried.id == held.id and retried.attempts == 2 and retried.worker_id == "w2"
    # The stalled first worker wakes up: every change it tries is refused.
    assert not queue.renew(held)
    assert not queue.save_result(held, {"x": 1})
    assert not queue.complete(held)
    assert queue.fail(held, "late") is None
    assert queue.complete(retried)
    done = queue.get(held.id)
    assert done is not None and done.status == "done" and done.result is None


def test_failures_are_recorded_and_retried_until_exhausted(queue: JobQueue) -> None:
    queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4, max_attempts=2)
    [job] = queue.claim(["extract"], worker_id="w1")
    assert queue.fail(job, "RuntimeError: model down", retry_in_seconds=0) == "pending"
    [job] = queue.claim(["extract"], worker_id="w1")
    assert job.attempts == 2 and job.last_error == "RuntimeError: model down"
    assert queue.fail(job, "RuntimeError: again", retry_in_seconds=0) == "failed"
    assert queue.claim(["extract"], worker_id="w1") == []
    final = queue.get(job.id)
    assert (
        final is not None and final.status == "failed" and final.last_error == "RuntimeError: again"
    )


def test_expired_lease_with_no_attempts_left_fails(queue: JobQueue) -> None:
    queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4, max_attempts=1)
    [job] = queue.claim(["extract"], worker_id="w1", lease_seconds=0.2)
    time.sleep(0.3)
    assert queue.claim(["extract"], worker_id="w2") == []
    final = queue.get(job.id)
    assert final is not None and final.status == "failed" and final.last_error == "lease expired"


def test_result_is_kept_for_the_retry(queue: JobQueue) -> None:
    queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4)
    [job] = queue.claim(["extract"], worker_id="w1", lease_seconds=0.3)
    assert queue.save_result(job, {"facts": []})
    time.sleep(0.4)
    [again] = queue.claim(["extract"], worker_id="w2")
    assert again.result == {"facts": []}


async def test_async_queue_round_trip(aqueue: AsyncJobQueue) -> None:
    assert await aqueue.enqueue_span("extract", "t1", ids(2), payload_for, min_new=4) is None
    queued = await aqueue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4)
    assert queued is not None
    assert await aqueue.enqueue_span("extract", "t1", ids(4), payload_for) is None
    [job] = await aqueue.claim(["extract"], worker_id="a1", lease_seconds=0.3)
    assert await aqueue.claim(["extract"], worker_id="a2") == []
    assert await aqueue.renew(job, 0.3)
    assert await aqueue.save_result(job, {"ok": True})
    assert await aqueue.fail(job, "boom", retry_in_seconds=0) == "pending"
    [job] = await aqueue.claim(["extract"], worker_id="a2")
    assert job.attempts == 2 and job.last_error == "boom"
    assert await aqueue.complete(job)
    assert (await aqueue.counts())["done"] == 1
    assert [j.id for j in await aqueue.list(thread_id="t1", status="done")] == [job.id]


def test_concurrent_enqueues_of_one_thread_make_one_job(queue: JobQueue) -> None:
    results: list[Any] = []
    barrier = threading.Barrier(4)

    def go() -> None:
        barrier.wait()
        results.append(queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4))

    threads = [threading.Thread(target=go) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sum(r is not None for r in results) == 1
    [job] = queue.list(thread_id="t1")
    assert job.payload["message_ids"] == ids(4)


def test_purge_keeps_live_jobs_and_watermarks(queue: JobQueue) -> None:
    for t in ("t1", "t2", "t3"):
        queue.enqueue_span("extract", t, ids(4), payload_for, min_new=4)
    first, second = queue.claim(["extract"], worker_id="w", limit=2)
    assert queue.complete(first)
    assert queue.fail(second, "boom", retry_in_seconds=0) == "pending"
    queue.purge(0)
    assert [j.thread_id for j in queue.list()] == ["t2", "t3"]
    # The purged thread's messages are still known: nothing is enqueued again.
    assert queue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=1) is None
    with pytest.raises(ValueError, match="older_than_seconds"):
        queue.purge(-1)


async def test_async_purge(aqueue: AsyncJobQueue) -> None:
    await aqueue.enqueue_span("extract", "t1", ids(4), payload_for, min_new=4)
    [job] = await aqueue.claim(["extract"], worker_id="w")
    assert await aqueue.complete(job)
    await aqueue.purge(3600)
    assert len(await aqueue.list()) == 1
    await aqueue.purge(0)
    assert await aqueue.list() == []
