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
- one list per extra :class:`Branch`: entity expansion (:class:`EntityBranch`) on stores
  with the entity index;
- ``neighbour``: after a first fusion, what was said just before or after its best
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

>>> q = RecallQuery(("memories", "u1", "semantic"), "where does Ana live", candidates=50)
>>> [type(op).__name__ for op in recall_ops(q)]
['SearchOp']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from langgraph.store.base import Item, SearchItem

from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._recall.expansion import expansion_op
from langmem_vault.memory._recall.fusion import DEFAULT_K, fuse, fuse_more
from langmem_vault.memory._recall.instances import asked_instances, instance_ranked
from langmem_vault.memory._recall.neighbours import neighbour_ranked
from langmem_vault.memory._recall.retrieval import fact_search_op, fact_value
from langmem_vault.memory._recall.scoring import (
    DEFAULT_WEIGHTS,
    ScoredMemory,
    ScoringWeights,
    as_datetime,
    score_memory,
)
from langmem_vault.memory._recall.subjects import (
    UNNAMED_SHARE,
    named_share,
    named_subject,
    without_names,
)
from langmem_vault.memory._recall.time_filter import (
    QueryTime,
    TimeWindow,
    question_window,
    read_query_time,
    said_at,
    time_ranked,
)
from langmem_vault.memory._recall.usage import (
    Target,
    read_usage_plan,
    usage_search_op,
    with_usage,
)
from langmem_vault.store._entities import runs_entity_links
from langmem_vault.store._mirrors import Mirrored

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

#: each branch's weight in the fusion (tuned on LoCoMo conversations 0-4: bench/RESULTS.md)
DEFAULT_BRANCH_WEIGHTS: Mapping[str, float] = {
    "vector": 1.0,
    "keyword": 1.5,
    "thread": 0.8,
    "time": 1.5,
    "instances": 1.5,
    "neighbour": 0.6,
}


@dataclass(frozen=True)
class RecallSettings:
    """How the branches are fused: their weights (a branch not named weighs 1), the rank
    constant ``k``, how many of a thread's best matches score it (``thread_top``), and how
    many of the first fusion's best lend their score to their neighbours
    (``neighbour_sources``), and what share of the way to the best relevance the facts whose
    subject the question names move (``subject_lift``, :mod:`~.subjects`)."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_BRANCH_WEIGHTS))
    k: float = DEFAULT_K
    thread_top: int = 3
    neighbour_sources: int = 40
    subject_lift: float = 0.5


DEFAULT_SETTINGS = RecallSettings()


@dataclass(frozen=True)
class RecallQuery:
    """What is asked: the user's fact namespace, the query text (None: no relevance, the
    most useful facts), the moment it asks about (``as_of``), how many candidates the search
    reads, whether the store joins usage records to it (``runs_mirror_search``), and how
    many candidates the second search, for the text without its names, reads (``unnamed``;
    0: none, as in inject, whose turn keeps one search)."""

    namespace: tuple[str, ...]
    text: str | None
    as_of: datetime | None = None
    candidates: int = 50
    joined_usage: bool = False
    unnamed: int = 0

    @property
    def unnamed_text(self) -> str | None:
        """The text of the second search, or None when there is none to run."""
        if not self.unnamed or not self.text:
            return None
        text = without_names(self.text)
        return text if text and text != self.text.strip() else None


@dataclass(frozen=True)
class Candidate:
    """A fact the search found, with the parts of its search score (None when the store
    does not report them: the item's own score then stands for its vector similarity)."""

    item: SearchItem | Item
    vector: float | None = None
    keyword: float | None = None


class Branch(Protocol):
    """One more ranked list for the fusion: store ops that join recall's batch, and a
    ranking read from their results (items the search did not find join the candidates)."""

    name: str

    def ops(self, query: RecallQuery) -> Sequence[Any]: ...

    def rank(
        self, query: RecallQuery, results: Sequence[Any], pool: Mapping[Target, Candidate]
    ) -> Sequence[tuple[SearchItem | Item, float]]: ...


class EntityBranch:
    """The memories linked to the entities the query names, and to their neighbours one
    relation away (:mod:`~langmem_vault.memory._recall.expansion`: one recursive statement
    in recall's batch): nearer hops first, then more entities matched, then newer. Only on
    stores with the entity index (:func:`default_branches`)."""

    name = "entity"

    def __init__(self, *, limit: int = 20, hops: int = 1) -> None:
        self.limit = limit
        self.hops = hops

    def ops(self, query: RecallQuery) -> Sequence[Any]:
        if not query.text:
            return []
        op = expansion_op(
            [query.namespace], query.text, limit=self.limit, hops=self.hops, as_of=query.as_of
        )
        return [op]

    def rank(
        self, query: RecallQuery, results: Sequence[Any], pool: Mapping[Target, Candidate]
    ) -> Sequence[tuple[SearchItem | Item, float]]:
        # the op's own order (nearer hops, more entities, newer first: ordering each hop by
        # cosine instead measured 0.8 point worse on LoCoMo 0-4); the score says how near:
        # 1 for a named entity, 1/2 one hop on
        return [(hit.item, 1.0 / (1 + hit.hop)) for page in results for hit in page]


def default_branches(store: object) -> tuple[Branch, ...]:
    """The extra branches ``store`` can run: entity expansion on VaultStore."""
    return (EntityBranch(),) if runs_entity_links(store) else ()


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


def _target(item: SearchItem | Item) -> Target:
    return (tuple(item.namespace), item.key)


def _score(item: SearchItem | Item) -> float | None:
    """The item's search score (None: not found by a search, or not indexed)."""
    score = getattr(item, "score", None)
    return None if score is None else float(score)


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
            if hit.mirror is not None:
                joined[_target(hit.item)] = dict(hit.mirror.value)
        else:
            candidate = Candidate(hit)
        pool.setdefault(_target(candidate.item), candidate)
        found.append(candidate)
    return found


def _cosine(candidate: Candidate) -> float:
    score = candidate.vector if candidate.vector is not None else _score(candidate.item)
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
            ((_target(c.item), _cosine(c)) for c in second), key=lambda p: p[1], reverse=True
        )
    lists: dict[str, list[tuple[Target, float]]] = {}
    for branch in branches:
        count = len(branch.ops(query))
        mine, rest = rest[:count], rest[count:]
        hits = branch.rank(query, mine, pool)
        for item, _ in hits:
            pool.setdefault(_target(item), Candidate(item))
        lists[branch.name] = [(_target(item), score) for item, score in hits]
    usage: Mapping[Target, Mapping[str, Any]] = joined
    if not query.joined_usage:
        usage = yield from read_usage_plan([*pool, *(_target(i) for i in also)])
    return RecallFound(query, pool, lists, usage, unnamed)


def _valid(
    fact: Mapping[str, Any],
    now: datetime,
    as_of: datetime | None,
    allowed: set[str],
    window: TimeWindow | None = None,
) -> bool:
    """Whether ``fact`` answers now (open, not closed before now), or, with ``as_of``, then
    (valid at that moment, whether closed since or not), or, for a question naming a time
    (``window``: "in 2020", "before I moved"), may hold in that window (closed since or not).
    A fact with no known start is not known to hold before it was said."""
    status = fact.get("status", "active")
    valid_to = as_datetime(fact.get("valid_to"))
    if as_of is None:
        if window is not None and status in allowed | {"superseded"}:
            return window.admits(fact)
        return status in allowed and (valid_to is None or valid_to > now)
    valid_from = as_datetime(fact.get("valid_from")) or said_at(fact)
    return (
        status in allowed | {"superseded"}
        and (valid_from is None or valid_from <= as_of)
        and (valid_to is None or valid_to > as_of)
    )


def _thread_list(
    kept: Mapping[Target, tuple[Candidate, Mapping[str, Any]]], top: int
) -> list[tuple[Target, float]]:
    """Each candidate with a thread, scored by the mean search score of its thread's ``top``
    best candidates (its own score breaks ties)."""
    by_thread: dict[str, list[float]] = {}
    for candidate, fact in kept.values():
        thread = fact.get("source_thread_id")
        if thread:
            by_thread.setdefault(str(thread), []).append(_score(candidate.item) or 0.0)
    strength = {
        thread: sum(sorted(scores, reverse=True)[:top]) / min(top, len(scores))
        for thread, scores in by_thread.items()
    }
    scored = [
        (target, strength[str(fact["source_thread_id"])], (_score(candidate.item) or 0.0))
        for target, (candidate, fact) in kept.items()
        if fact.get("source_thread_id")
    ]
    scored.sort(key=lambda t: (t[1], t[2]), reverse=True)
    return [(target, thread) for target, thread, _ in scored]


def _said(
    kept: Mapping[Target, tuple[Candidate, Mapping[str, Any]]],
) -> dict[Target, tuple[str, float]]:
    """Each kept candidate said in a thread: the thread, and when (for its neighbours)."""
    said = {}
    for target, (candidate, fact) in kept.items():
        thread = fact.get("source_thread_id")
        moment = said_at(fact) or getattr(candidate.item, "created_at", None)
        if thread and moment is not None:
            said[target] = (str(thread), moment.timestamp())
    return said


def _lists(
    found: RecallFound,
    kept: Mapping[Target, tuple[Candidate, Mapping[str, Any]]],
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
        if (score := c.vector if c.vector is not None else _score(c.item)) is not None and score > 0
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
    for name, hits in found.lists.items():
        lists[name] = [(t, s) for t, s in hits if t in kept]
    return lists


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
        pool.setdefault(_target(item), Candidate(item))
    facts = {t: fact_value(c.item) for t, c in pool.items()}
    asked = read_query_time(query.text, now=now, as_of=query.as_of) if query.text else None
    known = {t: fact for t, fact in facts.items() if fact is not None}
    window = question_window(asked, known) if asked is not None else None
    kept: dict[Target, tuple[Candidate, Mapping[str, Any]]] = {}
    for target, candidate in pool.items():
        fact = facts[target]  # None: a value of another shape in the namespace
        if fact is not None and _valid(fact, now, query.as_of, allowed, window):
            kept[target] = (candidate, with_usage(fact, found.usage.get(target)))
    texts = {t: str(fact.get("text", "")) for t, (_, fact) in kept.items()} if query.text else {}
    fused = {}
    if asked is not None:  # without a query no branch has anything to rank
        lists = _lists(found, kept, settings, asked, window, texts)
        first = fuse(lists, settings.weights, k=settings.k)
        weight = float(settings.weights.get("neighbour", 1.0))
        if weight:
            sources = [(f.key, f.score) for f in first[: settings.neighbour_sources]]
            beside = neighbour_ranked(sources, _said(kept))
            if beside:  # facts said in no thread have none
                first = fuse_more(first, "neighbour", beside, weight, k=settings.k)
        fused = {f.key: f for f in first}
    lifted: set[Target] = set()
    if query.text and settings.subject_lift:
        lifted = named_subject(query.text, texts)
    spread = [fused[t].score if t in fused else 0.0 for t in kept]
    low, high = (min(spread), max(spread)) if spread else (0.0, 0.0)
    scored: list[ScoredMemory] = []
    for target, (candidate, value) in kept.items():
        hit = fused.get(target)
        relevance = None
        if query.text:
            share = hit.score if hit is not None else 0.0
            relevance = (share - low) / (high - low) if high - low > 1e-12 else 1.0
            if target in lifted:
                relevance += settings.subject_lift * (1.0 - relevance)
        raw = _score(candidate.item)
        scored.append(
            ScoredMemory(
                key=target[1],
                value=value,
                score=score_memory(
                    value, now, relevance=relevance, weights=weights, session=session
                ),
                relevance=(raw or 0.0) if query.text else None,
                namespace=target[0],
                fused=(hit.score if hit is not None else 0.0) if query.text else None,
                parts=dict(hit.parts) if hit is not None else {},
            )
        )
    scored.sort(key=lambda m: m.score, reverse=True)
    return scored


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
