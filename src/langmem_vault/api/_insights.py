"""REST: threads, the injection trace, analytics."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from langmem_vault.api._deps import ActingDep
from langmem_vault.service._analytics import Analytics
from langmem_vault.service._threads import ThreadDetail, ThreadRecord
from langmem_vault.service._trace import InjectionTrace

__all__ = ["router"]

router = APIRouter()


@router.get("/threads", response_model=list[ThreadRecord], tags=["threads"])
async def list_threads(
    acting: ActingDep, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[ThreadRecord]:
    """The user's threads, most recently active first."""
    return await acting.service.alist_threads(acting.user_id, limit=limit)


@router.get("/threads/{thread_id}", response_model=ThreadDetail, tags=["threads"])
async def get_thread(acting: ActingDep, thread_id: str) -> ThreadDetail:
    """A thread's latest messages and memory state."""
    return await acting.service.aget_thread(acting.user_id, thread_id)


@router.get("/threads/{thread_id}/trace", response_model=InjectionTrace, tags=["threads"])
async def get_trace(acting: ActingDep, thread_id: str) -> InjectionTrace:
    """What inject put in front of the model in the last turn, with each memory's relevance,
    confidence, recency and utility, and which the answer cited."""
    return await acting.service.ainjection_trace(acting.user_id, thread_id)


@router.get("/analytics", response_model=Analytics, tags=["analytics"])
async def analytics(
    acting: ActingDep,
    days: Annotated[int, Query(ge=1, le=366)] = 30,
    top: Annotated[int, Query(ge=1, le=100)] = 10,
) -> Analytics:
    """Totals, daily growth, category and kind distribution, most used memories, extraction
    and confirmation figures, search latency p50/p95."""
    return await acting.service.aanalytics(
        acting.user_id, days=days, top=top, latency=acting.latency
    )
