"""Threads on the checkpointer (``VaultSaver``/``AsyncVaultSaver``): list, show, delete.

A thread belongs to the user in the saver's per-user index; a thread of another user is
reported as not found (an API must not reveal that it exists).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from langmem_vault.db._steps import Call, Steps
from langmem_vault.service._base import ServiceBase
from langmem_vault.service._errors import InvalidInput, NotFound

__all__ = ["MessageView", "ThreadDetail", "ThreadRecord", "ThreadsMixin"]

MAX_THREADS = 100_000
#: state keys shown beside the messages: what the memory nodes injected and cited
STATE_KEYS = ("memory_context", "memory_refs", "cited", "summary")


class ThreadRecord(BaseModel):
    """One row of the saver's per-user thread index."""

    thread_id: str
    user_id: str | None
    title: str | None
    message_count: int
    started_at: datetime
    last_activity: datetime


class MessageView(BaseModel):
    """One message of a thread's latest state."""

    id: str | None = None
    role: str
    content: str


class ThreadDetail(ThreadRecord):
    """A thread with its latest checkpoint's messages and memory state."""

    checkpoint_id: str | None = None
    messages: list[MessageView] = Field(default_factory=list)
    state: dict[str, Any] = Field(default_factory=dict)


def _json_safe(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _message(message: Any) -> MessageView:
    content = getattr(message, "content", message)
    text = content if isinstance(content, str) else json.dumps(_json_safe(content))
    return MessageView(
        id=getattr(message, "id", None), role=str(getattr(message, "type", "message")), content=text
    )


def thread_detail(record: ThreadRecord, checkpoint: Any) -> ThreadDetail:
    """A :class:`ThreadDetail` from the index row and the latest ``CheckpointTuple``."""
    if checkpoint is None:
        return ThreadDetail(**record.model_dump())
    values = checkpoint.checkpoint.get("channel_values") or {}
    return ThreadDetail(
        **record.model_dump(),
        checkpoint_id=checkpoint.checkpoint.get("id"),
        messages=[_message(m) for m in values.get("messages") or []],
        state={k: _json_safe(values[k]) for k in STATE_KEYS if k in values},
    )


class ThreadsMixin(ServiceBase):
    """Thread operations of :class:`~langmem_vault.service.MemoryService`."""

    def _thread_list_steps(self, user_id: str, limit: int) -> Steps[list[ThreadRecord]]:
        if not isinstance(limit, int) or not 1 <= limit <= MAX_THREADS:
            raise InvalidInput("limit", f"must be in 1..{MAX_THREADS}, got {limit!r}")
        infos = yield self._threads_step(user_id, limit)
        return [
            ThreadRecord(
                thread_id=i.thread_id,
                user_id=i.user_id,
                title=i.title,
                message_count=i.message_count,
                started_at=i.started_at,
                last_activity=i.last_activity,
            )
            for i in infos
        ]

    def _own_thread_steps(self, user_id: str, thread_id: str) -> Steps[ThreadRecord]:
        if not isinstance(thread_id, str) or not thread_id:
            raise InvalidInput("thread_id", f"must be a non-empty string, got {thread_id!r}")
        threads = yield from self._thread_list_steps(user_id, MAX_THREADS)
        for thread in threads:
            if thread.thread_id == thread_id:
                return thread
        raise NotFound("thread_id", f"no thread {thread_id!r} for user {user_id!r}")

    def _thread_steps(self, user_id: str, thread_id: str) -> Steps[ThreadDetail]:
        record = yield from self._own_thread_steps(user_id, thread_id)
        saver = self.saver
        config = {"configurable": {"thread_id": thread_id, "user_id": user_id}}
        latest = yield Call(lambda: saver.get_tuple(config), lambda: saver.aget_tuple(config))
        return thread_detail(record, latest)

    def _delete_thread_steps(self, user_id: str, thread_id: str) -> Steps[ThreadRecord]:
        record = yield from self._own_thread_steps(user_id, thread_id)
        saver = self.saver
        yield Call(lambda: saver.delete_thread(thread_id), lambda: saver.adelete_thread(thread_id))
        detail = {"thread_id": thread_id, "messages": record.message_count}
        yield from self._audited(user_id, "delete", detail=detail)
        return record

    # -- public: sync and async twins ------------------------------------------------------

    def list_threads(self, user_id: str, *, limit: int = 100) -> list[ThreadRecord]:
        """The user's threads, most recently active first (needs a saver)."""
        return self._run(self._thread_list_steps(self._authorize(user_id), limit))

    async def alist_threads(self, user_id: str, *, limit: int = 100) -> list[ThreadRecord]:
        """Async :meth:`list_threads`."""
        return await self._arun(self._thread_list_steps(self._authorize(user_id), limit))

    def get_thread(self, user_id: str, thread_id: str) -> ThreadDetail:
        """A thread of the user with its latest messages and memory state."""
        return self._run(self._thread_steps(self._authorize(user_id), thread_id))

    async def aget_thread(self, user_id: str, thread_id: str) -> ThreadDetail:
        """Async :meth:`get_thread`."""
        return await self._arun(self._thread_steps(self._authorize(user_id), thread_id))

    def delete_thread(self, user_id: str, thread_id: str) -> ThreadRecord:
        """Delete a thread of the user (every checkpoint); audited; returns its index row."""
        return self._run(self._delete_thread_steps(self._authorize(user_id), thread_id))

    async def adelete_thread(self, user_id: str, thread_id: str) -> ThreadRecord:
        """Async :meth:`delete_thread`."""
        return await self._arun(self._delete_thread_steps(self._authorize(user_id), thread_id))
