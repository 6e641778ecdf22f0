"""Store reads shared by the facade and inject: candidate searches, scoring, access stamps.

These are plan pieces (see :mod:`langmem_vault.memory.plans`): functions that build store ops
and functions that turn their results into scored memories, so inject can put the fact,
instruction and episode searches into ONE ``batch`` round trip.

>>> op = fact_search_op(("memories", "u1", "semantic"), "tea", candidates=20)
>>> op.limit, op.query
(20, 'tea')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import GetOp, Item, PutOp, SearchItem, SearchOp

from langmem_vault.memory.models import Instruction
from langmem_vault.memory.plans import StorePlan
from langmem_vault.memory.scoring import (
    DEFAULT_WEIGHTS,
    ScoredMemory,
    ScoringWeights,
    as_datetime,
    score_memory,
)

__all__ = [
    "applicable_instructions",
    "fact_search_op",
    "score_items",
    "touch_plan",
]


def fact_search_op(
    namespace: tuple[str, ...],
    query: str | None,
    *,
    candidates: int = 50,
) -> SearchOp:
    """Search op for candidate facts: by relevance with a query, else the store's order.

    No status filter here: on both Postgres stores a JSON filter makes the search scan and
    costs more than it saves (measured in bench/nodes_bench.py); closed and pending facts are
    dropped in :func:`score_items` instead.
    """
    return SearchOp(
        namespace_prefix=namespace,
        limit=candidates,
        query=query or None,
        refresh_ttl=False,
    )


def score_items(
    items: Iterable[Item | SearchItem],
    now: datetime,
    *,
    use_relevance: bool,
    weights: ScoringWeights = DEFAULT_WEIGHTS,
    include_pending: bool = False,
) -> list[ScoredMemory]:
    """Score stored items best first, skipping closed or out-of-window facts.

    Search scores of one query often sit in a narrow band (cosines of 0.2-0.35), where they
    would barely move the blend; they are rescaled to [0, 1] across the candidates (best = 1,
    worst = 0) so relevance keeps its share against confidence and recency.
    """
    allowed = {"active", "pending_confirmation"} if include_pending else {"active"}
    kept: list[Item | SearchItem] = []
    for item in items:
        value = item.value
        if value.get("status", "active") not in allowed:
            continue
        valid_to = as_datetime(value.get("valid_to"))
        if valid_to is not None and valid_to <= now:
            continue
        kept.append(item)
    # Un-indexed items come back with score None (InMemoryStore); they rank as 0.
    raw = [float(getattr(item, "score", None) or 0.0) for item in kept]
    low, high = (min(raw), max(raw)) if raw else (0.0, 0.0)
    span = high - low
    scored: list[ScoredMemory] = []
    for item, score in zip(kept, raw, strict=True):
        relevance: float | None = None
        if use_relevance:
            relevance = (score - low) / span if span > 1e-9 else 1.0
        scored.append(
            ScoredMemory(
                key=item.key,
                value=item.value,
                score=score_memory(item.value, now, relevance=relevance, weights=weights),
                relevance=score if use_relevance else None,
                namespace=tuple(item.namespace),
            )
        )
    scored.sort(key=lambda m: m.score, reverse=True)
    return scored


def applicable_instructions(
    items: Iterable[Item | SearchItem], message: str | None, now: datetime
) -> list[tuple[str, Instruction]]:
    """Active, unexpired instructions whose condition holds, highest priority first.

    Stored values that no longer validate are skipped rather than failing the turn.
    """
    found: list[tuple[str, Instruction]] = []
    for item in items:
        try:
            instruction = Instruction.from_store(item.value)
        except ValueError:
            continue
        if instruction.applies(message, now):
            found.append((item.key, instruction))
    found.sort(key=lambda pair: (-pair[1].priority, pair[1].created_at))
    return found


def touch_plan(
    targets: Sequence[tuple[tuple[str, ...], str]],
    now: datetime,
    *,
    cited: Sequence[tuple[tuple[str, ...], str]] = (),
    utility_step: float = 0.1,
) -> StorePlan[int]:
    """Record that memories were injected (access count and last accessed; usage count for
    instructions) and, for cited ones,
    raise utility a step toward 1. Re-reads each item right before writing so a concurrent
    reconcile's changes to other fields are kept. Returns how many items were updated."""
    keys = list(dict.fromkeys([*targets, *cited]))
    if not keys:
        return 0
    results = yield [GetOp(ns, key, refresh_ttl=False) for ns, key in keys]
    cited_set = set(cited)
    injected = set(targets)
    puts: list[PutOp] = []
    for (ns, key), item in zip(keys, results, strict=True):
        if not isinstance(item, Item):
            continue
        value: dict[str, Any] = dict(item.value)
        if (ns, key) in injected and "usage_count" in value:  # a standing instruction
            value["usage_count"] = int(value["usage_count"]) + 1
        elif (ns, key) in injected:
            value["access_count"] = int(value.get("access_count", 0)) + 1
            value["last_accessed"] = now.isoformat()
        if (ns, key) in cited_set and "utility" in value:
            utility = float(value["utility"])
            value["utility"] = round(utility + utility_step * (1.0 - utility), 6)
        # Counters only: the text is unchanged, so keep the existing index (no re-embedding).
        puts.append(PutOp(ns, key, value, index=False))
    if puts:
        yield puts
    return len(puts)
