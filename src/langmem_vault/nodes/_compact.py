"""compact: when a thread's messages outgrow their budget, fold the old turns into a summary.

Above ``trigger_ratio x max_tokens`` (default 80% of 8,000 tokens) the node

1. keeps leading system messages and the last ``keep_last_exchanges`` exchanges (an exchange
   starts at a user message); when those alone are still over the trigger it keeps fewer, down
   to the last one;
2. never separates an AI message that calls tools from its ToolMessages: a cut that would
   fall between them moves earlier, so both stay (LangMem's SummarizationNode splits them:
   langmem #111, #112, #126);
3. asks the model for a running summary that *extends* the previous one (state key
   ``running_summary``; the previous summary goes into the prompt and an empty answer keeps
   it, langmem #118) and a summary of just the removed turns;
4. archives the removed turns as an :class:`~langmem_vault.memory._models.Episode` (with the
   messages themselves under ``"messages"``) in the store, under a key derived from the span,
   *before* removing them from state with ``RemoveMessage``; a retried step rewrites the same
   episode instead of adding a twin.

With ``model=None`` the summary is extractive (the users' first sentences), so the offline
demo can compact without a model.

>>> from langmem_vault.graphs._state import MemoryState
>>> from langgraph.graph import StateGraph
>>> builder = StateGraph(MemoryState)
>>> builder = builder.add_node("compact", create_compact_node(None, max_tokens=4000))
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore
from pydantic import BaseModel, Field

from langmem_vault.extraction._messages import MAX_MESSAGE_CHARS, memory_view, message_text
from langmem_vault.extraction._prompt import render_transcript
from langmem_vault.extraction._redaction import redact_text
from langmem_vault.memory._models import MAX_SUMMARY, Episode
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.nodes._common import MemoryNode, aobserved, load_model, observed, resolve_store
from langmem_vault.nodes._degrade import Degrade, MissingStateKeyError, OnError
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy
from langmem_vault.store._validation import DEFAULT_MAX_VALUE_BYTES
from langmem_vault.telemetry._metering import metered_call

__all__ = ["CompactNode", "CompactPlan", "create_compact_node", "plan_compaction"]

logger = logging.getLogger("langmem_vault.compact")

MessageCounter = Callable[[Sequence[BaseMessage]], int]
_EPISODE_ROOT = uuid.UUID("0b8f3c1e-52a4-4d7e-8d3a-2f6f1f4a9c21")
#: characters of message text an episode archives in all: an eighth of the store's value limit
#: in bytes (UTF-8 takes up to 4 bytes a character, and the messages' JSON needs room too)
ARCHIVE_CHARS = DEFAULT_MAX_VALUE_BYTES // 8
#: ...but never fewer than this per message, so each keeps a readable head and tail
MIN_ARCHIVED_CHARS = 200

SUMMARY_PROMPT = """You maintain the running summary of a long conversation.
Update the PREVIOUS SUMMARY with the OLDER TURNS below, which are being removed from the
context: keep everything the previous summary says unless the turns correct it, add what
matters from the turns (facts about the user, decisions, open tasks, tool results still
needed). Also summarise the older turns alone in one or two sentences."""


class CompactSummary(BaseModel):
    """What the summarising call returns."""

    running_summary: str = Field(description="The previous summary extended with the turns.")
    segment_summary: str = Field(description="One or two sentences on the older turns only.")
    topics: list[str] = Field(default_factory=list)
    importance: float = Field(default=0.5, description="0-1: how worth remembering they are.")


@dataclass(frozen=True)
class CompactPlan:
    """Which messages go: ``removed`` (in order) and the token counts before and after."""

    removed: list[BaseMessage]
    kept: list[BaseMessage]
    tokens_before: int
    tokens_after: int


def _exchange_starts(messages: Sequence[BaseMessage]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]


def safe_cut(messages: Sequence[BaseMessage], cut: int) -> int:
    """Move ``cut`` earlier until no AI tool call is separated from its ToolMessages.

    Messages before ``cut`` are removed. A ToolMessage kept whose calling AI message would be
    removed pulls the cut back to that AI message (so both stay).
    """
    caller: dict[str, int] = {}
    for i, msg in enumerate(messages):
        if isinstance(msg, AIMessage):
            for call in msg.tool_calls:
                if call.get("id"):
                    caller[str(call["id"])] = i
    moved = True
    while moved and cut > 0:
        moved = False
        for msg in messages[cut:]:
            if isinstance(msg, ToolMessage):
                origin = caller.get(msg.tool_call_id)
                if origin is not None and origin < cut:
                    cut, moved = origin, True
                    break
        # A ToolMessage right at the cut with no known caller still belongs to the turn before.
        while 0 < cut < len(messages) and isinstance(messages[cut], ToolMessage):
            cut, moved = cut - 1, True
    return cut


def plan_compaction(
    messages: Sequence[BaseMessage],
    *,
    max_tokens: int,
    trigger_ratio: float,
    keep_last_exchanges: int,
    count: MessageCounter = count_tokens_approximately,
) -> CompactPlan | None:
    """Decide what to remove, or ``None`` when the thread is under the trigger.

    >>> plan_compaction([], max_tokens=100, trigger_ratio=0.8, keep_last_exchanges=2) is None
    True
    """
    total = count(messages)
    trigger = int(max_tokens * trigger_ratio)
    if total <= trigger:
        return None
    lead = 0
    while lead < len(messages) and isinstance(messages[lead], SystemMessage):
        lead += 1
    body = list(messages[lead:])
    starts = _exchange_starts(body)
    best: tuple[int, int] | None = None
    for keep in range(keep_last_exchanges, 0, -1):
        if len(starts) <= keep:
            continue
        cut = safe_cut(body, starts[-keep])
        if cut <= 0:
            continue
        after = count([*messages[:lead], *body[cut:]])
        best = (cut, after)
        if after <= trigger:
            break
    if best is None:
        return None
    cut, after = best
    return CompactPlan(
        removed=body[:cut],
        kept=[*messages[:lead], *body[cut:]],
        tokens_before=total,
        tokens_after=after,
    )


def _extractive(removed: Sequence[BaseMessage], previous: str) -> CompactSummary:
    said = []
    for msg in removed:
        if isinstance(msg, HumanMessage):
            first = message_text(msg).strip().split(". ")[0][:200]
            if first:
                said.append(first)
    segment = "User said: " + "; ".join(said) if said else "Earlier turns (no user messages)."
    running = f"{previous}\n{segment}".strip() if previous else segment
    return CompactSummary(running_summary=running[-MAX_SUMMARY:], segment_summary=segment[:1000])


def _archived(removed: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The removed messages as memory reads them (clean text, no blocks), each bounded so that
    the episode stays well within the store's value limit however many there are."""
    each = max(ARCHIVE_CHARS // max(len(removed), 1), MIN_ARCHIVED_CHARS)
    return [memory_view(m, min(each, MAX_MESSAGE_CHARS)) for m in removed]


def _prompt(removed: Sequence[BaseMessage], previous: str) -> list[BaseMessage]:
    turns = render_transcript(_archived(removed))
    body = f"PREVIOUS SUMMARY:\n{previous or '(none)'}\n\nOLDER TURNS:\n{turns}"
    return [SystemMessage(SUMMARY_PROMPT), HumanMessage(body)]


def _as_summary(result: Any, previous: str) -> CompactSummary:
    if isinstance(result, CompactSummary):
        summary = result
    elif isinstance(result, BaseModel):
        summary = CompactSummary.model_validate(result.model_dump())
    elif isinstance(result, dict):
        summary = CompactSummary.model_validate(result)
    else:
        text = message_text(result) if isinstance(result, BaseMessage) else str(result)
        summary = CompactSummary(running_summary=text, segment_summary=text[:1000])
    if not summary.running_summary.strip():  # never lose the previous summary
        summary.running_summary = previous
    if not summary.segment_summary.strip():
        summary.segment_summary = summary.running_summary[:1000] or "Earlier turns."
    summary.running_summary = summary.running_summary[:MAX_SUMMARY]
    return summary


class CompactNode:
    """The compact node (build it with :func:`create_compact_node`)."""

    def __init__(
        self,
        model: BaseChatModel | None,
        *,
        max_tokens: int,
        trigger_ratio: float,
        keep_last_exchanges: int,
        count: MessageCounter,
        store: BaseStore | None,
        namespaces: MemoryNamespaces,
        archive: bool,
        redaction: RedactionPolicy | None,
        guard: Degrade | None = None,
    ) -> None:
        self.guard = guard or Degrade("compact")
        self.model = model
        self.redaction = redaction
        self.max_tokens = max_tokens
        self.trigger_ratio = trigger_ratio
        self.keep = keep_last_exchanges
        self.count = count
        self.store = store
        self.namespaces = namespaces
        self.archive = archive
        self._structured: Any = None
        if model is not None:
            try:
                self._structured = model.with_structured_output(CompactSummary)
            except (NotImplementedError, AttributeError):  # plain models: text is the summary
                self._structured = model

    def _plan(self, state: Mapping[str, Any]) -> CompactPlan | None:
        messages = state.get("messages")
        if messages is None:
            raise MissingStateKeyError("compact reads state['messages'], which is missing")
        plan = plan_compaction(
            messages,
            max_tokens=self.max_tokens,
            trigger_ratio=self.trigger_ratio,
            keep_last_exchanges=self.keep,
            count=self.count,
        )
        if plan is not None and any(not m.id for m in plan.removed):
            logger.warning("compact: messages without ids cannot be removed; skipping")
            return None
        return plan

    def _episode(
        self, plan: CompactPlan, summary: CompactSummary, config: RunnableConfig
    ) -> tuple[tuple[str, ...], str, dict[str, Any]]:
        thread_id = str((config.get("configurable") or {}).get("thread_id") or "")
        ids = [str(m.id) for m in plan.removed]
        key = str(uuid.uuid5(_EPISODE_ROOT, f"{thread_id}|{ids[0]}|{ids[-1]}"))
        episode = Episode(
            summary=summary.segment_summary,
            importance=min(max(summary.importance, 0.0), 1.0),
            thread_id=thread_id or None,
            topics=summary.topics[:20],
            source="compaction",
            source_message_ids=ids[-50:],
        )
        archived = messages_to_dict(_archived(plan.removed))
        for message in archived:  # the archive is stored: redact it as a summary is
            content = message.get("data", {}).get("content")
            if isinstance(content, str):
                message["data"]["content"] = redact_text(content, self.redaction)
        value = episode.to_store() | {"messages": archived}
        return self.namespaces.resolve(config).episodes, key, value

    def _redact(self, summary: CompactSummary) -> CompactSummary:
        """PII redaction of the summaries, which are stored (episode) and checkpointed."""
        return summary.model_copy(
            update={
                "running_summary": redact_text(summary.running_summary, self.redaction),
                "segment_summary": redact_text(summary.segment_summary, self.redaction),
            }
        )

    def _update(self, plan: CompactPlan, summary: CompactSummary) -> dict[str, Any]:
        logger.info(
            "compact: removed %d messages (%d -> %d tokens)",
            len(plan.removed),
            plan.tokens_before,
            plan.tokens_after,
        )
        return {
            "messages": [RemoveMessage(id=str(m.id)) for m in plan.removed],
            "running_summary": summary.running_summary,
        }

    def invoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Compact synchronously when over the trigger; returns the state update (see
        :mod:`.degrade` for failures: the messages then stay until a later turn)."""
        return observed(self.guard, self.store, config, lambda: self._invoke(state, config))

    async def ainvoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Async twin of :meth:`invoke`."""
        return await aobserved(self.guard, self.store, config, lambda: self._ainvoke(state, config))

    def _invoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        plan = self._plan(state)
        if plan is None:
            return {}
        previous = str(state.get("running_summary") or "")
        if self._structured is None:
            summary = _extractive(plan.removed, previous)
        else:
            with metered_call("summarize", self.model):
                answer = self._structured.invoke(_prompt(plan.removed, previous))
            summary = _as_summary(answer, previous)
        summary = self._redact(summary)
        if self.archive:
            ns, key, value = self._episode(plan, summary, config)
            resolve_store(self.store).put(ns, key, value, index=Episode.index_fields)
        return self._update(plan, summary)

    async def _ainvoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        plan = self._plan(state)
        if plan is None:
            return {}
        previous = str(state.get("running_summary") or "")
        if self._structured is None:
            summary = _extractive(plan.removed, previous)
        else:
            with metered_call("summarize", self.model):
                answer = await self._structured.ainvoke(_prompt(plan.removed, previous))
            summary = _as_summary(answer, previous)
        # Redaction is CPU-bound (and loads its engines on first use): off the event loop.
        summary = await asyncio.to_thread(self._redact, summary)
        if self.archive:
            ns, key, value = await asyncio.to_thread(self._episode, plan, summary, config)
            await resolve_store(self.store).aput(ns, key, value, index=Episode.index_fields)
        return self._update(plan, summary)


def _counter(token_counter: MessageCounter | BaseChatModel | None) -> MessageCounter:
    if token_counter is None:
        return count_tokens_approximately
    if isinstance(token_counter, BaseChatModel):
        return lambda msgs: token_counter.get_num_tokens_from_messages(list(msgs))
    return token_counter


def create_compact_node(
    model: BaseChatModel | str | None,
    /,
    *,
    max_tokens: int = 8000,
    trigger_ratio: float = 0.8,
    keep_last_exchanges: int = 4,
    token_counter: MessageCounter | BaseChatModel | None = None,
    store: BaseStore | None = None,
    namespaces: MemoryNamespaces | None = None,
    archive: bool = True,
    redaction: RedactionPolicy | None = DEFAULT_POLICY,
    on_error: OnError = "degrade",
    name: str = "compact",
) -> MemoryNode:
    """Build the compact node (sync and async).

    - ``model``: chat model or ``init_chat_model`` string for the summary; ``None`` for an
      extractive summary with no model;
    - ``max_tokens`` / ``trigger_ratio``: compact when messages exceed ``max_tokens x
      trigger_ratio`` tokens (counted by ``token_counter``: a function of the messages or a
      chat model; default langchain-core's approximate counter);
    - ``keep_last_exchanges``: exchanges kept verbatim (fewer only if they alone are over);
    - ``archive``: store the removed turns as an episode (needs ``user_id`` for the default
      namespaces);
    - ``redaction``: the PII policy applied to the summaries and the archived turns
      (:func:`langmem_vault.privacy.redact`); ``None`` turns redaction off.

    >>> node = create_compact_node(None, max_tokens=2000, keep_last_exchanges=2)
    >>> node.name
    'compact'
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens!r}")
    if not 0 < trigger_ratio <= 1:
        raise ValueError(f"trigger_ratio must be in (0, 1], got {trigger_ratio!r}")
    if keep_last_exchanges < 1:
        raise ValueError(f"keep_last_exchanges must be >= 1, got {keep_last_exchanges!r}")
    chat: Any = model
    if isinstance(model, str):
        chat = load_model(model)
    node = CompactNode(
        chat,
        max_tokens=max_tokens,
        trigger_ratio=trigger_ratio,
        keep_last_exchanges=keep_last_exchanges,
        count=_counter(token_counter),
        store=store,
        namespaces=namespaces or MemoryNamespaces(),
        archive=archive,
        redaction=redaction,
        guard=Degrade("compact", on_error),
    )
    return MemoryNode(node, name=name)
