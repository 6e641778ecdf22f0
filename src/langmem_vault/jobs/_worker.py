"""The extraction worker: claims extract jobs, runs the one extraction call, reconciles.

Durability, step by step:

1. claim (``FOR UPDATE SKIP LOCKED``, leased): two workers never hold the same job;
2. extract, then save the result on the job under the lease: a crash after this point does not
   pay for the LLM call again;
3. renew the lease, then reconcile: a worker that stalled past its lease finds it lost and stops
   before writing, so the job's new owner is the only writer;
4. complete under the lease. A crash anywhere before leaves the job leased; when the lease
   expires another worker retries it. Errors are recorded (``attempts``, ``last_error``) and
   retried with backoff until ``max_attempts``.

>>> worker = ExtractionWorker(queue, store, "openai:gpt-4o-mini")  # doctest: +SKIP
>>> worker.run_pending()                                           # doctest: +SKIP
1
>>> worker.start()   # or poll in a daemon thread                  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import uuid
from typing import Any

from langgraph.store.base import BaseStore
from psycopg_pool import PoolClosed

from langmem_vault.db._steps import Call, Steps, arun_steps, run_steps
from langmem_vault.extraction._apply import aapply, apply
from langmem_vault.extraction._payload import (
    EXTRACT_JOB,
    messages_from_payload,
    namespaces_from_payload,
)
from langmem_vault.extraction._protocol import as_extractor
from langmem_vault.extraction._span import aextract_span, extract_span
from langmem_vault.jobs._lease import Leased
from langmem_vault.jobs._plans import Job
from langmem_vault.jobs._queue import DEFAULT_LEASE_SECONDS, AsyncJobQueue, JobQueue
from langmem_vault.memory._models import Extraction
from langmem_vault.memory._recall.accounting import aobserve, observe
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy

logger = logging.getLogger("langmem_vault.jobs")
DEFAULT_MAX_EXTRACT_SECONDS = 300.0


class LeaseLost(RuntimeError):
    """Another worker took the job over (this worker's lease expired)."""


class ExtractionWorker:
    """Runs extract jobs from a :class:`JobQueue` (sync) or :class:`AsyncJobQueue` (async).

    ``run_pending()`` / ``await arun_pending()`` process what is ready and return how many jobs
    finished; ``start()`` / ``astart()`` poll in a daemon thread / an asyncio task.

    >>> worker = ExtractionWorker(queue, store, model, lease_seconds=30)  # doctest: +SKIP
    >>> worker.run_pending()                                              # doctest: +SKIP
    """

    def __init__(
        self,
        queue: JobQueue | AsyncJobQueue,
        store: BaseStore,
        model: Any,
        /,
        *,
        worker_id: str | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        poll_interval: float = 1.0,
        retry_in_seconds: float = 5.0,
        similar_limit: int = 8,
        redaction: RedactionPolicy | None = DEFAULT_POLICY,
        max_extract_seconds: float = DEFAULT_MAX_EXTRACT_SECONDS,
    ) -> None:
        if lease_seconds <= 0 or poll_interval <= 0 or retry_in_seconds < 0:
            raise ValueError(
                "lease_seconds and poll_interval must be > 0 and retry_in_seconds >= 0; got "
                f"{lease_seconds!r}, {poll_interval!r}, {retry_in_seconds!r}"
            )
        self.queue = queue
        self.store = store
        self.extractor = as_extractor(model)
        self.worker_id = worker_id or f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.lease_seconds = lease_seconds
        self.poll_interval = poll_interval
        self.retry_in_seconds = retry_in_seconds
        self.similar_limit = similar_limit
        self.redaction = redaction  # PII policy for proposals; None turns redaction off
        # The lease is renewed during the model call up to this long: a slow model keeps its
        # job, a hung one loses it to another worker.
        self.max_extract_seconds = max_extract_seconds
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._awake: asyncio.Event | None = None

    def _job_steps(self, job: Job, queue: JobQueue | AsyncJobQueue) -> Steps[None]:
        """One claimed job: extract (unless a saved result exists) under a heartbeat, save the
        result, renew, reconcile, complete. The sync and async workers run these steps."""
        ns = namespaces_from_payload(job.payload)
        if job.result is not None:
            extraction = Extraction.model_validate(job.result)
        else:
            messages = messages_from_payload(job.payload)
            kwargs: dict[str, Any] = {
                "namespaces": ns,
                "thread_id": job.thread_id,
                "similar_limit": self.similar_limit,
                "redaction": self.redaction,
            }
            extract = Call(
                lambda: extract_span(self.store, self.extractor, messages, **kwargs),
                lambda: aextract_span(self.store, self.extractor, messages, **kwargs),
            )
            checked = yield Leased(
                extract,
                queue,
                job,
                lease_seconds=self.lease_seconds,
                max_seconds=self.max_extract_seconds,
            )
            extraction = checked.extraction
            result = extraction.model_dump(mode="json")
            if not (yield Call.same(lambda: queue.save_result(job, result))):
                raise LeaseLost(f"job {job.id}: lease lost during extraction")
        if not (yield Call.same(lambda: queue.renew(job, self.lease_seconds))):
            raise LeaseLost(f"job {job.id}: lease lost before reconcile")
        yield Call(
            lambda: apply(self.store, extraction, ns), lambda: aapply(self.store, extraction, ns)
        )
        if not (yield Call.same(lambda: queue.complete(job))):
            logger.warning("job %s: lease lost after reconcile; another worker owns it", job.id)

    # -- sync --

    def _sync_queue(self) -> JobQueue:
        if not isinstance(self.queue, JobQueue):
            raise TypeError("run_pending()/start() need a JobQueue; use arun_pending()/astart()")
        return self.queue

    def run_job(self, job: Job) -> None:
        """Extract (unless a saved result exists), reconcile and complete one claimed job
        (traced and accounted to the job's user: ``memory._recall.accounting``)."""
        with observe("extract", self.store, job.payload.get("user_id")):
            self._run_job(job)

    def _run_job(self, job: Job) -> None:
        run_steps(self._job_steps(job, self._sync_queue()))

    def run_pending(self, limit: int | None = None) -> int:
        """Claim and run ready jobs one by one until none is ready or ``limit`` were claimed.

        Returns how many finished; a failed attempt is recorded on the job and retried later.
        """
        queue = self._sync_queue()
        finished = claimed = 0
        while limit is None or claimed < limit:
            jobs = queue.claim(
                [EXTRACT_JOB], worker_id=self.worker_id, lease_seconds=self.lease_seconds
            )
            if not jobs:
                break
            job, claimed = jobs[0], claimed + 1
            try:
                self.run_job(job)
                finished += 1
            except LeaseLost as exc:
                logger.warning("%s", exc)
            except Exception as exc:
                status = queue.fail(job, _describe(exc), retry_in_seconds=self.retry_in_seconds)
                logger.warning("job %s failed (%s, now %s)", job.id, _describe(exc), status)
        return finished

    def start(self) -> threading.Thread:
        """Poll in a daemon thread until :meth:`stop`."""
        self._sync_queue()
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._loop, name=f"extract-{self.worker_id}", daemon=True
            )
            self._thread.start()
        return self._thread

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_pending()
            except PoolClosed:  # the app shut its pool: nothing to poll any more
                logger.info("extraction worker %s: pool closed, stopping", self.worker_id)
                return
            except Exception:  # the database may be restarting: log, wait, poll again
                logger.exception("extraction worker %s: poll failed", self.worker_id)
            self._wake.wait(self.poll_interval)
            self._wake.clear()

    def wake(self) -> None:
        """Poll now instead of at the next interval (a job was just enqueued)."""
        self._wake.set()
        if self._awake is not None and self._task is not None:
            self._task.get_loop().call_soon_threadsafe(self._awake.set)

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the polling thread after its current job."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def close(self) -> None:
        """Stop polling: the thread (:meth:`stop`) and, on its loop, the task (:meth:`astop`).

        >>> with ExtractionWorker(queue, store, model) as worker:  # doctest: +SKIP
        ...     worker.start()
        """
        self.stop()
        task = self._task
        if task is not None and not task.done() and not task.get_loop().is_closed():
            task.get_loop().call_soon_threadsafe(task.cancel)
        self._task = None

    def __enter__(self) -> ExtractionWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ExtractionWorker:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop()
        await self.astop()

    # -- async --

    def _async_queue(self) -> AsyncJobQueue:
        if not isinstance(self.queue, AsyncJobQueue):
            raise TypeError("arun_pending()/astart() need an AsyncJobQueue; use run_pending()")
        return self.queue

    async def arun_job(self, job: Job) -> None:
        """Async twin of :meth:`run_job`."""
        async with aobserve("extract", self.store, job.payload.get("user_id")):
            await self._arun_job(job)

    async def _arun_job(self, job: Job) -> None:
        await arun_steps(self._job_steps(job, self._async_queue()))

    async def arun_pending(self, limit: int | None = None) -> int:
        """Async twin of :meth:`run_pending`."""
        queue = self._async_queue()
        finished = claimed = 0
        while limit is None or claimed < limit:
            jobs = await queue.claim(
                [EXTRACT_JOB], worker_id=self.worker_id, lease_seconds=self.lease_seconds
            )
            if not jobs:
                break
            job, claimed = jobs[0], claimed + 1
            try:
                await self.arun_job(job)
                finished += 1
            except LeaseLost as exc:
                logger.warning("%s", exc)
            except Exception as exc:
                status = await queue.fail(
                    job, _describe(exc), retry_in_seconds=self.retry_in_seconds
                )
                logger.warning("job %s failed (%s, now %s)", job.id, _describe(exc), status)
        return finished

    def astart(self) -> asyncio.Task[None]:
        """Poll in an asyncio task on the running loop until :meth:`astop`."""
        self._async_queue()
        if self._task is None or self._task.done():
            self._awake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(
                self._aloop(), name=f"extract-{self.worker_id}"
            )
        return self._task

    def task_alive(self) -> bool:
        """Whether the polling task runs on a live loop."""
        return (
            self._task is not None
            and not self._task.done()
            and not self._task.get_loop().is_closed()
        )

    async def _aloop(self) -> None:
        assert self._awake is not None
        while True:
            try:
                await self.arun_pending()
            except asyncio.CancelledError:
                raise
            except PoolClosed:
                logger.info("extraction worker %s: pool closed, stopping", self.worker_id)
                return
            except Exception:
                logger.exception("extraction worker %s: poll failed", self.worker_id)
            # asyncio.timeout, not wait_for: on 3.11 wait_for returns when its inner wait
            # finishes in the same step as a cancel, swallowing astop's cancel (CPython
            # gh-86296), and the loop then polled on forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_interval):
                    await self._awake.wait()
            self._awake.clear()

    async def astop(self) -> None:
        """Cancel the polling task (a job it was running is retried after its lease)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
