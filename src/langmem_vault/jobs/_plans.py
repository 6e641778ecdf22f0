"""Sans-IO plans for the durable job queue: its SQL (jobs/_queue_sql.py) run, rows parsed here.

The sync :class:`~langmem_vault.jobs._queue.JobQueue` and the async
:class:`~langmem_vault.jobs._queue.AsyncJobQueue` only run these plans, so the two cannot drift.

Every call that changes a claimed job (renew, save result, complete, fail) is guarded by the
lease token handed out at claim time: a worker that stalled past its lease and lost the job to
another worker cannot finish it a second time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from langmem_vault.db._migrations import in_schema as _q
from langmem_vault.db._runner import Plan, Query
from langmem_vault.jobs import _queue_sql as sql

JOB_STATUSES = ("pending", "running", "done", "failed")


@dataclass(frozen=True, slots=True)
class Job:
    """One row of the job table, as a worker sees it after claiming it."""

    id: int
    kind: str
    dedupe_key: str
    thread_id: str
    payload: dict[str, Any]
    status: str
    attempts: int
    max_attempts: int
    last_error: str | None
    result: dict[str, Any] | None
    lease_token: str | None
    leased_until: datetime | None
    worker_id: str | None
    created_at: datetime
    finished_at: datetime | None


def _job(row: dict[str, Any]) -> Job:
    token = row["lease_token"]
    return Job(
        id=row["id"],
        kind=row["kind"],
        dedupe_key=row["dedupe_key"],
        thread_id=row["thread_id"],
        payload=row["payload"],
        status=row["status"],
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        last_error=row["last_error"],
        result=row["result"],
        lease_token=str(token) if token is not None else None,
        leased_until=row["leased_until"],
        worker_id=row["worker_id"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )


@dataclass(frozen=True, slots=True)
class Enqueued:
    """What :func:`enqueue_span_plan` did: the job id, the new message ids, merged or not."""

    job_id: int
    message_ids: tuple[str, ...]
    merged: bool


def span_key(kind: str, thread_id: str, message_ids: Sequence[str]) -> str:
    """The idempotency key of a job: its kind, thread and first and last message ids."""
    return f"{kind}:{thread_id}:{message_ids[0]}:{message_ids[-1]}"


def _check_positive(name: str, value: float, *, allow_zero: bool = True) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")


def enqueue_span_plan(
    schema: str,
    *,
    kind: str,
    thread_id: str,
    present_ids: Sequence[str],
    min_new: int,
    payload_for: Callable[[list[str]], dict[str, Any]],
    delay_seconds: float = 0.0,
    max_attempts: int = 5,
    idle_seconds: float | None = None,
) -> Plan[Enqueued | None]:
    """Enqueue the thread's messages not handed to a job yet, if there are ``min_new`` of them.

    ``present_ids`` are the ids of the thread's messages now in state, in order.
    ``payload_for(new_ids)`` builds the job payload for the new messages (a dict with
    ``messages`` and ``message_ids`` lists); those lists are appended to those of a job of this
    thread still waiting for a worker, so a burst of turns becomes one job. The watermark moves
    in the same transaction.
    Returns ``None`` when fewer than ``min_new`` messages are new, unless ``idle_seconds`` is
    given: then the short tail is enqueued anyway, to run only after the thread has been idle
    that long (each later turn merges into it and pushes it back; once the waiting job and the
    new messages reach ``min_new`` together it runs after ``delay_seconds`` as usual). A thread
    that ends after one turn is still extracted, and never twice.
    """
    if not thread_id:
        raise ValueError("thread_id must be a non-empty string")
    if min_new < 1:
        raise ValueError(f"min_new must be >= 1, got {min_new!r}")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
    _check_positive("delay_seconds", delay_seconds)
    if idle_seconds is not None:
        _check_positive("idle_seconds", idle_seconds)
    base = {"kind": kind, "thread": thread_id}
    yield Query(sql.LOCK_THREAD, (f"vault_jobs:{kind}:{thread_id}",))
    rows = yield Query(_q(sql.READ_THREAD, schema), base)
    state = rows[0]
    done = set(state["message_ids"] or [])
    new_ids = [i for i in present_ids if i not in done]
    delay = delay_seconds
    if len(new_ids) < min_new:
        waiting = (state["waiting_count"] or 0) if state["waiting_id"] is not None else 0
        if idle_seconds is None or not new_ids:
            return None
        if waiting + len(new_ids) < min_new:
            delay = idle_seconds
    params = {
        **base,
        "new": Jsonb(payload_for(new_ids)),
        "present": list(present_ids),
        "delay": delay,
        "max_attempts": max_attempts,
    }
    rows = None
    if state["waiting_id"] is not None:
        first = state["first_id"] or new_ids[0]
        params |= {
            "id": state["waiting_id"],
            "key": span_key(kind, thread_id, [first, new_ids[-1]]),
        }
        rows = yield Query(_q(sql.MERGE_WAITING, schema), params)
    merged = bool(rows)
    if not merged:
        params["key"] = span_key(kind, thread_id, new_ids)
        rows = yield Query(_q(sql.INSERT_JOB, schema), params)
    job_id: int = rows[0]["id"]
    return Enqueued(job_id, tuple(new_ids), merged)


def enqueue_keyed_plan(
    schema: str,
    *,
    kind: str,
    dedupe_key: str,
    thread_id: str,
    payload: dict[str, Any],
    delay_seconds: float = 0.0,
    max_attempts: int = 5,
) -> Plan[tuple[int, bool]]:
    """Enqueue one job under ``dedupe_key`` unless it exists; returns ``(id, created)``."""
    for name, value in (("kind", kind), ("dedupe_key", dedupe_key), ("thread_id", thread_id)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
    _check_positive("delay_seconds", delay_seconds)
    params = {
        "kind": kind,
        "key": dedupe_key,
        "thread": thread_id,
        "payload": Jsonb(payload),
        "max_attempts": max_attempts,
        "delay": delay_seconds,
    }
    rows = yield Query(_q(sql.INSERT_KEYED, schema), params)
    row = rows[0]
    return int(row["id"]), bool(row["created"])


def claim_plan(
    schema: str,
    *,
    kinds: Sequence[str],
    worker_id: str,
    limit: int,
    lease_seconds: float,
    one_per_thread: bool = False,
) -> Plan[list[Job]]:
    """Claim up to ``limit`` ready jobs (pending, or running with an expired lease).

    ``one_per_thread`` never hands out a job while another job of its kind and thread runs on
    a live lease (for work that must not overlap, such as one user's consolidation)."""
    _check_positive("lease_seconds", lease_seconds, allow_zero=False)
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit!r}")
    yield Query(_q(sql.EXHAUST, schema), (list(kinds),))
    claim = sql.CLAIM
    if one_per_thread:
        yield Query(sql.LOCK_CLAIMS, ("vault_jobs:claim:" + ",".join(sorted(kinds)),))
        claim = sql.CLAIM_ONE_PER_THREAD
    rows = yield Query(_q(claim, schema), (list(kinds), limit, lease_seconds, worker_id))
    return sorted((_job(r) for r in rows or []), key=lambda j: j.id)


def renew_plan(schema: str, job_id: int, token: str, lease_seconds: float) -> Plan[bool]:
    """Extend a claimed job's lease; ``False`` when the lease was lost to another worker."""
    rows = yield Query(_q(sql.RENEW, schema), (lease_seconds, job_id, token))
    return bool(rows)


def save_result_plan(schema: str, job_id: int, token: str, result: dict[str, Any]) -> Plan[bool]:
    """Keep the expensive step's output on the job; ``False`` when the lease was lost."""
    rows = yield Query(_q(sql.SAVE_RESULT, schema), (Jsonb(result), job_id, token))
    return bool(rows)


def complete_plan(schema: str, job_id: int, token: str) -> Plan[bool]:
    """Mark a claimed job done; ``False`` when the lease was lost."""
    rows = yield Query(_q(sql.COMPLETE, schema), (job_id, token))
    return bool(rows)


def fail_plan(
    schema: str, job_id: int, token: str, error: str, retry_in_seconds: float
) -> Plan[str | None]:
    """Record a failed attempt; returns the new status, or ``None`` when the lease was lost."""
    rows = yield Query(_q(sql.FAIL, schema), (error[:4000], retry_in_seconds, job_id, token))
    return rows[0]["status"] if rows else None


def get_plan(schema: str, job_id: int) -> Plan[Job | None]:
    """One job by id."""
    rows = yield Query(_q(sql.GET, schema), (job_id,))
    return _job(rows[0]) if rows else None


def list_plan(
    schema: str, *, thread_id: str | None = None, status: str | None = None
) -> Plan[list[Job]]:
    """Jobs, optionally of one thread and/or one status, oldest first."""
    if status is not None and status not in JOB_STATUSES:
        raise ValueError(f"status must be one of {JOB_STATUSES}, got {status!r}")
    rows = yield Query(_q(sql.LIST, schema), (thread_id, thread_id, status, status))
    return [_job(r) for r in rows or []]


def promote_tails_plan(
    schema: str, *, kind: str, thread_id: str, semantic: Sequence[str]
) -> Plan[list[int]]:
    """Run now the idle tails of the user whose semantic namespace is ``semantic``, except
    those of ``thread_id`` (the thread the user just started); returns their job ids."""
    params = {"kind": kind, "thread": thread_id, "semantic": Jsonb(list(semantic))}
    rows = yield Query(_q(sql.PROMOTE_TAILS, schema), params)
    return sorted(int(r["id"]) for r in rows or [])


def statuses_plan(schema: str, job_ids: Sequence[int]) -> Plan[dict[int, str]]:
    """The status of each of ``job_ids`` (a purged job is missing from the result)."""
    rows = yield Query(_q(sql.STATUSES, schema), (list(job_ids),))
    return {int(r["id"]): str(r["status"]) for r in rows or []}


def counts_plan(schema: str) -> Plan[dict[str, int]]:
    """How many jobs are in each status."""
    rows = yield Query(_q(sql.COUNTS, schema))
    counts = dict.fromkeys(JOB_STATUSES, 0)
    counts.update({r["status"]: r["n"] for r in rows or []})
    return counts


def purge_plan(
    schema: str, older_than_seconds: float, *, include_failed: bool = False
) -> Plan[None]:
    """Delete finished jobs older than ``older_than_seconds`` (failed ones only if asked).

    Watermarks are kept: they are what stops old messages from being enqueued again.
    """
    _check_positive("older_than_seconds", older_than_seconds)
    yield Query(_q(sql.PURGE, schema), (older_than_seconds, include_failed))


def delete_user_jobs_plan(
    schema: str, thread_ids: Sequence[str], namespaces: Mapping[str, Sequence[str]]
) -> Plan[tuple[int, int]]:
    """Delete a user's jobs and their threads' watermarks; returns ``(jobs, watermarks)``.

    ``namespaces`` is a job payload's ``"namespaces"`` entry for the user (see
    :func:`langmem_vault.extraction._payload.namespaces_payload`): jobs of other threads that
    write there go too.
    """
    params = {
        "threads": list(thread_ids),
        **{
            kind: Jsonb(list(namespaces[kind])) for kind in ("semantic", "episodes", "instructions")
        },
    }
    rows = yield Query(_q(sql.DELETE_USER_JOBS, schema), params)
    row = (rows or [{"jobs": 0, "watermarks": 0}])[0]
    return int(row["jobs"]), int(row["watermarks"])
