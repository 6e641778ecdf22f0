"""The one extraction call over a span: similar stored facts, the call, the checks, redaction.

The stored facts most similar to the new turns (one batched store search, one query per user
message) are shown to the model under aliases (:mod:`~langmem_vault.extraction._aliases`); its
answer goes through :mod:`~langmem_vault.extraction._checks`, then PII redaction, before
anything of it can be stored.

>>> checked = extract_span(store, model, msgs, namespaces=ns)  # doctest: +SKIP
>>> checked.extraction.facts                                   # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.store.base import BaseStore, SearchItem, SearchOp

from langmem_vault.db._steps import Call, Steps, arun_steps, run_steps
from langmem_vault.extraction._aliases import AliasMap
from langmem_vault.extraction._checks import Checked, check_proposal
from langmem_vault.extraction._messages import (
    MAX_QUERY_CHARS,
    content_messages,
    message_id,
    message_text,
    span_times,
    with_time,
)
from langmem_vault.extraction._protocol import Extractor, as_extractor
from langmem_vault.extraction._redaction import redact_extraction
from langmem_vault.memory._namespaces import ResolvedNamespaces
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy

#: user messages of a span used as similarity queries (one batched store round trip)
MAX_SEARCH_QUERIES = 4


def _search_ops(
    namespace: tuple[str, ...], messages: Sequence[BaseMessage], limit: int
) -> list[SearchOp]:
    queries = [message_text(m, MAX_QUERY_CHARS) for m in messages if isinstance(m, HumanMessage)]
    queries = [q for q in queries if q.strip()][-MAX_SEARCH_QUERIES:]
    return [
        SearchOp(namespace, filter={"status": {"$ne": "superseded"}}, limit=limit, query=q)
        for q in queries
    ]


def _alias_map(results: Sequence[Any], limit: int) -> AliasMap:
    # Several queries (one per user message) share one batch round trip; keep each fact once,
    # at its best score, most relevant first.
    best: dict[str, SearchItem] = {}
    for items in results:
        for item in items or []:
            seen = best.get(item.key)
            if seen is None or (item.score or 0.0) > (seen.score or 0.0):
                best[item.key] = item
    ranked = sorted(best.values(), key=lambda it: -(it.score or 0.0))[:limit]
    rows = [
        (
            it.key,
            str(it.value.get("text", "")),
            str(it.value.get("category", "general")),
            float(it.value.get("confidence", 0.0)),
        )
        for it in ranked
    ]
    return AliasMap.build(rows)


def _finish(
    checked: Checked,
    thread_id: str | None,
    messages: Sequence[BaseMessage],
    redaction: RedactionPolicy | None,
) -> Checked:
    ids = [message_id(m) for m in messages]
    extraction = checked.extraction
    if redaction is not None:
        # Before anything is stored: the job's saved result included.
        extraction = redact_extraction(extraction, redaction)
    update: dict[str, Any] = {"thread_id": thread_id, "message_ids": ids}
    times = span_times(messages)
    if times is not None:  # when it was said: the facts' observed_at, the episode's span
        update |= {"started_at": times[0], "ended_at": times[1], "observed_at": times[1]}
    checked.extraction = extraction.model_copy(update=update)
    return checked


def _dated(messages: Sequence[BaseMessage], observed_at: datetime | None) -> list[BaseMessage]:
    span = content_messages(messages)
    return span if observed_at is None else [with_time(m, observed_at) for m in span]


def _span_steps(
    store: BaseStore,
    extractor: Any,
    messages: Sequence[BaseMessage],
    namespaces: ResolvedNamespaces,
    thread_id: str | None,
    similar_limit: int,
    redaction: RedactionPolicy | None,
    observed_at: datetime | None,
) -> Steps[Checked]:
    """``extract_span``: the similar facts, the model call, then the checks and redaction."""
    ex: Extractor = as_extractor(extractor)
    span = _dated(messages, observed_at)
    ops = _search_ops(namespaces.semantic, span, similar_limit)
    results = yield Call(lambda: store.batch(ops), lambda: store.abatch(ops))
    aliases = _alias_map(results, similar_limit)
    proposal = yield Call(
        lambda: ex.extract(span, aliases.facts), lambda: ex.aextract(span, aliases.facts)
    )

    def finish() -> Checked:
        return _finish(check_proposal(proposal, span, aliases), thread_id, span, redaction)

    # The checks (spaCy) and redaction are CPU-bound and load models on first use: async
    # callers run them off the event loop.
    checked: Checked = yield Call(finish, lambda: asyncio.to_thread(finish))
    return checked


def extract_span(
    store: BaseStore,
    extractor: Any,
    messages: Sequence[BaseMessage],
    *,
    namespaces: ResolvedNamespaces,
    thread_id: str | None = None,
    similar_limit: int = 8,
    redaction: RedactionPolicy | None = DEFAULT_POLICY,
    observed_at: datetime | None = None,
) -> Checked:
    """One extraction over ``messages``: similar stored facts, one call, the checks, then PII
    redaction under ``redaction`` (None turns it off).

    ``extractor`` is a chat model, an ``init_chat_model`` string or an ``Extractor``.
    ``observed_at`` dates the messages that carry no time of their own (a session date);
    relative dates are resolved against each message's time (see docs/time.md).

    >>> checked = extract_span(store, model, msgs, namespaces=ns)  # doctest: +SKIP
    >>> checked.extraction.facts                                   # doctest: +SKIP
    """
    steps = _span_steps(
        store, extractor, messages, namespaces, thread_id, similar_limit, redaction, observed_at
    )
    return run_steps(steps)


async def aextract_span(
    store: BaseStore,
    extractor: Any,
    messages: Sequence[BaseMessage],
    *,
    namespaces: ResolvedNamespaces,
    thread_id: str | None = None,
    similar_limit: int = 8,
    redaction: RedactionPolicy | None = DEFAULT_POLICY,
    observed_at: datetime | None = None,
) -> Checked:
    """Async twin of :func:`extract_span`."""
    steps = _span_steps(
        store, extractor, messages, namespaces, thread_id, similar_limit, redaction, observed_at
    )
    return await arun_steps(steps)
