"""How useful a stored memory is for this turn, and a category-balanced pick of the best.

The base score of a fact is ``confidence x 0.7 + recency x 0.3`` where recency decays with a
7-day time constant. With a user message the store's search relevance is blended in; a
utility factor (0.5 is neutral) nudges facts the model found useful before, and a layer
factor prefers long-term and working memories over another session's short-term ones
(:meth:`~langmem_vault.memory._layers.LayerPolicy.factor`). Scoring works on
raw stored dicts, so ranking hundreds of candidates costs no model validation.

>>> from datetime import datetime, timezone
>>> now = datetime(2026, 1, 8, tzinfo=timezone.utc)
>>> fact = {"confidence": 1.0, "updated_at": "2026-01-01T00:00:00Z", "utility": 0.5}
>>> round(base_score(fact, now), 3)
0.81
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from langmem_vault.memory._layers import DEFAULT_LAYERS, LayerPolicy
from langmem_vault.memory._recall.fusion import BranchHit

__all__ = [
    "ScoredMemory",
    "ScoringWeights",
    "balance_categories",
    "base_score",
    "recency",
    "score_memory",
    "score_parts",
]


@dataclass(frozen=True)
class ScoringWeights:
    """Knobs of the blend; the defaults are the issue's (0.7 / 0.3, 7-day decay).

    ``relevance`` is the share of the final score given to search relevance when there is a
    user message; the rest goes to the base score.
    """

    confidence: float = 0.7
    recency: float = 0.3
    decay_days: float = 7.0
    relevance: float = 0.6
    #: how strongly utility moves the score: factor = 1 + utility_weight x (utility - 0.5)
    utility_weight: float = 0.5
    #: the layers' ranking factors (and lifetimes, see memory.layers)
    layers: LayerPolicy = DEFAULT_LAYERS


DEFAULT_WEIGHTS = ScoringWeights()


@dataclass(frozen=True)
class ScoredMemory:
    """A stored memory with its score for this turn (``relevance`` None: no query)."""

    key: str
    value: Mapping[str, Any]
    score: float
    relevance: float | None = None
    namespace: tuple[str, ...] = field(default=())
    #: recall's fused score and each branch's hit (``recall.fusion``); empty without recall
    fused: float | None = None
    parts: Mapping[str, BranchHit] = field(default_factory=dict)

    @property
    def category(self) -> str:
        return str(self.value.get("category", "general"))


def as_datetime(value: Any) -> datetime | None:
    """Parse a stored timestamp (ISO string or datetime) as an aware datetime; None if absent."""
    if isinstance(value, str):
        return _parsed(value) if value else None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return None


# A turn's ranking reads the same stamps again and again (about 555 reads of some 150 distinct
# strings at 10k facts: the ranking, the validity and time rules, the rendering); a datetime
# is immutable, so one parse serves them all, and the next turns' too.
@lru_cache(maxsize=4096)
def _parsed(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def recency(
    when: datetime | str | None, now: datetime, *, decay_days: float = DEFAULT_WEIGHTS.decay_days
) -> float:
    """``exp(-age / decay_days)``: 1.0 now, about 0.37 after a week, 0.0 when unknown.

    >>> from datetime import datetime, timezone
    >>> day = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> recency(day, day)
    1.0
    """
    return _recency(as_datetime(when), now, decay_days)


def _recency(moment: datetime | None, now: datetime, decay_days: float) -> float:
    # recency() of a moment already parsed: the ranking scores every candidate each turn
    if moment is None:
        return 0.0
    age_days = max((now - moment).total_seconds(), 0.0) / 86400.0
    return math.exp(-age_days / decay_days)


def last_touched(value: Mapping[str, Any]) -> datetime | None:
    """The later of a memory's last update and last access (None when neither is known)."""
    # A memory the user keeps coming back to stays fresh: use the latest of update/access.
    # (Compared by hand, not max() over a list: about a microsecond less per candidate, and
    # a tie keeps the update's stamp as max() did.)
    updated = as_datetime(value.get("updated_at"))
    accessed = as_datetime(value.get("last_accessed"))
    if accessed is None or (updated is not None and updated >= accessed):
        return updated
    return accessed


def base_score(
    value: Mapping[str, Any], now: datetime, weights: ScoringWeights = DEFAULT_WEIGHTS
) -> float:
    """``confidence x 0.7 + recency x 0.3`` (recency of the last update or access)."""
    confidence = float(value.get("confidence", 1.0))
    fresh = _recency(last_touched(value), now, weights.decay_days)
    return weights.confidence * confidence + weights.recency * fresh


def score_memory(
    value: Mapping[str, Any],
    now: datetime,
    *,
    relevance: float | None = None,
    weights: ScoringWeights = DEFAULT_WEIGHTS,
    session: str | None = None,
) -> float:
    """Final score: relevance blended with the base score, times a utility factor and a
    layer factor (``session``: this turn's thread id, whose short-term memories compete at
    full weight).

    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> v = {"confidence": 0.9, "updated_at": now.isoformat()}
    >>> score_memory(v, now, relevance=0.9) > score_memory(v, now, relevance=0.1)
    True
    """
    base = base_score(value, now, weights)
    if relevance is not None:
        rel = min(max(relevance, 0.0), 1.0)
        base = weights.relevance * rel + (1.0 - weights.relevance) * base
    utility = float(value.get("utility", 0.5))
    layer = weights.layers.factor(value, session)
    return base * (1.0 + weights.utility_weight * (utility - 0.5)) * layer


def score_parts(
    memory: ScoredMemory, now: datetime, weights: ScoringWeights = DEFAULT_WEIGHTS
) -> dict[str, float | None]:
    """The parts of a scored memory's score, for the injection trace: search relevance (None
    without a query), confidence, recency of the last update or access, utility, the total;
    for a memory recall ranked, its fused score and each branch's rank (``vector_rank``...).

    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> m = ScoredMemory("k", {"confidence": 0.9, "updated_at": now.isoformat()}, 0.7, 0.5)
    >>> score_parts(m, now)
    {'relevance': 0.5, 'confidence': 0.9, 'recency': 1.0, 'utility': 0.5, 'score': 0.7}
    """
    value = memory.value
    latest = last_touched(value)
    parts: dict[str, float | None] = {
        "relevance": None if memory.relevance is None else round(memory.relevance, 4),
        "confidence": round(float(value.get("confidence", 1.0)), 4),
        "recency": round(_recency(latest, now, weights.decay_days), 4),
        "utility": round(float(value.get("utility", 0.5)), 4),
        "score": round(memory.score, 4),
    }
    if memory.fused is not None:
        # recall's fusion (recall.fusion): its score and where each branch ranked the memory
        parts["fused"] = round(memory.fused, 4)
        parts |= {f"{name}_rank": float(hit.rank) for name, hit in memory.parts.items()}
    return parts


def balance_categories(
    ranked: Sequence[ScoredMemory], limit: int, *, max_share: float = 0.4
) -> list[ScoredMemory]:
    """Pick up to ``limit`` memories, best first, no category above ``max_share`` of them
    while other categories still have candidates (then the rest fill in by score).

    >>> items = [ScoredMemory(str(i), {"category": "preference"}, 1 - i / 10) for i in range(5)]
    >>> items.append(ScoredMemory("p", {"category": "project"}, 0.1))
    >>> [m.key for m in balance_categories(items, 3, max_share=0.5)]
    ['0', '1', 'p']
    """
    if limit <= 0:
        return []
    ordered = sorted(ranked, key=lambda m: m.score, reverse=True)
    cap = max(1, math.ceil(limit * max_share))
    picked: list[ScoredMemory] = []
    counts: dict[str, int] = {}
    overflow: list[ScoredMemory] = []
    for memory in ordered:
        if len(picked) >= limit:
            break
        if counts.get(memory.category, 0) >= cap:
            overflow.append(memory)
            continue
        counts[memory.category] = counts.get(memory.category, 0) + 1
        picked.append(memory)
    for memory in overflow:
        if len(picked) >= limit:
            break
        picked.append(memory)
    picked.sort(key=lambda m: m.score, reverse=True)
    return picked


def rank(candidates: Iterable[ScoredMemory]) -> list[ScoredMemory]:
    """Candidates sorted best first."""
    return sorted(candidates, key=lambda m: m.score, reverse=True)
