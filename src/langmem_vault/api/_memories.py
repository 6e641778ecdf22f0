"""REST: memories (list with filters and a total, search, read, create, update, delete,
restore, confirm, reject)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from langmem_vault.api._deps import ActingDep
from langmem_vault.memory._models import MAX_EVIDENCE, MAX_TEXT, FactCategory
from langmem_vault.service._records import (
    MAX_OFFSET,
    Kind,
    MemoryPage,
    MemoryRecord,
    SearchResults,
    SearchType,
    Status,
)

__all__ = ["MemoryCreate", "MemoryUpdate", "router"]

router = APIRouter(prefix="/memories", tags=["memories"])


class MemoryCreate(BaseModel):
    """A new fact (validated before anything is written)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_TEXT)
    category: FactCategory = "general"
    tags: list[str] = Field(default_factory=list, max_length=20)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    private: bool = False
    evidence: str | None = Field(default=None, max_length=MAX_EVIDENCE)


class MemoryUpdate(BaseModel):
    """Fields to change; those left out keep their value. A new ``text`` is re-embedded."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(default=None, min_length=1, max_length=MAX_TEXT)
    category: FactCategory | None = None
    tags: list[str] | None = Field(default=None, max_length=20)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    private: bool | None = None
    evidence: str | None = Field(default=None, max_length=MAX_EVIDENCE)
    valid_to: datetime | None = None


StatusQuery = Annotated[
    list[Status] | None,
    Query(description="statuses to include (repeat the parameter); default: every status"),
]


@router.get("", response_model=MemoryPage, summary="List memories with filters")
async def list_memories(
    acting: ActingDep,
    kind: Kind | None = None,
    status: StatusQuery = None,
    category: FactCategory | None = None,
    tags: Annotated[list[str] | None, Query(description="all of these tags")] = None,
    since: datetime | None = None,
    until: datetime | None = None,
    include_expired: Annotated[
        bool, Query(description="without status: include expired and superseded ones")
    ] = True,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[
        int, Query(ge=0, le=MAX_OFFSET, description="deeper: page by after, a page's next")
    ] = 0,
    after: Annotated[
        str | None, Query(max_length=1000, description="a page's next: the page after it")
    ] = None,
    exact_total: Annotated[
        bool,
        Query(
            description="count every match for total (default: a listing by kind counts up "
            "to 1,000, total_capped beyond; one with other filters gives total null)"
        ),
    ] = False,
) -> MemoryPage:
    if status is None and not include_expired:
        status = ["active", "pending", "disabled"]
    return await acting.service.alist_memories(
        acting.user_id,
        kind=kind,
        status=status,
        category=category,
        tags=tags or [],
        since=since,
        until=until,
        limit=limit,
        offset=offset,
        after=after,
        exact_total=exact_total,
    )


@router.get("/search", response_model=SearchResults, summary="Search memories")
async def search_memories(
    acting: ActingDep,
    q: Annotated[str, Query(min_length=1, max_length=2000, description="the search text")],
    search_type: SearchType = "hybrid",
    min_relevance: Annotated[float, Query(ge=0.0, le=1.0)] = 0.0,
    kind: Kind | None = None,
    status: StatusQuery = None,
    category: FactCategory | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> SearchResults:
    with acting.latency.timed("search", user_id=acting.user_id):
        return await acting.service.asearch_memories(
            acting.user_id,
            q,
            search_type=search_type,
            min_relevance=min_relevance,
            kind=kind,
            status=status,
            category=category,
            limit=limit,
            offset=offset,
        )


@router.post("", response_model=MemoryRecord, status_code=201, summary="Create a fact")
async def create_memory(acting: ActingDep, body: MemoryCreate) -> MemoryRecord:
    fields = body.model_dump(exclude={"text"})
    return await acting.service.aadd_memory(acting.user_id, body.text, **fields)


@router.get("/{key}", response_model=MemoryRecord, summary="Read one memory (any kind)")
async def get_memory(acting: ActingDep, key: str) -> MemoryRecord:
    return await acting.service.aget_memory(acting.user_id, key)


@router.patch("/{key}", response_model=MemoryRecord, summary="Update fields of a memory")
async def update_memory(acting: ActingDep, key: str, body: MemoryUpdate) -> MemoryRecord:
    changes = body.model_dump(exclude_unset=True)
    return await acting.service.aedit_memory(acting.user_id, key, **changes)


@router.delete("/{key}", response_model=MemoryRecord, summary="Delete (soft by default)")
async def delete_memory(
    acting: ActingDep,
    key: str,
    hard: Annotated[bool, Query(description="erase for good instead of closing it")] = False,
) -> MemoryRecord:
    return await acting.service.aforget_memory(acting.user_id, key, hard=hard)


@router.post("/{key}/restore", response_model=MemoryRecord, summary="Restore a deleted memory")
async def restore_memory(acting: ActingDep, key: str) -> MemoryRecord:
    return await acting.service.arestore_memory(acting.user_id, key)


@router.post("/{key}/confirm", response_model=MemoryRecord, summary="Confirm a pending fact")
async def confirm_memory(acting: ActingDep, key: str) -> MemoryRecord:
    return await acting.service.aconfirm_memory(acting.user_id, key)


@router.post("/{key}/reject", response_model=MemoryRecord, summary="Reject a pending fact")
async def reject_memory(acting: ActingDep, key: str) -> MemoryRecord:
    return await acting.service.areject_memory(acting.user_id, key)
