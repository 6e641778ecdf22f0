"""Sans-IO plans for the dead-letter list: jobs that used all their attempts (status
``failed``), listed and put back to work.

A failed job stays in the table with its ``last_error``; :func:`failed_plan` lists them
(newest failure first, without the payload's messages), :func:`retry_plan` puts them back
to ``pending`` with fresh attempts. A job belongs to the user whose semantic namespace its
payload writes into (``payload.namespaces.semantic``, the rule erase uses too), so both can
be scoped to one user.

Retrying is idempotent: a job that is not failed (pending, running, done, or retried
already) is left as it is and reported with its status. The last error stays on the job
until the job runs again (a new failure replaces it).

>>> plan = retry_plan("langmem_vault", job_ids=[])
>>> next(plan)
Traceback (most recent call last):
...
ValueError: job_ids: name at least one job (or retry every failed job)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict, Field

from langmem_vault.db._migrations import in_schema
from langmem_vault.db._runner import Plan, Query

__all__ = [
    "MAX_LIST",
    "RETRY_ATTEMPTS",
    "FailedJob",
    "FailedJobs",
    "Retried",
    "UnknownJobs",
    "failed_plan",
    "retry_plan",
]

#: the most failed jobs one listing returns (newest failures first; ``total`` counts all)
MAX_LIST = 1000
#: how many more attempts a retried job gets
RETRY_ATTEMPTS = 3

# NULL semantic: every user's jobs (an admin); else the jobs writing into that namespace.
_SCOPE = "(%(semantic)s::jsonb IS NULL OR payload -> 'namespaces' -> 'semantic' = %(semantic)s)"

_FAILED = (
    """
SELECT id, kind, thread_id, attempts, max_attempts, last_error, created_at, finished_at,
       payload -> 'namespaces' -> 'semantic' AS semantic, payload ->> 'user_id' AS user_id,
       count(*) OVER () AS total
FROM {schema}.vault_jobs
WHERE status = 'failed' AND """
    + _SCOPE
    + """
ORDER BY finished_at DESC NULLS LAST, id DESC
LIMIT %(limit)s
"""
)

# The asked jobs of the scope, locked: what is missing is known before anything changes.
_LOCK_ASKED = (
    "SELECT id, status FROM {schema}.vault_jobs WHERE id = ANY(%(ids)s) AND "
    + _SCOPE
    + " ORDER BY id FOR UPDATE"
)

# Attempts keep counting up and the budget grows instead of attempts going back to 0: a
# pending job with no attempts is one no worker has touched, which new turns of its thread
# merge into (_queue_sql.READ_THREAD); a retried job may hold a saved result and must not grow.
_RETRY = (
    """
UPDATE {schema}.vault_jobs
SET status = 'pending', max_attempts = attempts + %(fresh)s, run_after = now(),
    finished_at = NULL, lease_token = NULL, leased_until = NULL, updated_at = now()
WHERE status = 'failed' AND (%(ids)s::bigint[] IS NULL OR id = ANY(%(ids)s)) AND """
    + _SCOPE
    + """
RETURNING id, payload -> 'namespaces' -> 'semantic' AS semantic
"""
)


class FailedJob(BaseModel):
    """One job of the dead-letter list (its payload's messages are not read). The service
    returns it too, with ``user_id`` filled in from ``semantic``."""

    model_config = ConfigDict(frozen=True)

    id: int
    kind: str
    #: the user id the payload names (consolidation jobs do; the service fills it for the rest)
    user_id: str | None
    thread_id: str
    attempts: int
    max_attempts: int
    last_error: str | None
    created_at: datetime
    failed_at: datetime | None
    #: the semantic namespace the job writes into (whose job it is), if its payload names one;
    #: not serialised (the API shows ``user_id``)
    semantic: tuple[str, ...] | None = Field(exclude=True)


class FailedJobs(BaseModel):
    """Failed jobs, newest failure first; ``total`` counts them all (``jobs`` may stop at the
    limit)."""

    model_config = ConfigDict(frozen=True)

    total: int
    jobs: tuple[FailedJob, ...]


@dataclass(frozen=True, slots=True)
class Retried:
    """What a retry did: the jobs now pending again, and those left as they were (not
    failed), with their status."""

    retried: tuple[int, ...]
    unchanged: dict[int, str]
    #: the semantic namespace each retried job writes into (whose job it is), if any
    semantic: dict[int, tuple[str, ...] | None]


class UnknownJobs(KeyError):
    """Some asked jobs do not exist (or are not the user's): nothing was retried."""

    def __init__(self, job_ids: Sequence[int]) -> None:
        super().__init__(f"job_id: no job {', '.join(map(str, job_ids))}")
        self.job_ids = tuple(job_ids)

    def __str__(self) -> str:
        return str(self.args[0])


def _scope(semantic: Sequence[str] | None) -> Jsonb | None:
    return Jsonb(list(semantic)) if semantic is not None else None


def _namespace(value: Any) -> tuple[str, ...] | None:
    return tuple(value) if isinstance(value, list) else None


def _failed_job(row: dict[str, Any]) -> FailedJob:
    return FailedJob(
        id=int(row["id"]),
        kind=row["kind"],
        thread_id=row["thread_id"],
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        last_error=row["last_error"],
        created_at=row["created_at"],
        failed_at=row["finished_at"],
        semantic=_namespace(row["semantic"]),
        user_id=row["user_id"],
    )


def failed_plan(
    schema: str, *, semantic: Sequence[str] | None = None, limit: int = 100
) -> Plan[FailedJobs]:
    """The failed jobs (of the user whose semantic namespace is ``semantic``; everyone's
    when None), newest failure first, at most ``limit``."""
    if not isinstance(limit, int) or not 1 <= limit <= MAX_LIST:
        raise ValueError(f"limit: must be an integer from 1 to {MAX_LIST}, got {limit!r}")
    rows = yield Query(in_schema(_FAILED, schema), {"semantic": _scope(semantic), "limit": limit})
    rows = rows or []
    return FailedJobs(
        total=int(rows[0]["total"]) if rows else 0, jobs=tuple(map(_failed_job, rows))
    )


def retry_plan(
    schema: str,
    *,
    job_ids: Sequence[int] | None = None,
    semantic: Sequence[str] | None = None,
    attempts: int = RETRY_ATTEMPTS,
) -> Plan[Retried]:
    """Put failed jobs back to ``pending``, due now, with ``attempts`` more attempts.

    ``job_ids``: these jobs (all must exist in the scope, else :class:`UnknownJobs` and
    nothing changes); None: every failed job of the scope. ``semantic`` scopes to one user
    (see :func:`failed_plan`).
    """
    if not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"attempts: must be an integer >= 1, got {attempts!r}")
    ids: list[int] | None = None
    found: dict[int, str] = {}
    params: dict[str, Any] = {"semantic": _scope(semantic), "fresh": attempts}
    if job_ids is not None:
        if not job_ids:
            raise ValueError("job_ids: name at least one job (or retry every failed job)")
        bad = [i for i in job_ids if not isinstance(i, int) or isinstance(i, bool) or i < 1]
        if bad:
            raise ValueError(f"job_ids: job ids are positive integers, got {bad[0]!r}")
        ids = sorted(set(job_ids))
        rows = yield Query(in_schema(_LOCK_ASKED, schema), {**params, "ids": ids})
        found = {int(r["id"]): str(r["status"]) for r in rows or []}
        missing = [i for i in ids if i not in found]
        if missing:
            raise UnknownJobs(missing)
    rows = yield Query(in_schema(_RETRY, schema), {**params, "ids": ids})
    owners = {int(r["id"]): _namespace(r["semantic"]) for r in rows or []}
    unchanged = {i: s for i, s in found.items() if i not in owners}
    return Retried(tuple(sorted(owners)), unchanged, owners)
