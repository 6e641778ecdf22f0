"""The built-in branches' ranked lists over recall's kept candidates (``vector``,
``keyword``, ``thread``, ``time``, ``instances``, ``shared``) and the extra branches' lists,
with the settings that fuse them (:class:`RecallSettings`); ``recall_plan.rank_found`` fuses them.

>>> DEFAULT_SETTINGS.weights["keyword"], DEFAULT_SETTINGS.k
(1.5, 10.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langmem_vault.memory._recall.fusion import DEFAULT_K
from langmem_vault.memory._recall.instances import asked_instances, instance_ranked
from langmem_vault.memory._recall.recall_batch import RecallFound
from langmem_vault.memory._recall.recall_query import Candidate, search_score
from langmem_vault.memory._recall.shared import SHARED_QUESTION, shared_ranked
from langmem_vault.memory._recall.subjects import UNNAMED_SHARE, named_share
from langmem_vault.memory._recall.time_filter import QueryTime, TimeWindow, said_at, time_ranked
from langmem_vault.memory._recall.usage import Target

__all__ = [
    "DEFAULT_BRANCH_WEIGHTS",
    "DEFAULT_SETTINGS",
    "Kept",
    "RecallSettings",
    "branch_lists",
    "said_in_threads",
]

#: each branch's weight in the fusion, hand-tuned on LoCoMo conversations 0-4 (sessions 8-14),
#: then fitted in session 15 by bench/fusion_fit.py (coordinate ascent over these, k and the
#: later stages' settings, on recall's captured batches): it keeps them, and refits on four
#: conversations lose multi-hop on the fifth (bench/RESULTS.md). Refit there after a change.
DEFAULT_BRANCH_WEIGHTS: Mapping[str, float] = {
    "vector": 1.0,
    "keyword": 1.5,
    "thread": 0.8,
    "time": 1.5,
    "instances": 1.5,
    "neighbour": 0.6,
    "feedback": 1.0,
    # session 16: on the few questions that ask what two people share (bench/RESULTS.md)
    "shared": 2.5,
}

#: the candidates that answer (``validity.answers_at``), each with its fact value
Kept = Mapping[Target, tuple[Candidate, Mapping[str, Any]]]


@dataclass(frozen=True)
class RecallSettings:
    """How the branches are fused: their weights (a branch not named weighs 1), the rank
    constant ``k``, how many of a thread's best matches score it (``thread_top``), and how
    many of the first fusion's best lend their score to their neighbours
    (``neighbour_sources``), what share of the way to the best relevance the facts whose
    subject the question names move (``subject_lift``, :mod:`~.subjects`), and how many of
    the first fusion's best lend their words to the ``feedback`` branch and how many of
    those words it keeps (``feedback_sources``, ``feedback_terms``, :mod:`~.feedback`), from
    how many candidates on (``feedback_min_candidates``: among fewer, how rare a word is says
    little, and the best few are most of them, so their own words rank them), and how many
    of each person's best lines the ``shared`` branch pairs (``shared_top``, :mod:`~.shared`)."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_BRANCH_WEIGHTS))
    k: float = DEFAULT_K
    thread_top: int = 3
    neighbour_sources: int = 40
    subject_lift: float = 0.5
    feedback_sources: int = 3
    feedback_terms: int = 20
    feedback_min_candidates: int = 20
    shared_top: int = 20


DEFAULT_SETTINGS = RecallSettings()


def _thread_list(kept: Kept, top: int) -> list[tuple[Target, float]]:
    """Each candidate with a thread, scored by the mean search score of its thread's ``top``
    best candidates (its own score breaks ties)."""
    by_thread: dict[str, list[float]] = {}
    for candidate, fact in kept.values():
        thread = fact.get("source_thread_id")
        if thread:
            by_thread.setdefault(str(thread), []).append(search_score(candidate.item) or 0.0)
    strength = {
        thread: sum(sorted(scores, reverse=True)[:top]) / min(top, len(scores))
        for thread, scores in by_thread.items()
    }
    scored = [
        (target, strength[str(fact["source_thread_id"])], (search_score(candidate.item) or 0.0))
        for target, (candidate, fact) in kept.items()
        if fact.get("source_thread_id")
    ]
    scored.sort(key=lambda t: (t[1], t[2]), reverse=True)
    return [(target, thread) for target, thread, _ in scored]


def said_in_threads(kept: Kept) -> dict[Target, tuple[str, float]]:
    """Each kept candidate said in a thread: the thread, and when (for its neighbours)."""
    said = {}
    for target, (candidate, fact) in kept.items():
        thread = fact.get("source_thread_id")
        if not thread:  # most facts are said in no thread: no moment to read
            continue
        moment = said_at(fact) or getattr(candidate.item, "created_at", None)
        if moment is not None:
            said[target] = (str(thread), moment.timestamp())
    return said


def branch_lists(
    found: RecallFound,
    kept: Kept,
    settings: RecallSettings,
    asked: QueryTime,
    window: TimeWindow | None,
    texts: Mapping[Target, str],
) -> dict[str, list[tuple[Target, float]]]:
    """The built-in branches' lists over the kept candidates, then the extra branches'."""
    # A score of 0 is no evidence (a word ranker's miss), not a last place.
    vector = {
        t: score
        for t, (c, _) in kept.items()
        if (score := c.vector if c.vector is not None else search_score(c.item)) is not None
        and score > 0
    }
    keyword = {t: c.keyword for t, (c, _) in kept.items() if c.keyword}
    lists: dict[str, list[tuple[Target, float]]] = {
        "vector": sorted(vector.items(), key=lambda p: p[1], reverse=True),
        # coverage ties are common (one shared name): the better vector match goes first
        "keyword": sorted(
            keyword.items(),
            key=lambda p: (p[1], vector.get(p[0], 0.0)),
            reverse=True,
        ),
        "thread": _thread_list(kept, settings.thread_top),
        "time": time_ranked(
            window, asked.asks_when, {t: fact for t, (_, fact) in kept.items()}, vector
        ),
    }
    if found.unnamed and named_share(found.query.text or "", texts) >= UNNAMED_SHARE:
        # the names the second search left out are whose lines these are: its cosine ranks
        # what they say (LoCoMo 0-4: multi-hop +3, all four +2 points; bench/RESULTS.md)
        lists["vector"] = [(t, s) for t, s in found.unnamed if t in kept and s > 0]
    instances = asked_instances(found.query.text or "")
    if instances:  # most questions name no category: no texts to scan
        lists["instances"] = instance_ranked(instances, texts, vector)
    # beside the search without the names only (inject's default skips it), and only for a
    # question that asks what two people share: most do not, and need no threads read
    if found.unnamed and SHARED_QUESTION.search(found.query.text or ""):
        shared = shared_ranked(
            found.query.text or "",
            texts,
            dict(lists["vector"]),
            {t: thread for t, (thread, _) in said_in_threads(kept).items()},
            top=settings.shared_top,
        )
        if shared:
            lists["shared"] = shared
    for name, hits in found.lists.items():
        lists[name] = [(t, s) for t, s in hits if t in kept]
    return lists
