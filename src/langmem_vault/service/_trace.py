"""The injection trace of a thread's last turn: what inject put in front of the model, why
(relevance, confidence, recency, utility), and which of those the answer cited.

Read, not recorded twice: inject keeps each injected memory's key and score parts in the
graph state (``memory_items``, see :mod:`langmem_vault.memory._recall.injected`), respond keeps the
cited aliases (``cited``), and the checkpointer stores that state with the turn. So the
trace is the thread's latest checkpoint, read through the saver; nothing is written on the
hot path for it. Turns run before scores were kept show the memories without their parts.

>>> trace_of({"memory_items": [{"kind": "fact", "alias": "M1", "text": "Lives in Lyon",
...     "category": "personal", "priority": 0, "pending": False, "key": "k1",
...     "scores": {"relevance": 0.8}}], "cited": ["M1"], "memory_refs": {"M1": "k1"}},
...     thread_id="t1").memories[0].cited
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from langmem_vault.db._steps import Call, Steps
from langmem_vault.service._threads import ThreadsMixin

__all__ = ["InjectionTrace", "TraceMixin", "TracedMemory", "trace_of"]


class TracedMemory(BaseModel):
    """One memory injected in the turn."""

    kind: str
    alias: str
    key: str | None = None
    text: str
    category: str = ""
    priority: int = 0
    pending: bool = False
    cited: bool = False
    relevance: float | None = None
    confidence: float | None = None
    recency: float | None = None
    utility: float | None = None
    score: float | None = None


class InjectionTrace(BaseModel):
    """A thread's last turn as inject and respond left it in the checkpoint."""

    thread_id: str
    checkpoint_id: str | None = None
    at: datetime | None = None
    question: str | None = None
    answer: str | None = None
    memories: list[TracedMemory]
    cited: list[str]
    #: what consent refused to learn in the turn (reasons such as "fact: sensitive
    #: (medical)", never the text); ``len(dropped)`` is the count
    dropped: list[str] = []


def _text(message: Any) -> str:
    if isinstance(message, BaseMessage):
        return message.text if isinstance(message.text, str) else str(message.content)
    if isinstance(message, Mapping):
        return str(message.get("content", ""))
    return str(message)


def _kind(message: Any) -> str:
    if isinstance(message, Mapping):
        return str(message.get("type") or message.get("role") or "")
    return str(getattr(message, "type", ""))


def _last(messages: Sequence[Any], kind: str) -> str | None:
    for message in reversed(messages):
        if _kind(message) in (kind, {"human": "user", "ai": "assistant"}[kind]):
            return _text(message)
    return None


def trace_of(
    values: Mapping[str, Any],
    *,
    thread_id: str,
    checkpoint_id: str | None = None,
    at: datetime | None = None,
) -> InjectionTrace:
    """The trace held by a thread state's channel values (pure function)."""
    cited = [str(a) for a in values.get("cited") or []]
    refs: Mapping[str, str] = values.get("memory_refs") or {}
    memories = []
    for entry in values.get("memory_items") or []:
        scores = entry.get("scores") or {}
        alias = str(entry.get("alias", ""))
        memories.append(
            TracedMemory(
                kind=str(entry.get("kind", "fact")),
                alias=alias,
                key=entry.get("key") or refs.get(alias),
                text=str(entry.get("text", "")),
                category=str(entry.get("category", "")),
                priority=int(entry.get("priority") or 0),
                pending=bool(entry.get("pending")),
                cited=bool(alias) and alias in cited,
                relevance=scores.get("relevance"),
                confidence=scores.get("confidence"),
                recency=scores.get("recency"),
                utility=scores.get("utility"),
                score=scores.get("score"),
            )
        )
    messages = values.get("messages") or []
    return InjectionTrace(
        thread_id=thread_id,
        checkpoint_id=checkpoint_id,
        at=at,
        question=_last(messages, "human"),
        answer=_last(messages, "ai"),
        memories=memories,
        cited=cited,
        dropped=[str(r) for r in values.get("memory_dropped") or []],
    )


class TraceMixin(ThreadsMixin):
    """The injection trace of :class:`~langmem_vault.service.MemoryService`."""

    def _trace_steps(self, user_id: str, thread_id: str) -> Steps[InjectionTrace]:
        # The thread must be in the user's own index (another user's is "not found").
        yield from self._own_thread_steps(user_id, thread_id)
        saver = self.saver
        config = {"configurable": {"thread_id": thread_id, "user_id": user_id}}
        latest = yield Call(lambda: saver.get_tuple(config), lambda: saver.aget_tuple(config))
        if latest is None:
            return InjectionTrace(thread_id=thread_id, memories=[], cited=[])
        checkpoint = latest.checkpoint
        stamp = checkpoint.get("ts")
        return trace_of(
            checkpoint.get("channel_values") or {},
            thread_id=thread_id,
            checkpoint_id=checkpoint.get("id"),
            at=datetime.fromisoformat(stamp) if isinstance(stamp, str) else None,
        )

    def injection_trace(self, user_id: str, thread_id: str) -> InjectionTrace:
        """What inject put in front of the model in the thread's last turn, with each
        memory's score parts and whether the answer cited it."""
        return self._run(self._trace_steps(self._authorize(user_id), thread_id))

    async def ainjection_trace(self, user_id: str, thread_id: str) -> InjectionTrace:
        """Async :meth:`injection_trace`."""
        return await self._arun(self._trace_steps(self._authorize(user_id), thread_id))
