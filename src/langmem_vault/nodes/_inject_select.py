"""What inject reads and picks each turn: the store reads of one turn in one batch
(recall's ops, the standing instructions, recent episodes, the owner's private facts), then
the ranking of recall (:mod:`~langmem_vault.memory._recall.recall_plan`), the pending-fact
rule, the category balance and the episodes' order, rendered by
:mod:`~langmem_vault.nodes._inject_render`.

>>> from langchain_core.messages import AIMessage, HumanMessage
>>> latest_user_text([HumanMessage("where do I live?"), AIMessage("Lyon")])
'where do I live?'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.store.base import BaseStore, Item, SearchItem, SearchOp

from langmem_vault.db._steps import Together, Within
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.extraction._messages import query_text
from langmem_vault.memory._models import Instruction
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces
from langmem_vault.memory._recall.private_recall import DEFAULT_MAX_PRIVATE, private_search_op
from langmem_vault.memory._recall.recall_batch import RecallFound, read_found, recall_ops
from langmem_vault.memory._recall.recall_plan import rank_found
from langmem_vault.memory._recall.recall_query import Branch, RecallQuery, unnamed_candidates
from langmem_vault.memory._recall.retrieval import applicable_instructions, newest_plan, scan_op
from langmem_vault.memory._recall.scoring import (
    ScoredMemory,
    ScoringWeights,
    as_datetime,
    balance_categories,
)
from langmem_vault.memory._recall.usage import Target, split_usage, usage_search_op
from langmem_vault.nodes._inject_render import PENDING, Injection, TokenCounter, render
from langmem_vault.telemetry._tracing import annotate

__all__ = [
    "DEFAULT_MAX_PENDING",
    "Candidates",
    "InjectOptions",
    "candidates_plan",
    "latest_user_text",
    "select",
]

#: pending facts may join when their relevance is within this of the best active fact's
PENDING_MARGIN = 0.02
DEFAULT_MAX_PENDING = 2


def latest_user_text(messages: Sequence[BaseMessage]) -> str | None:
    """What inject searches with: the last human message's text parts, cleaned and bounded
    to what search accepts (:func:`~langmem_vault.extraction._messages.query_text`), or None
    when the user has said nothing searchable."""
    return query_text(messages)


@dataclass(frozen=True)
class InjectOptions:
    """Settings of an inject node (see :func:`create_inject_node`)."""

    namespaces: MemoryNamespaces
    max_tokens: int
    max_facts: int
    max_episodes: int
    max_instructions: int
    candidates: int
    max_share: float
    include_private: bool
    weights: ScoringWeights
    max_private: int = DEFAULT_MAX_PRIVATE
    max_pending: int = DEFAULT_MAX_PENDING
    #: a message that names someone also searches without the names (recall's second search)
    search_without_names: bool = False


def _episode_score(value: Mapping[str, Any], now: datetime, weights: ScoringWeights) -> float:
    # Recent and important first; episodes carry no confidence.
    ended = as_datetime(value.get("ended_at"))
    age_days = max((now - ended).total_seconds(), 0.0) / 86400.0 if ended else 365.0
    importance = float(value.get("importance", 0.5))
    return importance * 0.5 + 0.5 / (1.0 + age_days / weights.decay_days)


def _with_pending(scored: list[ScoredMemory], limit: int) -> list[ScoredMemory]:
    """Active facts, plus at most ``limit`` pending ones that match the message at least as well
    as the best active fact does (nothing better matches): a user who never confirms still
    benefits, and a pending guess never crowds out what is confirmed."""
    active = [m for m in scored if m.value.get("status", "active") != PENDING]
    best = max((m.relevance or 0.0 for m in active), default=0.0)
    pending = [
        m
        for m in scored
        if m.value.get("status") == PENDING
        and m.relevance is not None
        and m.relevance >= best - PENDING_MARGIN
    ]
    pending.sort(key=lambda m: m.relevance or 0.0, reverse=True)
    return active + pending[:limit]


@dataclass(frozen=True)
class Candidates:
    """What one inject turn read from the store, before ranking."""

    message: str | None
    instructions: list[tuple[str, Instruction]]
    #: recall's candidates (``memory.recall.recall_plan``)
    facts: RecallFound
    episodes: list[Any]
    private: list[Item]
    #: the best ``max_episodes`` of ``episodes``, recent and important first
    best_episodes: list[ScoredMemory]


def candidates_plan(
    messages: Sequence[BaseMessage],
    config: Mapping[str, Any] | None,
    opts: InjectOptions,
    now: datetime,
    *,
    joined_usage: bool = False,
    branches: Sequence[Branch] = (),
    apart: BaseStore | None = None,
) -> StorePlan[Candidates]:
    """The store reads of one inject turn, in one batch (driven sync or async): recall's ops
    (``memory.recall.recall_plan``), the standing instructions, the recent episodes and the
    owner's private facts.

    ``joined_usage``: the store runs ``MirrorSearchOp`` (``store.mirrors``), so the fact
    searches bring their usage records along; else a second batch reads them.
    ``apart``: a store that runs two batches at once (a pool: a connection each), the one
    the plan is driven on. With a message, recall's ops (whose batch embeds it) go in one
    batch and the other reads in another on it, run at the same time
    (:class:`~langmem_vault.db._steps.Together`); what those reads give (the instructions
    that apply, the episodes in order) is worked out beside the search too.
    """
    ns = opts.namespaces.resolve(config)
    message = latest_user_text(messages)
    request = RecallQuery(
        ns.semantic,
        message,
        candidates=opts.candidates,
        joined_usage=joined_usage,
        unnamed=unnamed_candidates(opts.candidates) if opts.search_without_names else 0,
    )
    recall = recall_ops(request, branches)
    # Private facts are not in the index: read them by filter, rank them in process.
    private_op: Any = private_search_op(ns.semantic, limit=opts.max_private)
    if joined_usage:
        private_op = usage_search_op(private_op)
    # list[Any]: a MirrorSearchOp is the store's own op, outside langgraph's Op union
    reads: list[Any] = [
        SearchOp(ns.instructions, filter={"active": True}, limit=100, refresh_ttl=False),
        # Recent episodes without a query (one embedding per turn is enough): the first page
        # of the namespace, sorted below by the episodes' own end time.
        scan_op(ns.episodes),
        *([private_op] if opts.include_private else []),
    ]
    if apart is not None and message is not None:
        # The message's embedding and the searches that need it, beside the reads that
        # do not: the database answers those while the query is embedded, and the reads'
        # own work (each instruction validated and its condition tested, the episodes
        # ordered) is done by then too, off the turn's path (about 0.25 ms of it at p50,
        # bench/RESULTS.md session 18).
        recalled, read = yield Together(
            Batch(recall), Within(apart, _reads_plan(reads, ns, opts, message, now, joined_usage))
        )
        found = yield from read_found(request, recalled, branches, also=read.private)
    else:
        results = yield Batch([*reads[:2], *recall, *reads[2:]])
        recalled, first = results[2 : 2 + len(recall)], [*results[:2], *results[2 + len(recall) :]]
        private, usage = _private_read(first, opts, joined_usage)
        found = yield from read_found(request, recalled, branches, also=private)
        read = yield from _read_plan(first, ns, opts, message, now, private, usage)
    if read.usage:
        found = replace(found, usage={**found.usage, **read.usage})
    return Candidates(
        message=message,
        instructions=read.instructions,
        facts=found,
        episodes=read.episodes,
        private=read.private,
        best_episodes=read.best_episodes,
    )


@dataclass(frozen=True)
class _Read:
    """What the reads that need no query vector give, worked out."""

    instructions: list[tuple[str, Instruction]]
    episodes: list[Any]
    best_episodes: list[ScoredMemory]
    private: list[Any]
    usage: dict[Target, dict[str, Any]]


def _private_read(
    read: Sequence[Any], opts: InjectOptions, joined_usage: bool
) -> tuple[list[Any], dict[Target, dict[str, Any]]]:
    """The private facts the reads found, and their usage records when joined to them."""
    private: list[Any] = list(read[2]) if opts.include_private else []
    if joined_usage:
        return split_usage(private)
    return private, {}


def _read_plan(
    read: Sequence[Any],
    ns: ResolvedNamespaces,
    opts: InjectOptions,
    message: str | None,
    now: datetime,
    private: list[Any],
    usage: dict[Target, dict[str, Any]],
) -> StorePlan[_Read]:
    """The reads' results worked out: the applicable instructions, highest priority first,
    and the recent episodes, newest first (more pages read when there are)."""
    instruction_items, episode_items = read[:2]
    recent = yield from newest_plan(
        ns.episodes, "ended_at", max(opts.max_episodes * 5, 10), first=episode_items
    )
    instructions = applicable_instructions(instruction_items, message, now)
    best = _best_episodes(recent, opts, now)
    return _Read(instructions[: opts.max_instructions], list(recent), best, private, usage)


def _best_episodes(
    episodes: Sequence[Any], opts: InjectOptions, now: datetime
) -> list[ScoredMemory]:
    """The episodes to show, best first: recent and important."""
    return sorted(
        (
            ScoredMemory(
                i.key,
                i.value,
                _episode_score(i.value, now, opts.weights),
                namespace=tuple(i.namespace),
            )
            for i in episodes
        ),
        key=lambda m: m.score,
        reverse=True,
    )[: opts.max_episodes]


def _reads_plan(
    reads: list[Any],
    ns: ResolvedNamespaces,
    opts: InjectOptions,
    message: str | None,
    now: datetime,
    joined_usage: bool,
) -> StorePlan[_Read]:
    """The reads that need no query vector, in a batch of their own, then worked out."""
    read = yield Batch(reads)
    private, usage = _private_read(read, opts, joined_usage)
    return (yield from _read_plan(read, ns, opts, message, now, private, usage))


def _public(found: RecallFound, private: Sequence[SearchItem]) -> RecallFound:
    """The search's candidates without private facts: those rank from their opened copy
    (a sealed one nobody opened carries only a placeholder and is never shown)."""
    opened = {(tuple(p.namespace), p.key) for p in private}
    pool = {
        target: c
        for target, c in found.pool.items()
        if target not in opened and not c.item.value.get("private") and "enc" not in c.item.value
    }
    return replace(found, pool=pool)


def select(
    found: Candidates,
    private: Sequence[SearchItem],
    opts: InjectOptions,
    count: TokenCounter,
    now: datetime,
    *,
    session: str | None = None,
) -> Injection:
    """Rank the candidates as :meth:`MemoryVault.recall
    <langmem_vault.memory._vault.MemoryVault.recall>` does (public search results and the
    scored private facts in one fusion) and render the best within the budget. ``session``
    (the thread id): this session's short-term memories compete at full weight (see
    ``memory.layers``)."""
    use_relevance = found.message is not None
    scored = rank_found(
        _public(found.facts, private),
        now,
        weights=opts.weights,
        include_pending=use_relevance and opts.max_pending > 0,
        session=session,
        also=[p for p in private if "enc" not in p.value],
    )
    scored = _with_pending(scored, opts.max_pending)
    facts = balance_categories(scored, opts.max_facts, max_share=opts.max_share)
    injection = render(
        found.instructions,
        facts,
        found.best_episodes,
        max_tokens=opts.max_tokens,
        count=count,
        now=now,
        weights=opts.weights,
    )
    annotate(
        candidates=len(found.facts.pool)
        + len(private)
        + len(found.episodes)
        + len(found.instructions),
        injected=injection.count,
    )
    return injection
