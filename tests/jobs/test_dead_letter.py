"""The dead-letter list on a real Postgres: a job that fails every attempt is listed (scoped
per user), a retry puts it back with fresh attempts (idempotent, its last error kept), and a
working worker then learns its facts. Sync and async drivers."""

from __future__ import annotations

from typing import Any

import pytest

from langmem_vault.extraction._payload import EXTRACT_JOB, payload_builder
from langmem_vault.jobs import AsyncJobQueue, ExtractionWorker, JobQueue
from langmem_vault.jobs._dead_letter import UnknownJobs
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.jobs.test_extraction_worker import lives_in, turn
from tests.support.models import ScriptedModel

ERROR = "RuntimeError: model is down"


def ns(user: str) -> ResolvedNamespaces:
    return MemoryNamespaces().resolve({"configurable": {"user_id": user}})


def span(user: str, thread: str, city: str) -> tuple[Any, ...]:
    messages = turn(city)
    ids = [str(m.id) for m in messages]
    return EXTRACT_JOB, thread, ids, payload_builder(messages, ns(user))


def broken() -> ScriptedModel:
    return ScriptedModel(default=RuntimeError("model is down"))


def facts(store: Any, user: str) -> list[str]:
    return sorted(i.value["text"] for i in store.search(ns(user).semantic, limit=100))


def test_failed_jobs_are_listed_retried_once_and_learned(
    env: tuple[VaultStore, JobQueue],
) -> None:
    store, queue = env
    mine = queue.enqueue_span(*span("ana", "t-ana", "Oslo"), max_attempts=2)
    theirs = queue.enqueue_span(*span("bob", "t-bob", "Lima"), max_attempts=2)
    assert mine is not None and theirs is not None
    assert ExtractionWorker(queue, store, broken(), retry_in_seconds=0).run_pending() == 0

    listed = queue.failed()
    assert listed.total == 2 and {j.id for j in listed.jobs} == {mine.job_id, theirs.job_id}
    [job] = queue.failed(namespaces=ns("ana")).jobs
    assert (job.id, job.thread_id, job.attempts, job.max_attempts) == (mine.job_id, "t-ana", 2, 2)
    assert job.last_error == ERROR and job.semantic == ns("ana").semantic
    assert job.failed_at is not None

    # Another user's job, or an id that does not exist: nothing is retried at all.
    with pytest.raises(UnknownJobs, match=str(theirs.job_id)):
        queue.retry([mine.job_id, theirs.job_id], namespaces=ns("ana"))
    with pytest.raises(UnknownJobs, match="999999"):
        queue.retry([mine.job_id, 999999])
    assert queue.counts()["failed"] == 2

    done = queue.retry([mine.job_id], namespaces=ns("ana"))
    assert done.retried == (mine.job_id,) and done.unchanged == {}
    again = queue.get(mine.job_id)
    assert again is not None and again.status == "pending"
    assert (again.attempts, again.max_attempts, again.last_error) == (2, 5, ERROR)
    assert queue.failed(namespaces=ns("ana")).total == 0
    # Idempotent: a second retry changes nothing and says why.
    repeat = queue.retry([mine.job_id])
    assert repeat.retried == () and repeat.unchanged == {mine.job_id: "pending"}

    assert ExtractionWorker(queue, store, ScriptedModel(default=lives_in)).run_pending() == 1
    assert queue.statuses([mine.job_id, theirs.job_id]) == {
        mine.job_id: "done",
        theirs.job_id: "failed",
    }
    assert facts(store, "ana") == ["User lives in Oslo"] and facts(store, "bob") == []
    assert queue.retry([mine.job_id]).unchanged == {mine.job_id: "done"}
    # Every failed job of one user.
    assert queue.retry(namespaces=ns("bob")).retried == (theirs.job_id,)


def test_a_retried_job_that_fails_again_returns_to_the_list(
    env: tuple[VaultStore, JobQueue],
) -> None:
    store, queue = env
    job = queue.enqueue_span(*span("ana", "t1", "Kyiv"), max_attempts=1)
    assert job is not None
    worker = ExtractionWorker(queue, store, broken(), retry_in_seconds=0)
    worker.run_pending()
    assert queue.retry(attempts=2).retried == (job.job_id,)
    worker.run_pending()
    [failed] = queue.failed().jobs
    assert (failed.id, failed.attempts, failed.max_attempts) == (job.job_id, 3, 3)
    with pytest.raises(ValueError, match="attempts"):
        queue.retry(attempts=0)
    with pytest.raises(ValueError, match="limit"):
        queue.failed(limit=0)


async def test_async_queue_lists_and_retries(
    aenv: tuple[AsyncVaultStore, AsyncJobQueue],
) -> None:
    store, queue = aenv
    job = await queue.enqueue_span(*span("ana", "t1", "Lima"), max_attempts=2)
    assert job is not None
    await ExtractionWorker(queue, store, broken(), retry_in_seconds=0).arun_pending()
    listed = await queue.failed(namespaces=ns("ana"))
    assert [(j.id, j.last_error) for j in listed.jobs] == [(job.job_id, ERROR)]
    assert (await queue.failed(namespaces=ns("bob"))).total == 0
    with pytest.raises(UnknownJobs):
        await queue.retry([job.job_id], namespaces=ns("bob"))
    assert (await queue.retry()).retried == (job.job_id,)
    assert (await queue.retry([job.job_id])).unchanged == {job.job_id: "pending"}
    worker = ExtractionWorker(queue, store, ScriptedModel(default=lives_in))
    assert await worker.arun_pending() == 1
    found = await store.asearch(ns("ana").semantic, limit=10)
    assert [i.value["text"] for i in found] == ["User lives in Lima"]
