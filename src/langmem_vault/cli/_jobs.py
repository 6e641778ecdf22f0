"""``langmem-vault jobs failed|retry``: the dead-letter list of the background job queue.

Extraction jobs that failed every attempt (a model that is down, a bad key) wait there with
their last error; ``jobs retry`` puts them back to work with fresh attempts, once the cause
is fixed. Retrying a job that is not failed changes nothing and says so.
"""

from __future__ import annotations

from typing import Annotated

import typer

from langmem_vault.cli._context import (
    DsnOption,
    EveryoneOption,
    JsonOption,
    SchemaOption,
    emit,
    fail,
    print_json,
    service_for,
    table,
)
from langmem_vault.jobs._dead_letter import MAX_LIST, FailedJob
from langmem_vault.service._jobs import RetryResult

__all__ = ["register"]

jobs = typer.Typer(help="Background jobs that failed every attempt.", no_args_is_help=True)


def _row(job: FailedJob) -> list[object]:
    attempts = f"{job.attempts}/{job.max_attempts}"
    return [job.id, job.kind, job.user_id, job.thread_id, attempts, job.failed_at, job.last_error]


@jobs.command("failed")
def failed(
    user: EveryoneOption = None,
    limit: Annotated[int, typer.Option(min=1, max=MAX_LIST, help="show at most this many")] = 100,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Failed jobs, newest failure first: id, kind, user, thread, attempts, last error."""
    with service_for(dsn, schema, None) as service:
        found = service.failed_jobs(user, limit=limit)
    if as_json:
        print_json(found)
        return
    rows = [_row(j) for j in found.jobs]
    shown = f"{len(found.jobs)} of {found.total}" if found.total > len(found.jobs) else None
    table(
        f"failed jobs of {user}" if user else "failed jobs",
        ("id", "kind", "user", "thread", "attempts", "at", "last error"),
        rows,
        caption=shown,
    )


def _said(result: RetryResult) -> str:
    parts = [f"retried {len(result.retried)} job(s)"]
    if result.retried:
        parts[0] += ": " + ", ".join(map(str, result.retried))
    if result.unchanged:
        left = ", ".join(f"{s.id} ({s.status})" for s in result.unchanged)
        parts.append(f"not failed, left as they are: {left}")
    return "; ".join(parts)


@jobs.command("retry")
def retry(
    job_ids: Annotated[list[int] | None, typer.Argument(help="the failed jobs' ids")] = None,
    every: Annotated[bool, typer.Option("--all", help="every failed job (of --user)")] = False,
    user: EveryoneOption = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Put failed jobs back to work with fresh attempts (their last error stays shown until
    they run again)."""
    if bool(job_ids) == every:
        fail("job_ids: name the jobs to retry, or --all (not both)")
    with service_for(dsn, schema, None) as service:
        result = service.retry_jobs(None if every else job_ids, user_id=user)
    emit(result, as_json, _said(result))


def register(app: typer.Typer) -> None:
    """Add the ``jobs`` group to the root app."""
    app.add_typer(jobs, name="jobs")
