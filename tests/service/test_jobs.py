"""The dead-letter list through the service, sync and async: listed with each job's user,
scoped (a user sees and retries only their own jobs, an admin everyone's), retried once
(idempotent, audited), bad input named."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.jobs import AsyncJobQueue, JobQueue
from langmem_vault.service import Forbidden, Identity, InvalidInput, MemoryService, NotFound
from tests.service.conftest import Driver
from tests.support.jobs import ERROR, failed_job


@pytest.fixture
def queue(pg_uri: str, schema: str) -> Iterator[JobQueue]:
    with open_pool(pg_uri, max_size=2) as pool:
        jobs = JobQueue(pool, schema=schema)
        jobs.setup()
        yield jobs


@pytest.fixture
async def with_jobs(
    drive: Driver, queue: JobQueue, pg_uri: str, schema: str
) -> AsyncIterator[Driver]:
    """The driver's service with a job queue of its own mode."""
    if drive.mode == "sync":
        drive.service.jobs = queue
        yield drive
        return
    async with await aopen_pool(pg_uri, max_size=2) as pool:
        drive.service.jobs = AsyncJobQueue(pool, schema=schema)
        yield drive


async def test_failed_jobs_are_listed_and_retried_per_user(
    with_jobs: Driver, queue: JobQueue
) -> None:
    drive = with_jobs
    ana, bob = failed_job(queue, "ana.g", "Oslo"), failed_job(queue, "bob", "Lima")
    admin = await drive("failed_jobs")
    assert admin.total == 2
    assert {(j.id, j.user_id, j.last_error) for j in admin.jobs} == {
        (ana, "ana.g", ERROR),
        (bob, "bob", ERROR),
    }
    [job] = (await drive("failed_jobs", "ana.g")).jobs
    assert (job.id, job.kind, job.attempts, job.max_attempts) == (ana, "extract", 1, 1)
    assert job.failed_at is not None and job.thread_id == "t-ana.g-Oslo"

    user = Driver(drive.service.acting_as(Identity.for_user("ana.g")), drive.mode)
    assert [j.id for j in (await user("failed_jobs", "ana.g")).jobs] == [ana]
    for forbidden in (user("failed_jobs"), user("failed_jobs", "bob"), user("retry_jobs")):
        with pytest.raises(Forbidden):
            await forbidden
    with pytest.raises(NotFound) as hidden:  # bob's job is not found, not shown
        await user("retry_jobs", [bob], user_id="ana.g")
    assert hidden.value.field == "job_id" and str(bob) in hidden.value.message
    assert queue.statuses([bob]) == {bob: "failed"}

    done = await user("retry_jobs", [ana], user_id="ana.g")
    assert done.retried == [ana] and done.unchanged == []
    assert queue.statuses([ana]) == {ana: "pending"}
    [kept] = [j for j in queue.list() if j.id == ana]
    assert kept.last_error == ERROR
    again = await user("retry_jobs", [ana], user_id="ana.g")
    assert again.retried == [] and [(s.id, s.status) for s in again.unchanged] == [(ana, "pending")]
    [event] = [e for e in await drive.events("ana.g") if e.action == "retry"]
    assert event.detail == {"job_ids": [ana]} and event.actor == "ana.g"

    assert (await drive("retry_jobs")).retried == [bob]  # the admin, everyone's
    assert (await drive("failed_jobs")).total == 0


async def test_bad_input_is_named(with_jobs: Driver, queue: JobQueue) -> None:
    drive = with_jobs
    with pytest.raises(InvalidInput) as empty:
        await drive("retry_jobs", [])
    assert empty.value.field == "job_ids"
    with pytest.raises(NotFound) as unknown:
        await drive("retry_jobs", [424242])
    assert unknown.value.field == "job_id"
    with pytest.raises(InvalidInput) as limit:
        await drive("failed_jobs", limit=0)
    assert limit.value.field == "limit"
    with pytest.raises(InvalidInput) as blank:
        await drive("failed_jobs", " ")
    assert blank.value.field == "user_id"
    no_queue = MemoryService(drive.store)
    with pytest.raises(InvalidInput) as missing:
        no_queue.failed_jobs()
    assert missing.value.field == "jobs"
