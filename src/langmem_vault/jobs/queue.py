"""The durable job queue on Postgres: a sync and an async driver over the same plans.

>>> with JobQueue.from_conn_string(None) as queue:  # doctest: +SKIP
...     queue.setup()
...     jobs = queue.claim(["extract"], worker_id="w1")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langmem_vault.db.migrations import migrate_plan
from langmem_vault.db.pools import AsyncPooledComponent, PooledComponent
from langmem_vault.db.runner import Plan
from langmem_vault.extraction.payload import namespaces_payload
from langmem_vault.jobs import plans
from langmem_vault.jobs.plans import Enqueued, Job
from langmem_vault.memory.namespaces import ResolvedNamespaces

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
        )


class JobQueue(PooledComponent, _QueueBase):
    """Sync job queue on a psycopg connection or pool.

    Jobs are claimed with ``FOR UPDATE SKIP LOCKED`` under a lease; see
    :mod:`langmem_vault.jobs.plans` for the guarantees.

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
    ) -> Enqueued | None:
        """Enqueue the thread's messages not handed to a job yet (see ``enqueue_span_plan``)."""
        return self.db.run(
            self._enqueue(
                kind, thread_id, present_ids, payload_for, min_new, delay_seconds, max_attempts
            ),
            pipeline=True,
        )

    def claim(
        self,
        kinds: Sequence[str],
        *,
        worker_id: str,
        limit: int = 1,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> list[Job]:
        """Claim up to ``limit`` ready jobs for ``worker_id``."""
        return self.db.run(
            plans.claim_plan(
                self.schema,
                kinds=kinds,
                worker_id=worker_id,
                limit=limit,
                lease_seconds=lease_seconds,
            )
        )

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

    def list(self, *, thread_id: str | None = None, status: str | None = None) -> list[Job]:
        """Jobs, oldest first, optionally filtered."""
        return self.db.run(plans.list_plan(self.schema, thread_id=thread_id, status=status))

    def counts(self) -> dict[str, int]:
        """Number of jobs per status."""
        return self.db.run(plans.counts_plan(self.schema))

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
    ) -> Enqueued | None:
        """See :meth:`JobQueue.enqueue_span`."""
        return await self.db.run(
            self._enqueue(
                kind, thread_id, present_ids, payload_for, min_new, delay_seconds, max_attempts
            ),
            pipeline=True,
        )

    async def claim(
        self,
        kinds: Sequence[str],
        *,
        worker_id: str,
        limit: int = 1,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> list[Job]:
        """See :meth:`JobQueue.claim`."""
        return await self.db.run(
            plans.claim_plan(
                self.schema,
                kinds=kinds,
                worker_id=worker_id,
                limit=limit,
                lease_seconds=lease_seconds,
            )
        )

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

    async def list(self, *, thread_id: str | None = None, status: str | None = None) -> list[Job]:
        """See :meth:`JobQueue.list`."""
        return await self.db.run(plans.list_plan(self.schema, thread_id=thread_id, status=status))

    async def counts(self) -> dict[str, int]:
        """See :meth:`JobQueue.counts`."""
        return await self.db.run(plans.counts_plan(self.schema))

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


def _token(job: Job) -> str:
    if job.lease_token is None:
        raise ValueError(f"job {job.id} has no lease_token: claim it before changing it")
    return job.lease_token
