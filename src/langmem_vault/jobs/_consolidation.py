"""Consolidation on the durable queue: hourly per user by default, or triggered by hand.

:meth:`ConsolidationWorker.schedule` enqueues a user's run for the next slot of
``interval_seconds`` (one job per user and slot: scheduling twice keeps one). A finished
scheduled run enqueues the next slot, so a user's cycle keeps going; erasing the user deletes
the pending job (its payload names the user's namespaces). :meth:`~ConsolidationWorker.trigger`
enqueues a run now. Each run is
:func:`~langmem_vault.memory._lifecycle.consolidation.consolidation_plan` (idempotent), and each
change it made goes to the audit log when one is given.

>>> worker = ConsolidationWorker(queue, store, model)   # doctest: +SKIP
>>> worker.schedule("u1")                               # doctest: +SKIP
>>> worker.run_pending()                                # doctest: +SKIP
1
"""

from __future__ import annotations

import inspect
import logging
import os
import time
import uuid
from typing import Any

from langgraph.store.base import BaseStore

from langmem_vault.db._steps import Call, Steps, Within, arun_steps, run_steps
from langmem_vault.extraction._payload import namespaces_from_payload, namespaces_payload
from langmem_vault.jobs._lease import Leased
from langmem_vault.jobs._plans import Job
from langmem_vault.jobs._queue import DEFAULT_LEASE_SECONDS, AsyncJobQueue, JobQueue
from langmem_vault.memory._lifecycle.consolidation import (
    ConsolidationPolicy,
    ConsolidationReport,
    consolidation_plan,
)
from langmem_vault.memory._lifecycle.consolidation_judge import (
    ClusterJudge,
    ModelJudge,
    OfflineJudge,
)
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces
from langmem_vault.memory._recall.accounting import aobserve, observe
from langmem_vault.privacy._audit.log import AuditAction, AuditEvent

__all__ = ["CONSOLIDATE_JOB", "ConsolidationWorker", "audit_events"]

logger = logging.getLogger("langmem_vault.jobs")

CONSOLIDATE_JOB = "consolidate"
DEFAULT_INTERVAL_SECONDS = 3600.0
DEFAULT_MAX_RUN_SECONDS = 900.0
_ACTIONS = {"summary": AuditAction.CREATE}


def audit_events(
    user_id: str, ns: ResolvedNamespaces, report: ConsolidationReport, component: str
) -> list[AuditEvent]:
    """One audit event per change of a run (the change kind in ``detail``, never text)."""
    return [
        AuditEvent(
            user_id,
            _ACTIONS.get(change, AuditAction.EDIT),
            component,
            memory_key=key,
            namespace=ns.episodes if change == "promote_episode" else ns.semantic,
            detail={"consolidation": change, **detail},
        )
        for change, key, detail in report.changes()
    ]


def _judge(model: Any) -> ClusterJudge:
    if model is None:
        return OfflineJudge()
    if isinstance(model, ClusterJudge):
        return model
    if isinstance(model, str):
        from langmem_vault.extraction._protocol import load_model

        model = load_model(model)
    return ModelJudge(model)


class ConsolidationWorker:
    """Runs consolidate jobs from a :class:`JobQueue` (sync) or :class:`AsyncJobQueue` (async).

    ``model`` is a chat model (one call per cluster, offline rules when it fails), an
    ``init_chat_model`` string, a
    :class:`~langmem_vault.memory._lifecycle.consolidation_judge.ClusterJudge`, or None for the
    offline rules. ``audit`` is an ``AuditLog``/``AsyncAuditLog`` (or buffer).
    A run renews its job's lease (every third of ``lease_seconds``) for up to
    ``max_run_seconds``: a slow judge keeps the job, a hung one loses it.
    """

    def __init__(
        self,
        queue: JobQueue | AsyncJobQueue,
        store: BaseStore,
        model: Any = None,
        /,
        *,
        namespaces: MemoryNamespaces | None = None,
        interval_seconds: float = DEFAULT_INTERVAL_SECONDS,
        policy: ConsolidationPolicy | None = None,
        audit: Any = None,
        worker_id: str | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        retry_in_seconds: float = 60.0,
        max_run_seconds: float = DEFAULT_MAX_RUN_SECONDS,
    ) -> None:
        if interval_seconds <= 0:
            raise ValueError(f"interval_seconds must be > 0, got {interval_seconds!r}")
        self.queue = queue
        self.store = store
        self.judge = _judge(model)
        self.namespaces = namespaces or MemoryNamespaces()
        self.interval = interval_seconds
        self.policy = policy or ConsolidationPolicy()
        self.audit = audit
        self.worker_id = worker_id or f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.lease_seconds = lease_seconds
        self.retry_in_seconds = retry_in_seconds
        # A run (one judge call per cluster) renews its lease up to this long, so a slow judge
        # never lets a second worker start the same user's run and fold its signals twice.
        self.max_run_seconds = max_run_seconds

    # -- what a job carries (shared by both drivers) --

    def _job_args(self, user_id: str, *, manual: bool, now: float | None = None) -> dict[str, Any]:
        ns = self.namespaces.resolve({"configurable": {"user_id": user_id}})
        owner = ".".join(ns.semantic)
        if manual:
            key, delay = f"{CONSOLIDATE_JOB}:{owner}:manual:{uuid.uuid4().hex}", 0.0
        else:
            # The next slot boundary: one job per user and slot, whoever schedules it.
            moment = time.time() if now is None else now
            slot = int(moment // self.interval) + 1
            key, delay = f"{CONSOLIDATE_JOB}:{owner}:{slot}", max(slot * self.interval - moment, 0)
        payload = {"user_id": user_id, "namespaces": namespaces_payload(ns), "manual": manual}
        return {
            "kind": CONSOLIDATE_JOB,
            "dedupe_key": key,
            "payload": payload,
            "thread_id": f"~{CONSOLIDATE_JOB}:{owner}",
            "delay_seconds": delay,
        }

    def _events(self, job: Job, report: ConsolidationReport) -> list[AuditEvent]:
        ns = namespaces_from_payload(job.payload)
        return audit_events(str(job.payload["user_id"]), ns, report, CONSOLIDATE_JOB)

    def _job_steps(self, job: Job, queue: JobQueue | AsyncJobQueue) -> Steps[ConsolidationReport]:
        """One claimed job: consolidate under a heartbeat, audit, complete, schedule the next
        slot. The sync and async runners run these steps."""
        ns = namespaces_from_payload(job.payload)
        plan = consolidation_plan(ns, judge=self.judge, policy=self.policy)
        report: ConsolidationReport = yield Leased(
            Within(self.store, plan),
            queue,
            job,
            lease_seconds=self.lease_seconds,
            max_seconds=self.max_run_seconds,
        )
        events = self._events(job, report)
        if events and self.audit is not None:
            audit = self.audit
            # sync: refuses an async log; async: awaits the record of either kind of log
            awaited = Call.same(lambda: audit.record(events)).asyn
            yield Call(lambda: self._record(events), awaited)
        yield Call.same(lambda: queue.complete(job))
        if not job.payload.get("manual"):
            user_id = str(job.payload["user_id"])
            yield Call(lambda: self.schedule(user_id), lambda: self.aschedule(user_id))
        return report

    # -- sync --

    def _sync_queue(self) -> JobQueue:
        if not isinstance(self.queue, JobQueue):
            raise TypeError("this call needs a JobQueue; use the a... twin with AsyncJobQueue")
        return self.queue

    def schedule(self, user_id: str) -> int:
        """Enqueue the user's run at the next slot (idempotent); returns the job id."""
        job_id, _ = self._sync_queue().enqueue(**self._job_args(user_id, manual=False))
        return job_id

    def trigger(self, user_id: str) -> int:
        """Enqueue a run of the user's consolidation now; returns the job id."""
        job_id, _ = self._sync_queue().enqueue(**self._job_args(user_id, manual=True))
        return job_id

    def run_job(self, job: Job) -> ConsolidationReport:
        """Run one claimed job: consolidate, audit, complete, schedule the next slot
        (traced and accounted to the job's user: ``memory._recall.accounting``)."""
        with observe("consolidate", self.store, str(job.payload["user_id"])):
            return self._run_job(job)

    def _run_job(self, job: Job) -> ConsolidationReport:
        return run_steps(self._job_steps(job, self._sync_queue()))

    def _record(self, events: list[AuditEvent]) -> None:
        assert self.audit is not None
        if inspect.iscoroutinefunction(self.audit.record):
            raise TypeError("an async audit log needs arun_pending()")
        self.audit.record(events)

    def run_pending(self, limit: int | None = None) -> int:
        """Run the ready consolidate jobs; returns how many finished."""
        queue = self._sync_queue()
        finished = 0
        while limit is None or finished < limit:
            jobs = queue.claim(
                [CONSOLIDATE_JOB],
                worker_id=self.worker_id,
                lease_seconds=self.lease_seconds,
                one_per_thread=True,  # one run per user at a time: never fold signals twice
            )
            if not jobs:
                break
            try:
                self.run_job(jobs[0])
                finished += 1
            except Exception as exc:
                status = queue.fail(
                    jobs[0], f"{type(exc).__name__}: {exc}", retry_in_seconds=self.retry_in_seconds
                )
                logger.warning("consolidate job %s failed (%s, now %s)", jobs[0].id, exc, status)
        return finished

    # -- async --

    def _async_queue(self) -> AsyncJobQueue:
        if not isinstance(self.queue, AsyncJobQueue):
            raise TypeError("this call needs an AsyncJobQueue; use the sync twin with JobQueue")
        return self.queue

    async def aschedule(self, user_id: str) -> int:
        """Async :meth:`schedule`."""
        job_id, _ = await self._async_queue().enqueue(**self._job_args(user_id, manual=False))
        return job_id

    async def atrigger(self, user_id: str) -> int:
        """Async :meth:`trigger`."""
        job_id, _ = await self._async_queue().enqueue(**self._job_args(user_id, manual=True))
        return job_id

    async def arun_job(self, job: Job) -> ConsolidationReport:
        """Async :meth:`run_job`."""
        async with aobserve("consolidate", self.store, str(job.payload["user_id"])):
            return await self._arun_job(job)

    async def _arun_job(self, job: Job) -> ConsolidationReport:
        return await arun_steps(self._job_steps(job, self._async_queue()))

    async def arun_pending(self, limit: int | None = None) -> int:
        """Async :meth:`run_pending`."""
        queue = self._async_queue()
        finished = 0
        while limit is None or finished < limit:
            jobs = await queue.claim(
                [CONSOLIDATE_JOB],
                worker_id=self.worker_id,
                lease_seconds=self.lease_seconds,
                one_per_thread=True,  # one run per user at a time: never fold signals twice
            )
            if not jobs:
                break
            try:
                await self.arun_job(jobs[0])
                finished += 1
            except Exception as exc:
                status = await queue.fail(
                    jobs[0], f"{type(exc).__name__}: {exc}", retry_in_seconds=self.retry_in_seconds
                )
                logger.warning("consolidate job %s failed (%s, now %s)", jobs[0].id, exc, status)
        return finished
