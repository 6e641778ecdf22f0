"""REST: standing instructions, episodes and categories."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from langmem_vault.api._deps import ActingDep
from langmem_vault.memory._models import MAX_TEXT
from langmem_vault.service._categories import CategoryInfo, CategorySpec
from langmem_vault.service._records import MemoryRecord

__all__ = ["InstructionCreate", "InstructionUpdate", "router"]

router = APIRouter()

Priority = Annotated[int, Field(ge=1, le=10)]


class InstructionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_TEXT)
    priority: Priority = 5
    condition: str | None = Field(default=None, max_length=500)
    expires_at: datetime | None = None


class InstructionUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(default=None, min_length=1, max_length=MAX_TEXT)
    priority: Priority | None = None
    condition: str | None = Field(default=None, max_length=500)
    expires_at: datetime | None = None
    active: bool | None = None


@router.get("/instructions", response_model=list[MemoryRecord], tags=["instructions"])
async def list_instructions(
    acting: ActingDep,
    active_only: bool = False,
    min_priority: Annotated[int, Query(ge=1, le=10)] = 1,
    max_priority: Annotated[int, Query(ge=1, le=10)] = 10,
) -> list[MemoryRecord]:
    """Standing instructions, highest priority first."""
    return await acting.service.alist_instructions(
        acting.user_id,
        active_only=active_only,
        min_priority=min_priority,
        max_priority=max_priority,
    )


@router.post("/instructions", response_model=MemoryRecord, status_code=201, tags=["instructions"])
async def create_instruction(acting: ActingDep, body: InstructionCreate) -> MemoryRecord:
    """Add a standing instruction (condition syntax: ``topic contains travel``...)."""
    fields = body.model_dump(exclude={"text"})
    return await acting.service.aadd_instruction(acting.user_id, body.text, **fields)


@router.patch("/instructions/{key}", response_model=MemoryRecord, tags=["instructions"])
async def update_instruction(acting: ActingDep, key: str, body: InstructionUpdate) -> MemoryRecord:
    """Change priority, condition, expiry, text or the active flag."""
    changes = body.model_dump(exclude_unset=True)
    return await acting.service.aedit_instruction(acting.user_id, key, **changes)


@router.delete("/instructions/{key}", response_model=MemoryRecord, tags=["instructions"])
async def delete_instruction(acting: ActingDep, key: str) -> MemoryRecord:
    """Erase an instruction (turn it off instead with ``PATCH {"active": false}``)."""
    return await acting.service.adelete_instruction(acting.user_id, key)


@router.get("/episodes", response_model=list[MemoryRecord], tags=["episodes"])
async def list_episodes(
    acting: ActingDep,
    q: Annotated[str | None, Query(max_length=2000)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
) -> list[MemoryRecord]:
    """Episodes: the most relevant to ``q``, or the most recent first."""
    return await acting.service.alist_episodes(acting.user_id, q, limit=limit)


@router.get("/episodes/{key}", response_model=MemoryRecord, tags=["episodes"])
async def get_episode(acting: ActingDep, key: str) -> MemoryRecord:
    record = await acting.service.aget_memory(acting.user_id, key)
    if record.kind != "episode":
        raise LookupError(f"no episode {key!r}")
    return record


@router.get("/categories", response_model=list[CategoryInfo], tags=["categories"])
async def list_categories(acting: ActingDep) -> list[CategoryInfo]:
    """Built-in and the user's own categories, with counts, colours and last use."""
    return await acting.service.alist_categories(acting.user_id)


@router.put("/categories/{name}", response_model=CategoryInfo, tags=["categories"])
async def save_category(acting: ActingDep, name: str, body: CategorySpec) -> CategoryInfo:
    """Create or edit a category: colour, description, parent (user categories group
    facts by the tag of the same name)."""
    return await acting.service.asave_category(acting.user_id, name, body)
