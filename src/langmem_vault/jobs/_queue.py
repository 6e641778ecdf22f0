"""The durable job queue on Postgres: a sync and an async driver over the same plans.

>>> with JobQueue.from_conn_string(None) as queue:  # doctest: +SKIP
...     queue.setup()
...     jobs = queue.claim(["extract"], worker_id="w1")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langmem_vault.db._migrations import migrate_plan
from langmem_vault.db._pools import AsyncPooledComponent, PooledComponent
from langmem_vault.db._runner import Plan
from langmem_vault.extraction._payload import namespaces_payload
from langmem_vault.jobs import _dead_letter as dead_letter
from langmem_vault.jobs import _plans as plans
from langmem_vault.jobs._dead_letter import RETRY_ATTEMPTS, FailedJobs, Retried
from langmem_vault.jobs._plans import Enqueued, Job
from langmem_vault.memory._namespaces import ResolvedNamespaces

JOBS_TRACK = "jobs"
DEFAULT_LEASE_SECONDS = 60.0


class _QueueBase:
    """Arguments shared by both drivers; holds no connection logic."""

    schema: str

    def _enqueue(
        self,
        kind: str,
        thread_id: str,
        present_ids: Sequence[str],
        payload_for: Callable[[list[str]], dict[str, Any]],
        min_new: int,
        delay_seconds: float,
        max_attempts: int,
        idle_seconds: float | None,
    ) -> Plan[Enqueued | None]:
        return plans.enqueue_span_plan(
            self.schema,
            kind=kind,
            thread_id=thread_id,
            present_ids=present_ids,
            min_new=min_new,
            payload_for=payload_for,
            delay_seconds=delay_seconds,
            max_attempts=max_attempts,
            idle_seconds=idle_seconds,
        )

    def _claim(
        self,
        kinds: Sequence[str],
        worker_id: str,
        limit: int,
        lease_seconds: float,
        one_per_thread: bool,
    ) -> Plan[list[Job]]:
        return plans.claim_plan(
            self.schema,
            kinds=kinds,
            worker_id=worker_id,
            limit=limit,
            lease_seconds=lease_seconds,
            one_per_thread=one_per_thread,
        )

    def _promote(self, kind: str, thread_id: str, ns: ResolvedNamespaces) -> Plan[list[int]]:
        return plans.promote_tails_plan(
            self.schema, kind=kind, thread_id=thread_id, semantic=ns.semantic
        )

    def _failed(self, namespaces: ResolvedNamespaces | None, limit: int) -> Plan[FailedJobs]:
        return dead_letter.failed_plan(self.schema, semantic=_semantic(namespaces), limit=limit)

    def _retry(
        self,
        job_ids: Sequence[int] | None,
        namespaces: ResolvedNamespaces | None,
        attempts: int,
    ) -> Plan[Retried]:
        return dead_letter.retry_plan(
            self.schema, job_ids=job_ids, semantic=_semantic(namespaces), attempts=attempts
        )


class JobQueue(PooledComponent, _QueueBase):
    """Sync job queue on a psycopg connection or pool.

    Jobs are claimed with ``FOR UPDATE SKIP LOCKED`` under a lease; see
    :mod:`langmem_vault.jobs._plans` for the guarantees.

    >>> queue = JobQueue(open_pool())  # doctest: +SKIP
    >>> queue.setup()                                   # doctest: +SKIP
    """

    def setup(self) -> None:
        """Create or migrate the job tables (idempotent, safe to run concurrently)."""
        self.db.run(migrate_plan(self.schema, JOBS_TRACK))

    def enqueue_span(
        self,
        kind: str,
        thread_id: str,
        present_ids: Sequence[str],
        payload_for: Callable[[list[str]], dict[str, Any]],
        *,
        min_new: int = 1,
        delay_seconds: float = 0.0,
        max_attempts: int = 5,
        idle_seconds: float | None = None,
    ) -> Enqueued | None:
        """Enqueue the thread's messages not handed to a job yet (see ``enqueue_span_plan``;
        ``idle_seconds`` enqueues a short tail too, to run once the thread has been idle)."""
        return self.db.run(
            self._enqueue(
                kind,
                thread_id,
                present_ids,
                payload_for,
                min_new,
                delay_seconds,
                max_attempts,
                idle_seconds,
            )
        )

    def enqueue(
        self,
        kind: str,
        dedupe_key: str,
        payload: dict[str, Any],
        *,
        thread_id: str,
        delay_seconds: float = 0.0,
        max_attempts: int = 5,
    ) -> tuple[int, bool]:
        """Enqueue one job unless one with ``dedupe_key`` exists; returns ``(id, created)``."""
        return self.db.run(
            plans.enqueue_keyed_plan(
                self.schema,
                **_keyed(kind, dedupe_key, payload, thread_id, delay_seconds, max_attempts),
            )
        )

    def claim(
        self,
        kinds: Sequence[str],
        *,
        worker_id: str,
        limit: int = 1,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        one_per_thread: bool = False,
    ) -> list[Job]:
        """Claim up to ``limit`` ready jobs for ``worker_id``; with ``one_per_thread``, none
        whose thread has a job of its kind running on a live lease."""
        plan = self._claim(kinds, worker_id, limit, lease_seconds, one_per_thread)
        return self.db.run(plan)

    def renew(self, job: Job, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> bool:
        """Extend the lease; ``False`` means another worker owns the job now."""
        return self.db.run(plans.renew_plan(self.schema, job.id, _token(job), lease_seconds))

    def save_result(self, job: Job, result: dict[str, Any]) -> bool:
        """Store the job's intermediate result; ``False`` when the lease was lost."""
        return self.db.run(plans.save_result_plan(self.schema, job.id, _token(job), result))

    def complete(self, job: Job) -> bool:
        """Mark the job done; ``False`` when the lease was lost."""
        return self.db.run(plans.complete_plan(self.schema, job.id, _token(job)))

    def fail(self, job: Job, error: str, *, retry_in_seconds: float = 5.0) -> str | None:
        """Record a failed attempt; returns ``"pending"``, ``"failed"`` or ``None`` (lost)."""
        return self.db.run(
            plans.fail_plan(self.schema, job.id, _token(job), error, retry_in_seconds)
        )

    def get(self, job_id: int) -> Job | None:
        """One job by id, or ``None``."""
        return self.db.run(plans.get_plan(self.schema, job_id))

    def promote_tails(self, kind: str, thread_id: str, namespaces: ResolvedNamespaces) -> list[int]:
        """Make the user's idle tails (of threads other than ``thread_id``) ready now; returns
        their job ids. Called when the user starts a new thread."""
        return self.db.run(self._promote(kind, thread_id, namespaces))

    def statuses(self, job_ids: Sequence[int]) -> dict[int, str]:
        """The status of each job id (purged jobs are missing)."""
        return self.db.run(plans.statuses_plan(self.schema, job_ids))

    def list(self, *, thread_id: str | None = None, status: str | None = None) -> list[Job]:
        """Jobs, oldest first, optionally filtered."""
        return self.db.run(plans.list_plan(self.schema, thread_id=thread_id, status=status))

    def counts(self) -> dict[str, int]:
        """Number of jobs per status."""
        return self.db.run(plans.counts_plan(self.schema))

    def failed(
        self, *, namespaces: ResolvedNamespaces | None = None, limit: int = 100
    ) -> FailedJobs:
        """The dead-letter list: jobs that used all their attempts, newest failure first
        (of the user whose ``namespaces`` they write into; everyone's when None).

        >>> queue.failed(limit=10).total  # doctest: +SKIP
        1
        """
        return self.db.run(self._failed(namespaces, limit))

    def retry(
        self,
        job_ids: Sequence[int] | None = None,
        *,
        namespaces: ResolvedNamespaces | None = None,
        attempts: int = RETRY_ATTEMPTS,
    ) -> Retried:
        """Put failed jobs (``job_ids``, or every failed one of the scope) back to pending
        with ``attempts`` more attempts; jobs not failed are left alone and reported. Raises
        :class:`~langmem_vault.jobs._dead_letter.UnknownJobs` (nothing retried) when an id is
        not a job of the scope.

        >>> queue.retry([7]).retried  # doctest: +SKIP
        (7,)
        """
        return self.db.run(self._retry(job_ids, namespaces, attempts))

    def purge(self, older_than_seconds: float, *, include_failed: bool = False) -> None:
        """Delete done (and optionally failed) jobs finished more than this long ago."""
        self.db.run(
            plans.purge_plan(self.schema, older_than_seconds, include_failed=include_failed)
        )

    def delete_user_jobs(
        self, thread_ids: Sequence[str], namespaces: ResolvedNamespaces
    ) -> tuple[int, int]:
        """Delete a user's extraction jobs (of ``thread_ids``, or writing into ``namespaces``)
        and those threads' watermarks; returns ``(jobs, watermarks)`` deleted.

        >>> queue.delete_user_jobs(["t1"], ns)  # doctest: +SKIP
        (1, 1)
        """
        return self.db.run(
            plans.delete_user_jobs_plan(self.schema, thread_ids, namespaces_payload(namespaces))
        )


class AsyncJobQueue(AsyncPooledComponent, _QueueBase):
    """Async twin of :class:`JobQueue`.

    >>> async with AsyncJobQueue.from_conn_string(None) as queue:  # doctest: +SKIP
    ...     await queue.setup()
    """

    async def setup(self) -> None:
        """Create or migrate the job tables."""
        await self.db.run(migrate_plan(self.schema, JOBS_TRACK))

    async def enqueue_span(
        self,
        kind: str,
        thread_id: str,
        present_ids: Sequence[str],
        payload_for: Callable[[list[str]], dict[str, Any]],
        *,
        min_new: int = 1,
        delay_seconds: float = 0.0,
        max_attempts: int = 5,
        idle_seconds: float | None = None,
    ) -> Enqueued | None:
        """See :meth:`JobQueue.enqueue_span`."""
        return await self.db.run(
            self._enqueue(
                kind,
                thread_id,
                present_ids,
                payload_for,
                min_new,
                delay_seconds,
                max_attempts,
                idle_seconds,
            )
        )

    async def enqueue(
        self,
        kind: str,
        dedupe_key: str,
        payload: dict[str, Any],
        *,
        thread_id: str,
        delay_seconds: float = 0.0,
        max_attempts: int = 5,
    ) -> tuple[int, bool]:
        """See :meth:`JobQueue.enqueue`."""
        return await self.db.run(
            plans.enqueue_keyed_plan(
                self.schema,
                **_keyed(kind, dedupe_key, payload, thread_id, delay_seconds, max_attempts),
            )
        )

    async def claim(
        self,
        kinds: Sequence[str],
        *,
        worker_id: str,
        limit: int = 1,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        one_per_thread: bool = False,
    ) -> list[Job]:
        """See :meth:`JobQueue.claim`."""
        plan = self._claim(kinds, worker_id, limit, lease_seconds, one_per_thread)
        return await self.db.run(plan)

    async def renew(self, job: Job, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> bool:
        """See :meth:`JobQueue.renew`."""
        return await self.db.run(plans.renew_plan(self.schema, job.id, _token(job), lease_seconds))

    async def save_result(self, job: Job, result: dict[str, Any]) -> bool:
        """See :meth:`JobQueue.save_result`."""
        return await self.db.run(plans.save_result_plan(self.schema, job.id, _token(job), result))

    async def complete(self, job: Job) -> bool:
        """See :meth:`JobQueue.complete`."""
        return await self.db.run(plans.complete_plan(self.schema, job.id, _token(job)))

    async def fail(self, job: Job, error: str, *, retry_in_seconds: float = 5.0) -> str | None:
        """See :meth:`JobQueue.fail`."""
        return await self.db.run(
            plans.fail_plan(self.schema, job.id, _token(job), error, retry_in_seconds)
        )

    async def get(self, job_id: int) -> Job | None:
        """See :meth:`JobQueue.get`."""
        return await self.db.run(plans.get_plan(self.schema, job_id))

    async def promote_tails(
        self, kind: str, thread_id: str, namespaces: ResolvedNamespaces
    ) -> list[int]:
        """See :meth:`JobQueue.promote_tails`."""
        return await self.db.run(self._promote(kind, thread_id, namespaces))

    async def statuses(self, job_ids: Sequence[int]) -> dict[int, str]:
        """See :meth:`JobQueue.statuses`."""
        return await self.db.run(plans.statuses_plan(self.schema, job_ids))

    async def list(self, *, thread_id: str | None = None, status: str | None = None) -> list[Job]:
        """See :meth:`JobQueue.list`."""
        return await self.db.run(plans.list_plan(self.schema, thread_id=thread_id, status=status))

    async def counts(self) -> dict[str, int]:
        """See :meth:`JobQueue.counts`."""
        return await self.db.run(plans.counts_plan(self.schema))

    async def failed(
        self, *, namespaces: ResolvedNamespaces | None = None, limit: int = 100
    ) -> FailedJobs:
        """See :meth:`JobQueue.failed`."""
        return await self.db.run(self._failed(namespaces, limit))

    async def retry(
        self,
        job_ids: Sequence[int] | None = None,
        *,
        namespaces: ResolvedNamespaces | None = None,
        attempts: int = RETRY_ATTEMPTS,
    ) -> Retried:
        """See :meth:`JobQueue.retry`."""
        return await self.db.run(self._retry(job_ids, namespaces, attempts))

    async def purge(self, older_than_seconds: float, *, include_failed: bool = False) -> None:
        """See :meth:`JobQueue.purge`."""
        await self.db.run(
            plans.purge_plan(self.schema, older_than_seconds, include_failed=include_failed)
        )

    async def delete_user_jobs(
        self, thread_ids: Sequence[str], namespaces: ResolvedNamespaces
    ) -> tuple[int, int]:
        """See :meth:`JobQueue.delete_user_jobs`."""
        return await self.db.run(
            plans.delete_user_jobs_plan(self.schema, thread_ids, namespaces_payload(namespaces))
        )


def _keyed(
    kind: str,
    dedupe_key: str,
    payload: dict[str, Any],
    thread_id: str,
    delay_seconds: float,
    max_attempts: int,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "dedupe_key": dedupe_key,
        "thread_id": thread_id,
        "payload": payload,
        "delay_seconds": delay_seconds,
        "max_attempts": max_attempts,
    }


def _semantic(namespaces: ResolvedNamespaces | None) -> tuple[str, ...] | None:
    return namespaces.semantic if namespaces is not None else None


def _token(job: Job) -> str:
    if job.lease_token is None:
        raise ValueError(f"job {job.id} has no lease_token: claim it before changing it")
    return job.lease_token
