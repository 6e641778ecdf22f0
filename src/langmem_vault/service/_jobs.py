"""The dead-letter list of the background job queue: failed jobs, listed and retried.

Extraction (and consolidation) jobs that used all their attempts stay in the queue as
``failed``, their last error kept. A user sees and retries only their own (the jobs whose
payload writes into their namespaces); an admin sees and retries everyone's. Needs the
service's ``jobs`` component (a ``JobQueue`` or ``AsyncJobQueue``).

>>> service.failed_jobs("alice").total  # doctest: +SKIP
1
>>> service.retry_jobs([7], user_id="alice").retried  # doctest: +SKIP
[7]
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from langmem_vault.db._steps import Call, Steps
from langmem_vault.jobs._dead_letter import FailedJob, FailedJobs
from langmem_vault.memory._namespaces import NamespaceTemplate, ResolvedNamespaces, decode_label
from langmem_vault.service._base import ServiceBase
from langmem_vault.service._errors import InvalidInput

__all__ = ["JobState", "JobsMixin", "RetryResult", "user_of"]


class JobState(BaseModel):
    """A job a retry left alone, and its status (it was not failed)."""

    id: int
    status: str


class RetryResult(BaseModel):
    """What a retry did: ``retried`` are pending again; ``unchanged`` were not failed
    (pending, running, done: retried already or never failed) and are as they were."""

    retried: list[int]
    unchanged: list[JobState]


def user_of(template: NamespaceTemplate, namespace: Sequence[str] | None) -> str | None:
    """The user id a namespace filled from ``template`` holds, or None when it does not fit.

    >>> user_of(("memories", "{user_id}", "semantic"), ["memories", "ana%2Eg", "semantic"])
    'ana.g'
    """
    if namespace is None or len(namespace) != len(template):
        return None
    for label, value in zip(template, namespace, strict=True):
        head, marker, tail = label.partition("{user_id}")
        if marker and value.startswith(head) and value.endswith(tail):
            return decode_label(value[len(head) : len(value) - len(tail)])
    return None


class JobsMixin(ServiceBase):
    def _scope(self, user_id: str | None) -> ResolvedNamespaces | None:
        """The namespaces of the user whose jobs are meant; None (every user) for an admin."""
        if self.jobs is None:
            raise InvalidInput("jobs", "this service has no job queue (JobQueue)")
        if user_id is None:
            self._require_admin()
            return None
        return self._ns(self._authorize(user_id))

    def _record(self, job: FailedJob) -> FailedJob:
        """``job`` with its owner's user id, read from its namespace when the payload has none."""
        user_id = job.user_id or user_of(self.namespaces.semantic, job.semantic)
        return job.model_copy(update={"user_id": user_id})

    def _failed_jobs_steps(self, user_id: str | None, limit: int) -> Steps[FailedJobs]:
        scope = self._scope(user_id)
        jobs = self.jobs
        found = yield Call.same(lambda: jobs.failed(namespaces=scope, limit=limit))
        return FailedJobs(total=found.total, jobs=tuple(map(self._record, found.jobs)))

    def _retry_jobs_steps(
        self, job_ids: Sequence[int] | None, user_id: str | None
    ) -> Steps[RetryResult]:
        scope = self._scope(user_id)
        jobs = self.jobs
        # Bad ids are a ValueError naming job_ids (InvalidInput); an unknown id (another
        # user's job too: never revealed) is UnknownJobs, a KeyError naming job_id (NotFound).
        done = yield Call.same(lambda: jobs.retry(job_ids, namespaces=scope))
        by_user: dict[str, list[int]] = {}
        for job_id, semantic in done.semantic.items():
            owner = user_of(self.namespaces.semantic, semantic)
            if owner is not None:
                by_user.setdefault(owner, []).append(job_id)
        for owner, ids in sorted(by_user.items()):
            yield from self._audited(owner, "retry", detail={"job_ids": sorted(ids)})
        return RetryResult(
            retried=list(done.retried),
            unchanged=[JobState(id=i, status=s) for i, s in sorted(done.unchanged.items())],
        )

    def failed_jobs(self, user_id: str | None = None, *, limit: int = 100) -> FailedJobs:
        """The dead-letter list: ``user_id``'s failed background jobs (every user's, for an
        admin, when None), newest failure first, at most ``limit``.

        >>> service.failed_jobs(limit=20).jobs[0].last_error  # doctest: +SKIP
        'RuntimeError: model is down'
        """
        return self._run(self._failed_jobs_steps(user_id, limit))

    async def afailed_jobs(self, user_id: str | None = None, *, limit: int = 100) -> FailedJobs:
        """Async :meth:`failed_jobs`."""
        return await self._arun(self._failed_jobs_steps(user_id, limit))

    def retry_jobs(
        self, job_ids: Sequence[int] | None = None, *, user_id: str | None = None
    ) -> RetryResult:
        """Put failed jobs back to work with fresh attempts: ``job_ids`` (of ``user_id``,
        or anyone's for an admin when None), or every failed job of the scope when
        ``job_ids`` is None. A job that is not failed is left alone and reported in
        ``unchanged``; an id that is not a job of the scope is :class:`NotFound` (nothing
        retried). Each retry is audited.

        >>> service.retry_jobs(user_id="alice").retried  # doctest: +SKIP
        [7, 9]
        """
        return self._run(self._retry_jobs_steps(job_ids, user_id))

    async def aretry_jobs(
        self, job_ids: Sequence[int] | None = None, *, user_id: str | None = None
    ) -> RetryResult:
        """Async :meth:`retry_jobs`."""
        return await self._arun(self._retry_jobs_steps(job_ids, user_id))
