"""REST: export (JSON, CSV), import, erase (with a confirmation field), consent, audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Body, Query
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from langmem_vault.api._deps import ActingDep
from langmem_vault.api._errors import FieldError
from langmem_vault.privacy._subject_rights.portability import memories_csv
from langmem_vault.service._privacy import AuditEntry, ConsentView, EraseResult, ImportResult

__all__ = ["ConsentUpdate", "EraseRequest", "router"]

router = APIRouter(tags=["privacy"])


class EraseRequest(BaseModel):
    """``confirm`` must repeat the user id: an erase is never one stray click."""

    model_config = ConfigDict(extra="forbid")

    confirm: str = Field(description="the user id again")
    soft_days: float | None = Field(
        default=None, gt=0, le=3650, description="quarantine for this many days instead"
    )


class ConsentUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allow_extraction: bool | None = None
    allow_personal_facts: bool | None = None
    allow_sensitive_facts: bool | None = None


@router.get("/export", summary="Export everything stored about the user (JSON)")
async def export_json(acting: ActingDep) -> dict[str, Any]:
    return await acting.service.aexport_user(acting.user_id)


@router.get("/export.csv", summary="Export the user's facts as CSV", response_class=Response)
async def export_csv(acting: ActingDep) -> Response:
    doc = await acting.service.aexport_user(acting.user_id)
    return Response(
        memories_csv(doc),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": attachment(f"{acting.user_id}-memories.csv")},
    )


def attachment(name: str) -> str:
    """A ``Content-Disposition`` naming any file name: an ASCII stand-in, and the name
    itself in RFC 5987's ``filename*`` (HTTP headers are Latin-1).

    >>> print(attachment("李-memories.csv"))
    attachment; filename="_-memories.csv"; filename*=UTF-8''%E6%9D%8E-memories.csv
    """
    plain = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in name)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


@router.post("/import", response_model=ImportResult, status_code=201)
async def import_json(
    acting: ActingDep, document: Annotated[dict[str, Any], Body()]
) -> ImportResult:
    """Import an export document into the acting user (its own ``user_id`` is replaced)."""
    return await acting.service.aimport_user(document, user_id=acting.user_id)


async def erase_user(acting: ActingDep, request: EraseRequest) -> EraseResult:
    if request.confirm != acting.user_id:
        raise FieldError("confirm", "must repeat the user id being erased")
    return await acting.service.aerase_user(acting.user_id, soft_days=request.soft_days)


@router.post("/erase", response_model=EraseResult)
async def erase(acting: ActingDep, body: EraseRequest) -> EraseResult:
    """Erase the user: memories, instructions, episodes, threads, jobs and audit entries."""
    return await erase_user(acting, body)


@router.get("/consent", response_model=ConsentView)
async def get_consent(acting: ActingDep) -> ConsentView:
    return await acting.service.aconsent(acting.user_id)


@router.put("/consent", response_model=ConsentView)
async def set_consent(acting: ActingDep, body: ConsentUpdate) -> ConsentView:
    changes = body.model_dump(exclude_none=True)
    if not changes:
        raise FieldError("body", "name at least one consent switch")
    return await acting.service.aconsent(acting.user_id, **changes)


@router.get("/audit", response_model=list[AuditEntry])
async def audit_log(
    acting: ActingDep,
    memory_key: Annotated[str | None, Query(max_length=256)] = None,
    action: Annotated[list[str] | None, Query()] = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[AuditEntry]:
    """The user's audit log, newest first: who read, injected, cited, edited or deleted what."""
    filters: dict[str, Any] = {"limit": limit}
    for name, value in (
        ("memory_key", memory_key),
        ("actions", action),
        ("since", since),
        ("until", until),
    ):
        if value is not None:
            filters[name] = value
    return await acting.service.aaudit_log(acting.user_id, **filters)
