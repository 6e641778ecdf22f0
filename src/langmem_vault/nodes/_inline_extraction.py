"""Inline extraction's steps, one body for both drivers: the thread's unseen messages
extracted in the node once ``every_n_messages`` are new, the shorter tail kept in the store
(``tails_namespace``, one item per thread), and the user's other threads' tails extracted on
a new thread's first turn (the extract node's :meth:`catch_up`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchOp

from langmem_vault.db._steps import Call, Step, Steps
from langmem_vault.db._store_plans import Batch
from langmem_vault.extraction._apply import aapply, apply
from langmem_vault.extraction._messages import deserialize_span, message_id, serialize_span
from langmem_vault.extraction._payload import (
    WATERMARK_NAMESPACE,
    namespaces_from_payload,
    namespaces_payload,
)
from langmem_vault.extraction._protocol import Extractor
from langmem_vault.extraction._span import aextract_span, extract_span
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces, tails_namespace
from langmem_vault.nodes._common import resolve_store
from langmem_vault.nodes._extract_config import thread_id_of
from langmem_vault.privacy._redaction.policy import RedactionPolicy

#: how many of the user's other threads' tails a new thread extracts (inline mode), per turn:
#: each is an extraction call the first answer waits for; the rest wait for the next thread
MAX_TAILS = 5
#: a tail nobody caught up is dropped after this long (where the store has TTLs): it holds
#: the raw messages, as a job payload does, and the checkpointer keeps the thread anyway
TAIL_TTL_MINUTES = 30 * 24 * 60.0


@dataclass(frozen=True)
class InlineExtraction:
    """The extract node's settings that inline mode's steps read."""

    extractor: Extractor
    namespaces: MemoryNamespaces
    store: BaseStore | None
    similar_limit: int
    redaction: RedactionPolicy | None
    debounce: float
    idle_seconds: float | None

    def due(self, unseen: list[BaseMessage], mark: dict[str, Any] | None, min_new: int) -> bool:
        """Whether the thread's unseen messages are extracted now."""
        if len(unseen) < min_new:
            return False
        last = (mark or {}).get("last_run")
        if self.debounce and last and min_new > 1:
            age = (datetime.now(UTC) - datetime.fromisoformat(last)).total_seconds()
            if age < self.debounce:
                return False  # too soon; these messages wait for the next run
        return True

    @staticmethod
    def watermark(message_ids: list[str]) -> dict[str, Any]:
        return {"message_ids": message_ids, "last_run": datetime.now(UTC).isoformat()}

    def extract_step(
        self, store: BaseStore, messages: list[BaseMessage], ns: ResolvedNamespaces, thread_id: str
    ) -> Step:
        """Extract ``messages`` of ``thread_id`` and apply the result; the step's result is
        what consent refused (reasons)."""
        kwargs: dict[str, Any] = {
            "namespaces": ns,
            "thread_id": thread_id,
            "similar_limit": self.similar_limit,
            "redaction": self.redaction,
        }

        def sync() -> list[str]:
            checked = extract_span(store, self.extractor, messages, **kwargs)
            return apply(store, checked.extraction, ns).dropped

        async def asyn() -> list[str]:
            checked = await aextract_span(store, self.extractor, messages, **kwargs)
            return (await aapply(store, checked.extraction, ns)).dropped

        return Call(sync, asyn)

    def steps(
        self, span: list[BaseMessage], config: RunnableConfig, min_new: int
    ) -> Steps[list[str]]:
        """Extract the thread's unseen messages once ``every_n_messages`` are new; until then
        keep them as the thread's tail, which the user's next new thread extracts. Returns
        what consent refused."""
        thread_id = thread_id_of(config)
        ns = self.namespaces.resolve(config)
        store = resolve_store(self.store)
        tails = tails_namespace(ns.semantic)
        (mark_item,) = yield Batch([GetOp(WATERMARK_NAMESPACE, thread_id)], store)
        mark = mark_item.value if mark_item else None
        done = set((mark or {}).get("message_ids", []))
        unseen = [m for m in span if message_id(m) not in done]
        if not self.due(unseen, mark, min_new):
            if unseen and self.idle_seconds is not None:
                tail = {
                    "messages": serialize_span(unseen),
                    "message_ids": [message_id(m) for m in unseen],
                    "namespaces": namespaces_payload(ns),  # where its facts go
                }
                ttl = TAIL_TTL_MINUTES if store.supports_ttl else None
                yield Batch([PutOp(tails, thread_id, tail, index=False, ttl=ttl)], store)
            return []
        dropped: list[str] = yield self.extract_step(store, unseen, ns, thread_id)
        # Only ids still in state are kept: removed messages cannot come back, so the
        # watermark stays as small as the thread's state.
        ops: list[Op] = [
            PutOp(
                WATERMARK_NAMESPACE,
                thread_id,
                self.watermark([message_id(m) for m in span]),
                index=False,
            )
        ]
        if self.idle_seconds is not None:
            ops.append(PutOp(tails, thread_id, None))
        yield Batch(ops, store)
        return dropped

    def tail_steps(self, config: RunnableConfig) -> Steps[list[str]]:
        """Extract the tails of the user's other threads, oldest first; each tail's ids join
        its thread's watermark, so the thread never extracts them again. Returns what consent
        refused."""
        thread_id = thread_id_of(config)
        ns = self.namespaces.resolve(config)
        store = resolve_store(self.store)
        tails = tails_namespace(ns.semantic)
        (found,) = yield Batch([SearchOp(tails, limit=MAX_TAILS + 1)], store)
        others = [i for i in found if i.key != thread_id]
        dropped: list[str] = []
        for item in sorted(others, key=lambda i: i.updated_at)[:MAX_TAILS]:
            messages = deserialize_span(item.value["messages"])
            target = namespaces_from_payload(item.value) if "namespaces" in item.value else ns
            dropped += yield self.extract_step(store, messages, target, item.key)
            done = item.value["message_ids"]
            (mark, now) = yield Batch(
                [GetOp(WATERMARK_NAMESPACE, item.key), GetOp(tails, item.key)], store
            )
            seen = mark.value["message_ids"] if isinstance(mark, Item) else []
            ops: list[Op] = [
                PutOp(
                    WATERMARK_NAMESPACE,
                    item.key,
                    self.watermark(list(dict.fromkeys([*seen, *done]))),
                    index=False,
                )
            ]
            # A tail its thread rewrote meanwhile (a new turn) stays for next time.
            if isinstance(now, Item) and now.value["message_ids"] == done:
                ops.append(PutOp(tails, item.key, None))
            yield Batch(ops, store)
        return dropped
