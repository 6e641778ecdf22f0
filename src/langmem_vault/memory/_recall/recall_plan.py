"""recall: the facts that answer a query, ranked by fusing independent branches.

One store batch (one round trip on VaultStore) reads the candidates: the store's hybrid
search over the user's facts, each result with its usage record and its two score parts
(``vector``: cosine similarity, ``keyword``: the query's weighted keyword coverage,
``store.mirrors.Mirrored``), plus the ops of any extra :class:`Branch` (entities, time...).
Then, in process, each branch ranks what it knows and :func:`~.fusion.fuse` fuses the lists:

- ``vector``: the candidates by cosine similarity;
- ``keyword``: those sharing a keyword with the query, by coverage (a rare name counts more);
- ``thread``: the candidates of the conversations (``source_thread_id``) whose best few
  matches score highest: what a user says about one thing tends to come together, so a turn
  that answers the question without naming its words ranks beside the ones that do;
- ``time``: for a question with a time ("in May 2023", "before I moved to Lyon", "when
  did ..."), the candidates that time points at (``time_filter.time_ranked``: in process,
  over the candidates, no statement of its own);
- ``instances``: for a question that asks for a category ("what activities ...", "which
  cities ..."), the candidates that name instances of it (``instances.instance_ranked``:
  in process, an offline lexicon);
- ``shared``: for a question that asks what two people it names share ("What animal do
  both Nate and Joanna like?"), each one's lines that say the same rare words as a line of
  the other's (``shared.shared_ranked``: in process, beside the search without the names);
- one list per extra :class:`Branch`: entity expansion (:class:`EntityBranch`) on stores
  with the entity index;
- ``feedback``: after a first fusion, the candidates that say the words of its best few
  (``feedback.feedback_ranked``: pseudo-relevance feedback, the answers to a list question
  share words with each other more than with the question);
- ``neighbour``: after that, what was said just before or after its best
  candidates in the same conversation (``neighbours.neighbour_ranked``), fused again with
  the others: the answer is often the reply to the sentence that matches the question.

Then the facts whose subject is the person the question names ("What does Melanie do?":
"Melanie: I ...") are lifted part of the way to the best (:mod:`~.subjects`). A question that
names someone also gets a second search in the same batch, for its text without the names
(``RecallQuery.unnamed`` candidates): when the people it names are the subjects of a quarter
or more of the candidates, the ``vector`` branch ranks that search's results by their cosine
(the names blur the question's embedding towards every line of that person's, whatever it
says).

The fused score, scaled to [0, 1] across the candidates, takes the place of search relevance
in the usual blend with confidence, recency, utility and layer (``recall.scoring``): the
facade's :meth:`~langmem_vault.memory._vault.MemoryVault.recall` and the inject node rank the
same way. ``as_of`` asks what held at that moment: facts valid then (superseded ones too),
none that started later.

Its parts, each in a module of its own: what is asked and what a branch sees
(:mod:`~.recall_query`), the batch's ops and what they read (:mod:`~.recall_batch`), which
facts may answer (:mod:`~.validity`), the built-in branches' lists and the fusion's settings
(:mod:`~.branch_lists`), entity expansion (:mod:`~.entity_branch`); this module ranks.

>>> q = RecallQuery(("memories", "u1", "semantic"), "where does Ana live", candidates=50)
>>> [type(op).__name__ for op in recall_ops(q)]
['SearchOp']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import SearchItem

from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._recall.branch_lists import (
    DEFAULT_BRANCH_WEIGHTS,
    DEFAULT_SETTINGS,
    Kept,
    RecallSettings,
    branch_lists,
    said_in_threads,
)
from langmem_vault.memory._recall.entity_branch import EntityBranch, default_branches
from langmem_vault.memory._recall.feedback import feedback_ranked
from langmem_vault.memory._recall.fusion import Fused, fuse, fuse_more
from langmem_vault.memory._recall.neighbours import neighbour_ranked
from langmem_vault.memory._recall.recall_batch import RecallFound, read_found, recall_ops
from langmem_vault.memory._recall.recall_query import (
    Branch,
    Candidate,
    RecallQuery,
    search_score,
    target_of,
)
from langmem_vault.memory._recall.retrieval import fact_value
from langmem_vault.memory._recall.scoring import (
    DEFAULT_WEIGHTS,
    ScoredMemory,
    ScoringWeights,
    score_memory,
)
from langmem_vault.memory._recall.subjects import named_subject
from langmem_vault.memory._recall.time_filter import (
    QueryTime,
    TimeWindow,
    question_window,
    read_query_time,
)
from langmem_vault.memory._recall.usage import Target, with_usage
from langmem_vault.memory._recall.validity import answers_at

# the names of recall's parts, for the callers that import them from here
__all__ = [
    "DEFAULT_BRANCH_WEIGHTS",
    "Branch",
    "Candidate",
    "EntityBranch",
    "RecallFound",
    "RecallQuery",
    "RecallSettings",
    "default_branches",
    "rank_found",
    "read_found",
    "recall_ops",
    "recall_plan",
]


def rank_found(
    found: RecallFound,
    now: datetime,
    *,
    weights: ScoringWeights = DEFAULT_WEIGHTS,
    settings: RecallSettings = DEFAULT_SETTINGS,
    include_pending: bool = False,
    session: str | None = None,
    also: Sequence[SearchItem] = (),
) -> list[ScoredMemory]:
    """The candidates (and ``also``: facts ranked elsewhere, such as the owner's opened
    private facts, by their own score) scored best first, each with its branch hits.

    Facts that do not answer at ``now`` (or ``as_of``) and values that are not facts are
    dropped first. With a query the fused score is the relevance of
    :func:`~.scoring.score_memory`, rescaled to [0, 1] across the candidates (best = 1,
    worst = 0): fused scores sit close together (1/11, 1/12...), where they would barely
    move the blend against confidence and recency. Without a query, facts rank by usefulness
    alone.
    """
    query = found.query
    allowed = {"active", "pending_confirmation"} if include_pending else {"active"}
    pool = dict(found.pool)
    for item in also:
        pool.setdefault(target_of(item), Candidate(item))
    facts = {t: fact_value(c.item) for t, c in pool.items()}
    asked = read_query_time(query.text, now=now, as_of=query.as_of) if query.text else None
    known = {t: fact for t, fact in facts.items() if fact is not None}
    window = question_window(asked, known) if asked is not None else None
    kept: dict[Target, tuple[Candidate, Mapping[str, Any]]] = {}
    for target, candidate in pool.items():
        fact = facts[target]  # None: a value of another shape in the namespace
        if fact is not None and answers_at(fact, now, query.as_of, allowed, window):
            kept[target] = (candidate, with_usage(fact, found.usage.get(target)))
    texts = {t: str(fact.get("text", "")) for t, (_, fact) in kept.items()} if query.text else {}
    lifted: set[Target] = set()
    if query.text and settings.subject_lift:
        lifted = named_subject(query.text, texts)
    fused = {}
    if asked is not None:  # without a query no branch has anything to rank
        fused = {f.key: f for f in _fused(found, kept, settings, asked, window, texts, lifted)}
    spread = [fused[t].score if t in fused else 0.0 for t in kept]
    low, high = (min(spread), max(spread)) if spread else (0.0, 0.0)
    scored: list[ScoredMemory] = []
    for target, (candidate, value) in kept.items():
        hit = fused.get(target)
        relevance = raw = share = None
        if query.text:
            share = hit.score if hit is not None else 0.0
            relevance = (share - low) / (high - low) if high - low > 1e-12 else 1.0
            if target in lifted:
                relevance += settings.subject_lift * (1.0 - relevance)
            raw = search_score(candidate.item) or 0.0
        score = score_memory(value, now, relevance=relevance, weights=weights, session=session)
        # positional, and the hit's own parts (each fusion made them for this call alone):
        # 50 candidates a turn on inject's path
        parts = hit.parts if hit is not None else {}
        scored.append(ScoredMemory(target[1], value, score, raw, target[0], share, parts))
    scored.sort(key=_by_score, reverse=True)
    return scored


def _by_score(memory: ScoredMemory) -> float:
    return memory.score


def _fused(
    found: RecallFound,
    kept: Kept,
    settings: RecallSettings,
    asked: QueryTime,
    window: TimeWindow | None,
    texts: Mapping[Target, str],
    lifted: set[Target],
) -> list[Fused[Target]]:
    """The branches' lists fused, then the feedback and neighbour branches, which read that
    first fusion, fused in."""
    lists = branch_lists(found, kept, settings, asked, window, texts)
    first = fuse(lists, settings.weights, k=settings.k)
    weight = float(settings.weights.get("feedback", 1.0))
    # with the search without the names only: on inject's one search of 50 candidates
    # the words of its best lost (LoCoMo 0-4, all four -1.4 points; bench/RESULTS.md)
    if weight and first and found.unnamed and len(texts) >= settings.feedback_min_candidates:
        # its best as the lift will order them: the named person's lines, not the question
        # put to them (whose words are the question's)
        top, lift = first[0].score, settings.subject_lift
        order = sorted(
            first,
            key=lambda f: f.score + lift * (top - f.score) if f.key in lifted else f.score,
            reverse=True,
        )
        best = [f.key for f in order[: settings.feedback_sources]]
        said = feedback_ranked(
            best,
            texts,
            found.query.text or "",
            dict(lists["vector"]),
            terms=settings.feedback_terms,
        )
        first = fuse_more(first, "feedback", said, weight, k=settings.k)
    weight = float(settings.weights.get("neighbour", 1.0))
    if weight:
        sources = [(f.key, f.score) for f in first[: settings.neighbour_sources]]
        beside = neighbour_ranked(sources, said_in_threads(kept))
        if beside:  # facts said in no thread have none
            first = fuse_more(first, "neighbour", beside, weight, k=settings.k)
    return first


def recall_plan(
    query: RecallQuery,
    now: datetime,
    *,
    weights: ScoringWeights = DEFAULT_WEIGHTS,
    settings: RecallSettings = DEFAULT_SETTINGS,
    include_pending: bool = False,
    branches: Sequence[Branch] = (),
) -> StorePlan[list[ScoredMemory]]:
    """One recall as a store plan: one batch (plus the usage read on stores that cannot
    join it), then the fusion."""
    results = yield Batch(recall_ops(query, branches))
    found = yield from read_found(query, results, branches)
    return rank_found(
        found, now, weights=weights, settings=settings, include_pending=include_pending
    )
