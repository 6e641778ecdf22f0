"""Reciprocal rank fusion: several ranked lists of candidates, one ranking.

Each *branch* of recall (vector similarity, keyword coverage, the thread of the strongest
matches, entities, time...) ranks the candidates it knows, best first, on a scale of its own.
Scores of different branches do not compare (a cosine of 0.4 and a coverage of 0.4 mean
different things); ranks do. A candidate's fused score is the weighted sum over the branches
that ranked it of ``weight / (k + rank)`` (ranks from 1; Cormack, Clarke and Buettcher,
SIGIR 2009), so a memory two branches agree on beats one that only one branch found, and a
new branch plugs in as one more list. A small ``k`` (10, not the paper's 60) lets the top of
each list count for more, which is what recall@10 rewards (measured on LoCoMo conversations
0-4: bench/RESULTS.md).

>>> fused = fuse({"vector": [("a", 0.9), ("b", 0.8)], "keyword": [("b", 0.5)]})
>>> [(f.key, round(f.score, 4)) for f in fused]
[('b', 0.1742), ('a', 0.0909)]
>>> fused[0].parts["keyword"]
BranchHit(rank=1, score=0.5)
>>> [(f.key, round(f.score, 4)) for f in fuse_more(fused, "thread", [("a", 0.7)])]
[('a', 0.1818), ('b', 0.1742)]
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["DEFAULT_K", "BranchHit", "Fused", "fuse", "fuse_more", "ranked"]

K = TypeVar("K", bound=Hashable)

#: the rank constant: ``weight / (k + rank)``
DEFAULT_K = 10.0


@dataclass(frozen=True)
class BranchHit:
    """Where one branch ranked a memory (1 = its best) and the branch's own score for it."""

    rank: int
    score: float


@dataclass(frozen=True)
class Fused(Generic[K]):
    """A candidate's fused score and the hit of each branch that ranked it."""

    key: K
    score: float
    parts: Mapping[str, BranchHit] = field(default_factory=dict)


def ranked(scores: Mapping[K, float]) -> list[tuple[K, float]]:
    """``scores`` as a ranked list, best first (ties keep the mapping's order).

    >>> ranked({"a": 0.1, "b": 0.7})
    [('b', 0.7), ('a', 0.1)]
    """
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)


def fuse(
    branches: Mapping[str, Sequence[tuple[K, float]]],
    weights: Mapping[str, float] | None = None,
    *,
    k: float = DEFAULT_K,
) -> list[Fused[K]]:
    """Fuse ranked lists (each best first, ``(key, score)`` pairs) into one ranking, best
    first. ``weights`` scale each branch (a branch not named weighs 1; 0 turns it off). A key
    listed twice in one branch keeps its best rank. Ties keep first-seen order."""
    if k <= 0:
        raise ValueError(f"k must be > 0, got {k}")
    scores: dict[K, float] = {}
    parts: dict[K, dict[str, BranchHit]] = {}
    for name, hits in branches.items():
        weight = 1.0 if weights is None else float(weights.get(name, 1.0))
        _add_branch(scores, parts, name, hits, weight, k)
    return _ranked(scores, parts)


def fuse_more(
    fused: Sequence[Fused[K]],
    name: str,
    hits: Sequence[tuple[K, float]],
    weight: float = 1.0,
    *,
    k: float = DEFAULT_K,
) -> list[Fused[K]]:
    """``fused`` with one more branch's list added: the ranking :func:`fuse` gives all the
    lists at once, without ranking the others again (a branch that reads the first fusion,
    such as recall's neighbours)."""
    if k <= 0:
        raise ValueError(f"k must be > 0, got {k}")
    scores = {f.key: f.score for f in fused}
    parts = {f.key: dict(f.parts) for f in fused}
    _add_branch(scores, parts, name, hits, weight, k)
    return _ranked(scores, parts)


def _add_branch(
    scores: dict[K, float],
    parts: dict[K, dict[str, BranchHit]],
    name: str,
    hits: Sequence[tuple[K, float]],
    weight: float,
    k: float,
) -> None:
    """Add one branch's reciprocal ranks to ``scores`` and its hits to ``parts`` (a weight of
    0 turns it off; a key listed twice keeps its best rank)."""
    if weight == 0.0:
        return
    rank = 0
    for key, score in hits:
        hit = parts.get(key)
        if hit is None:
            hit = parts[key] = {}
        elif name in hit:
            continue
        rank += 1
        scores[key] = scores.get(key, 0.0) + weight / (k + rank)
        hit[name] = BranchHit(rank, float(score))


def _ranked(scores: dict[K, float], parts: dict[K, dict[str, BranchHit]]) -> list[Fused[K]]:
    # sorted() is stable: ties keep first-seen order
    order = sorted(scores, key=lambda key: scores[key], reverse=True)
    return [Fused(key, scores[key], parts[key]) for key in order]
