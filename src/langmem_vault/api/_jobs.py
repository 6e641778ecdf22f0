"""REST: the dead-letter list of the background job queue (failed jobs) and their retry.

A user key sees and retries only its user's jobs; an admin key everyone's, or one user's
with ``?user_id=``. Another user's job is reported as not found (its existence is never
revealed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request

from langmem_vault.api._auth import acting_for
from langmem_vault.api._deps import identity, service
from langmem_vault.jobs._dead_letter import MAX_LIST, FailedJobs
from langmem_vault.service import Identity, MemoryService
from langmem_vault.service._jobs import RetryResult

__all__ = ["router"]

router = APIRouter(prefix="/jobs", tags=["jobs"])


@dataclass(frozen=True)
class Scoped:
    """Whose jobs a request means (None: everyone's, an admin only) and the service acting
    as the request's identity (it checks the scope again)."""

    user_id: str | None
    service: MemoryService


async def scoped(
    request: Request,
    who: Annotated[Identity, Depends(identity)],
    user_id: Annotated[
        str | None,
        Query(
            max_length=256,
            description="Only this user's jobs (an admin; default: everyone's). A user key "
            "always means its own user.",
        ),
    ] = None,
) -> Scoped:
    scope = user_id if who.is_admin else acting_for(who, user_id)
    return Scoped(scope, service(request).acting_as(who))


ScopedDep = Annotated[Scoped, Depends(scoped)]
JobId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the failed job's id")]


@router.get("/failed", response_model=FailedJobs)
async def failed_jobs(
    scope: ScopedDep, limit: Annotated[int, Query(ge=1, le=MAX_LIST)] = 100
) -> FailedJobs:
    """Background jobs that failed every attempt, newest failure first: id, kind, user,
    thread, attempts, last error, when (``total`` counts them all)."""
    return await scope.service.afailed_jobs(scope.user_id, limit=limit)


@router.post("/retry", response_model=RetryResult)
async def retry_all(scope: ScopedDep) -> RetryResult:
    """Put every failed job of the scope back to work with fresh attempts."""
    return await scope.service.aretry_jobs(None, user_id=scope.user_id)


@router.post("/{job_id}/retry", response_model=RetryResult)
async def retry_job(scope: ScopedDep, job_id: JobId) -> RetryResult:
    """Put a failed job back to work with fresh attempts; its last error stays shown until
    it runs again. A job that is not failed is left alone (``unchanged``, with its status)."""
    return await scope.service.aretry_jobs([job_id], user_id=scope.user_id)
