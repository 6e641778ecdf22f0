"""Recall's one store batch: the ops it sends (:func:`recall_ops`: the hybrid search, the
search for the question without its names, each extra branch's ops) and what it read
(:func:`read_found`: the candidates, the branches' lists, the usage records), for the
ranking of ``recall_plan.rank_found``.

>>> q = RecallQuery(("memories", "u1", "semantic"), "What did Nate buy?", unnamed=10)
>>> [op.query for op in recall_ops(q)]
['What did Nate buy?', 'What did buy?']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import Item, SearchItem

from langmem_vault.db._store_plans import StorePlan
from langmem_vault.memory._recall.recall_query import (
    Branch,
    Candidate,
    RecallQuery,
    search_score,
    target_of,
)
from langmem_vault.memory._recall.retrieval import fact_search_op
from langmem_vault.memory._recall.usage import Target, read_usage_plan, usage_search_op
from langmem_vault.store._mirrors import Mirrored

__all__ = ["RecallFound", "read_found", "recall_ops"]


@dataclass(frozen=True)
class RecallFound:
    """What recall's batch read: the candidates, the extra branches' lists, usage records,
    and the cosine of each result of the search without the question's names (``unnamed``,
    best first)."""

    query: RecallQuery
    pool: dict[Target, Candidate]
    lists: dict[str, list[tuple[Target, float]]]
    usage: Mapping[Target, Mapping[str, Any]]
    unnamed: list[tuple[Target, float]] = field(default_factory=list)


def _search_op(query: RecallQuery, text: str | None, candidates: int) -> Any:
    search: Any = fact_search_op(query.namespace, text, candidates=candidates)
    return usage_search_op(search) if query.joined_usage else search


def recall_ops(query: RecallQuery, branches: Sequence[Branch] = ()) -> list[Any]:
    """The store ops of one recall, for a batch of the caller's (inject adds its own)."""
    unnamed = query.unnamed_text
    return [
        _search_op(query, query.text, query.candidates),
        *([_search_op(query, unnamed, query.unnamed)] if unnamed else []),
        *(op for branch in branches for op in branch.ops(query)),
    ]


def _read_page(
    page: Sequence[Any], pool: dict[Target, Candidate], joined: dict[Target, Mapping[str, Any]]
) -> list[Candidate]:
    """A search's results as candidates (the pool keeps the first seen of each), with the
    usage records joined to them."""
    found = []
    for hit in page:
        if isinstance(hit, Mirrored):
            candidate = Candidate(hit.item, hit.vector, hit.keyword)
            target = target_of(hit.item)
            if hit.mirror is not None:
                joined[target] = dict(hit.mirror.value)
        else:
            candidate = Candidate(hit)
            target = target_of(hit)
        pool.setdefault(target, candidate)
        found.append(candidate)
    return found


def _cosine(candidate: Candidate) -> float:
    score = candidate.vector if candidate.vector is not None else search_score(candidate.item)
    return score or 0.0


def read_found(
    query: RecallQuery,
    results: Sequence[Any],
    branches: Sequence[Branch] = (),
    *,
    also: Sequence[Item | SearchItem] = (),
) -> StorePlan[RecallFound]:
    """Read the results of :func:`recall_ops`' ops into candidates and branch lists; without
    joined usage, one more batch reads the usage records (of ``also``'s items too)."""
    searches = 2 if query.unnamed_text else 1
    pages, rest = results[:searches], list(results[searches:])
    pool: dict[Target, Candidate] = {}
    joined: dict[Target, Mapping[str, Any]] = {}
    _read_page(pages[0], pool, joined)
    unnamed = []
    if searches == 2:
        second = _read_page(pages[1], pool, joined)
        unnamed = sorted(
            ((target_of(c.item), _cosine(c)) for c in second), key=lambda p: p[1], reverse=True
        )
    lists: dict[str, list[tuple[Target, float]]] = {}
    for branch in branches:
        count = len(branch.ops(query))
        mine, rest = rest[:count], rest[count:]
        hits = branch.rank(query, mine, pool)
        for item, _ in hits:
            pool.setdefault(target_of(item), Candidate(item))
        lists[branch.name] = [(target_of(item), score) for item, score in hits]
    usage: Mapping[Target, Mapping[str, Any]] = joined
    if not query.joined_usage:
        usage = yield from read_usage_plan([*pool, *(target_of(i) for i in also)])
    return RecallFound(query, pool, lists, usage, unnamed)
