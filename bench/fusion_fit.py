"""Fit recall's fusion (RecallSettings: the branch weights, ``k``, the subject lift) offline.

Two steps:

``capture``
    Runs the LoCoMo evaluation's storage and questions (every turn stored as a fact dated by
    its session, every question sent to ``MemoryVault.recall``, as ``langmem-vault eval
    locomo`` does) on the embedded Postgres, and keeps what recall's one batch read for each
    question (``RecallFound``: the candidates with their vector and keyword scores, the
    second search's list, the extra branches' lists) with the moment it ranked at, in a pickle.
    inject and the reference store are not run (they do not change recall's ranking).

``fit``
    Replays ``recall_plan.rank_found`` on those captures with other settings (``--check``
    ranks every question with ``rank_found`` itself too: the same ids), and fits the
    settings by coordinate ascent on the chosen conversations (LoCoMo 0-4; 5-9 held out), the
    objective recall@10 of the evidence turns: multi-hop plus all four categories, with every
    other category kept within ``--slack`` of the base. Leave-one-conversation-out inside
    the tuned conversations says whether a fit generalises: fitted on four, scored on the
    fifth. ``--linear`` fits a linear scorer over every branch's rank and score the same way
    (on recall@10 itself); ``--ceiling`` says where the multi-hop misses rank in each branch
    and what a fusion that knew the answers would reach.

    PYTHONPATH=src:bench python bench/fusion_fit.py capture locomo10.json --out cap.pkl
    PYTHONPATH=src:bench python bench/fusion_fit.py fit cap.pkl --tune 0-4 --held-out 5-9 \
        --check --ceiling --cv --linear --rounds 2

``capture --sentences speaker`` (or ``bare``) also gives every stored turn of two sentences or
more one vector per sentence (the store's several index fields: the value's ``sentences``
list beside ``text``; ``speaker`` prefixes each with the turn's "Name: "), so a replay shows
what sentence vectors would change (session 17: multi-hop lost on 0-4). ``score`` prints a
capture's figures under today's settings (tuned, held out, all) without fitting.

Nothing here is imported by the package: the fitted values ship as plain constants
(``branch_lists.DEFAULT_BRANCH_WEIGHTS``, ``RecallSettings``' defaults).
"""

from __future__ import annotations

import argparse
import math
import pickle
import re
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from langmem_vault.eval._locomo_data import CATEGORY_NAMES
from langmem_vault.eval._metrics import evidence_recall
from langmem_vault.memory._recall import recall_plan as plan_module
from langmem_vault.memory._recall.branch_lists import (
    DEFAULT_SETTINGS,
    RecallSettings,
    branch_lists,
    said_in_threads,
)
from langmem_vault.memory._recall.feedback import feedback_ranked
from langmem_vault.memory._recall.neighbours import neighbour_ranked
from langmem_vault.memory._recall.retrieval import fact_value
from langmem_vault.memory._recall.scoring import DEFAULT_WEIGHTS, balance_categories, score_memory
from langmem_vault.memory._recall.subjects import named_subject
from langmem_vault.memory._recall.time_filter import question_window, read_query_time
from langmem_vault.memory._recall.usage import with_usage
from langmem_vault.memory._recall.validity import answers_at

CATEGORIES = (1, 2, 3, 4)  # the four the targets count (5: adversarial)


@dataclass
class Captured:
    """One question: what recall's batch read, when it ranked, and what answers it."""

    conversation: int
    category: int
    evidence: list[str]
    found: Any  # RecallFound
    now: datetime


# --------------------------------------------------------------------------- capture


#: a sentence's end: after . ! or ?, or before a shared photo's caption ("[shares ...]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s+(?=\[shares )")


def turn_sentences(text: str, mode: str) -> list[str]:
    """The sentences of a stored turn (``"Name: text"``) to index beside it: none for a turn
    of one sentence; with ``mode`` ``"speaker"`` each keeps the turn's "Name: ".

    >>> turn_sentences("Ana: Hi Ben! I adopted a cat.", "speaker")
    ['Ana: Hi Ben!', 'Ana: I adopted a cat.']
    >>> turn_sentences("Ana: I adopted a cat.", "bare")
    []
    """
    speaker, _, body = text.partition(": ")
    parts = [s.strip() for s in _SENTENCE_END.split(body) if s.strip()]
    if len(parts) < 2:
        return []
    return [f"{speaker}: {s}" for s in parts] if mode == "speaker" else parts


def with_sentences(ops: Sequence[Any], mode: str) -> list[Any]:
    """``ops`` with each turn's put also indexing its sentences (``sentences[*]``)."""
    from langgraph.store.base import PutOp

    out = []
    for op in ops:
        if isinstance(op, PutOp) and op.value and op.index == ["text"]:
            sentences = turn_sentences(str(op.value.get("text", "")), mode)
            if sentences:
                value = {**op.value, "sentences": sentences}
                op = PutOp(op.namespace, op.key, value, ["text", "sentences[*]"], ttl=op.ttl)
        out.append(op)
    return out


def capture(file: Path, out: Path, conversations: str | None, sentences: str | None = None) -> None:
    """Store and ask as ``eval locomo`` does; keep each question's ``RecallFound``
    (``sentences``: index each turn's sentences too, see :func:`with_sentences`)."""
    from langmem_vault.cli._eval import CachedEmbeddings, pick, scratch_schema
    from langmem_vault.db._embedded import resolve_dsn
    from langmem_vault.embeddings import default_index, local_embeddings
    from langmem_vault.eval import _locomo
    from langmem_vault.eval._locomo_data import load_locomo
    from langmem_vault.store import VaultStore

    chosen = pick(load_locomo(file), conversations)
    index_of = {c.sample_id: i for i, c in enumerate(load_locomo(file))}
    seen: list[tuple[Any, datetime]] = []
    original = plan_module.rank_found

    def keeping(found: Any, now: datetime, **kwargs: Any) -> Any:
        seen.append((found, now))
        return original(found, now, **kwargs)

    class _NoInject:
        def invoke(self, *_: Any, **__: Any) -> dict[str, str]:
            return {"memory_context": ""}

    plan_module.rank_found = keeping
    if sentences:
        put_in_batches = _locomo._put_in_batches
        _locomo._put_in_batches = lambda store, ops: put_in_batches(  # type: ignore[assignment]
            store, with_sentences(ops, sentences)
        )
    _locomo.create_inject_node = lambda **_: _NoInject()  # type: ignore[attr-defined,assignment]
    uri = resolve_dsn(None)
    embed = CachedEmbeddings(local_embeddings())
    rows: list[Captured] = []
    started = time.monotonic()
    with ExitStack() as stack:
        name = stack.enter_context(scratch_schema(uri, "fusion_fit"))
        store = stack.enter_context(
            VaultStore.from_conn_string(uri, schema=name, index=default_index(embed))
        )
        store.setup()
        for conv in chosen:
            seen.clear()
            result = _locomo.run_locomo([conv], store)
            if len(seen) != len(result.questions):
                raise RuntimeError(f"{len(seen)} recalls for {len(result.questions)} questions")
            for (found, now), row in zip(seen, result.questions, strict=True):
                rows.append(
                    Captured(index_of[conv.sample_id], row.category, row.evidence, found, now)
                )
            # written after each conversation: a partial capture is usable
            out.write_bytes(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
            print(
                f"{conv.sample_id}: {len(result.questions)} questions, "
                f"{time.monotonic() - started:.0f} s",
                flush=True,
            )
    print(f"{len(rows)} questions -> {out}")


# --------------------------------------------------------------------------- replay


def live_ids(row: Captured, settings: RecallSettings, k: int = 10) -> list[str]:
    """The evidence ids recall returns for ``row`` under ``settings``: rank_found itself."""
    scored = plan_module.rank_found(row.found, row.now, settings=settings)
    return [i for m in balance_categories(scored, k) for i in m.value.get("source_message_ids", [])]


@dataclass
class Prepared:
    """What of one question does not change with the fitted settings."""

    row: Captured
    targets: list[Any]
    lists: dict[str, list[tuple[Any, float]]]
    texts: dict[Any, str]
    lifted: set[Any]
    unnamed: bool
    # final score = slope x relevance + offset (score_memory is linear in relevance)
    slope: dict[Any, float]
    offset: dict[Any, float]
    ids: dict[Any, list[str]]
    said: dict[Any, tuple[str, float]]
    feedback_cache: dict[tuple[Any, ...], list[tuple[Any, float]]] = field(default_factory=dict)


def prepare(row: Captured, settings: RecallSettings) -> Prepared:
    """``rank_found``'s steps before the fusion (``settings.thread_top`` is fixed here)."""
    found, now = row.found, row.now
    query = found.query
    facts = {t: fact_value(c.item) for t, c in found.pool.items()}
    asked = read_query_time(query.text, now=now, as_of=query.as_of)
    known = {t: f for t, f in facts.items() if f is not None}
    window = question_window(asked, known)
    kept = {}
    for target, candidate in found.pool.items():
        fact = facts[target]
        if fact is not None and answers_at(fact, now, query.as_of, {"active"}, window):
            kept[target] = (candidate, with_usage(fact, found.usage.get(target)))
    texts = {t: str(fact.get("text", "")) for t, (_, fact) in kept.items()}
    lifted = named_subject(query.text, texts)
    lists = branch_lists(found, kept, settings, asked, window, texts)
    slope, offset = {}, {}
    for t, (_, value) in kept.items():
        low = score_memory(value, now, relevance=0.0, weights=DEFAULT_WEIGHTS)
        high = score_memory(value, now, relevance=1.0, weights=DEFAULT_WEIGHTS)
        slope[t], offset[t] = high - low, low
    ids = {t: list(v.get("source_message_ids", [])) for t, (_, v) in kept.items()}
    return Prepared(
        row, list(kept), lists, texts, lifted, bool(found.unnamed), slope, offset, ids,
        said_in_threads(kept),
    )  # fmt: skip


def _add(
    scores: dict[Any, float], hits: Sequence[tuple[Any, float]], weight: float, k: float
) -> None:
    if weight == 0.0:
        return
    rank = 0
    seen: set[Any] = set()
    for key, _ in hits:
        if key in seen:
            continue
        seen.add(key)
        rank += 1
        scores[key] = scores.get(key, 0.0) + weight / (k + rank)


def _order(scores: Mapping[Any, float]) -> list[Any]:
    return sorted(scores, key=lambda key: scores[key], reverse=True)


def fused(p: Prepared, s: RecallSettings) -> tuple[dict[Any, float], dict[str, list[Any]]]:
    """``rank_found``'s fusion for one question under ``s``, from its prepared parts: each
    candidate's fused score, and every list fused (the feedback and neighbour lists too)."""
    weights = s.weights
    lists = dict(p.lists)
    scores: dict[Any, float] = {}
    for name, hits in p.lists.items():
        _add(scores, hits, float(weights.get(name, 1.0)), s.k)
    first = _order(scores)
    weight = float(weights.get("feedback", 1.0))
    if weight and first and p.unnamed and len(p.texts) >= s.feedback_min_candidates:
        top, lift = scores[first[0]], s.subject_lift
        order = sorted(
            first,
            key=lambda t: scores[t] + lift * (top - scores[t]) if t in p.lifted else scores[t],
            reverse=True,
        )
        best = tuple(order[: s.feedback_sources])
        cache_key = (*best, s.feedback_terms)
        said = p.feedback_cache.get(cache_key)
        if said is None:
            said = feedback_ranked(
                list(best), p.texts, p.row.found.query.text or "", dict(p.lists["vector"]),
                terms=s.feedback_terms,
            )  # fmt: skip
            p.feedback_cache[cache_key] = said
        lists["feedback"] = said
        _add(scores, said, weight, s.k)
        first = _order(scores)
    weight = float(weights.get("neighbour", 1.0))
    if weight:
        beside = neighbour_ranked([(t, scores[t]) for t in first[: s.neighbour_sources]], p.said)
        if beside:
            lists["neighbour"] = beside
            _add(scores, beside, weight, s.k)
    return scores, lists


def relevance(p: Prepared, scores: Mapping[Any, float], lift: float) -> dict[Any, float]:
    """The fused scores rescaled to [0, 1] across the candidates, the subject lift applied."""
    spread = [scores.get(t, 0.0) for t in p.targets]
    low, high = (min(spread), max(spread)) if spread else (0.0, 0.0)
    rel = {}
    for t in p.targets:
        share = scores.get(t, 0.0)
        rel[t] = (share - low) / (high - low) if high - low > 1e-12 else 1.0
        if t in p.lifted and lift:
            rel[t] += lift * (1.0 - rel[t])
    return rel


def top_ids(p: Prepared, rel: Mapping[Any, float], k: int = 10) -> list[str]:
    """The evidence ids of the ``k`` best by final score (score_memory: linear in relevance)."""
    final = {t: p.slope[t] * min(max(rel[t], 0.0), 1.0) + p.offset[t] for t in p.targets}
    best = sorted(p.targets, key=lambda t: final[t], reverse=True)[:k]
    return [i for t in best for i in p.ids[t]]


def fast_ids(p: Prepared, s: RecallSettings, k: int = 10) -> list[str]:
    """``rank_found`` for one question under ``s``, from its prepared parts."""
    scores, _ = fused(p, s)
    return top_ids(p, relevance(p, scores, s.subject_lift), k)


def figures(
    prepared: Sequence[Prepared],
    ranking: RecallSettings | Callable[[Prepared], list[str]],
    convs: set[int] | None = None,
) -> dict[str, float]:
    """recall@10 by category name, plus ``all four``, over ``convs`` (None: all); ``ranking``
    is recall's settings or a function from a question to the ids it returns."""
    ids_of = ranking if callable(ranking) else (lambda p: fast_ids(p, ranking))
    by: dict[int, list[float]] = {}
    for p in prepared:
        if convs is not None and p.row.conversation not in convs:
            continue
        r = evidence_recall(ids_of(p), p.row.evidence)
        if r is not None:
            by.setdefault(p.row.category, []).append(r)
    out = {CATEGORY_NAMES[c]: sum(v) / len(v) for c, v in sorted(by.items())}
    four = [r for c in CATEGORIES for r in by.get(c, [])]
    out["all four"] = sum(four) / len(four) if four else math.nan
    return out


# --------------------------------------------------------------------------- fit

#: what coordinate ascent tries for each setting (the current value is always among them)
GRID: dict[str, list[float]] = {
    "vector": [0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0],
    "keyword": [0.5, 0.8, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0],
    "thread": [0.0, 0.3, 0.5, 0.65, 0.8, 1.0, 1.2, 1.5],
    "time": [0.5, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0],
    "instances": [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0],
    "entity": [0.0, 0.5, 1.0, 1.5],
    "neighbour": [0.0, 0.3, 0.45, 0.6, 0.75, 0.9, 1.2],
    "feedback": [0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0],
    "shared": [0.0, 1.0, 1.5, 2.5, 4.0],
    "k": [3.0, 5.0, 7.0, 10.0, 14.0, 20.0, 30.0],
    "subject_lift": [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
    "neighbour_sources": [10, 20, 30, 40, 60, 80],
    "feedback_sources": [2, 3, 4, 5],
    "feedback_terms": [10, 15, 20, 25, 30],
}
_FIELDS = {"k", "subject_lift", "neighbour_sources", "feedback_sources", "feedback_terms"}
_COUNTS = {"neighbour_sources", "feedback_sources", "feedback_terms"}
_OTHERS = ("temporal", "open-domain", "single-hop")


def get(s: RecallSettings, name: str) -> float:
    return float(getattr(s, name)) if name in _FIELDS else float(s.weights.get(name, 1.0))


def put(s: RecallSettings, name: str, value: float) -> RecallSettings:
    if name in _FIELDS:
        changes: dict[str, Any] = {name: int(value) if name in _COUNTS else float(value)}
        return replace(s, **changes)
    return replace(s, weights={**s.weights, name: value})


def objective(f: Mapping[str, float], base: Mapping[str, float], slack: float) -> float:
    """multi-hop plus all four; a category other than multi-hop that falls more than
    ``slack`` below the base costs ten times its fall past the slack."""
    value = f["multi-hop"] + f["all four"]
    for name in _OTHERS:
        value -= 10 * max(0.0, base.get(name, 0.0) - slack - f.get(name, 0.0))
    return value


def ascend(
    prepared: Sequence[Prepared],
    start: RecallSettings,
    convs: set[int],
    names: Sequence[str],
    slack: float,
    rounds: int,
    log: bool = True,
) -> RecallSettings:
    """Coordinate ascent: each setting in turn set to its best value on the grid, others
    fixed, until a round changes nothing."""
    base = figures(prepared, start, convs)
    best, best_value = start, objective(base, base, slack)
    for round_ in range(rounds):
        changed = False
        for name in names:
            current = get(best, name)
            for value in sorted(set(GRID[name]) | {current}):
                if value == current:
                    continue
                trial = put(best, name, value)
                got = objective(figures(prepared, trial, convs), base, slack)
                if got > best_value + 1e-9:
                    best, best_value, changed = trial, got, True
            if log:
                print(f"  round {round_ + 1}: {name} = {get(best, name):g}, {best_value:.4f}")
        if not changed:
            break
    return best


# ------------------------------------------------------ a linear scorer over the branches

#: the lists a candidate's features come from (the feedback and neighbour lists as fused)
BRANCHES = ("vector", "keyword", "thread", "time", "instances", "feedback", "neighbour")
FEATURES = [f"{b}_{f}" for b in BRANCHES for f in ("rr", "score", "in")] + ["lifted", "fused"]
STEPS = (-0.5, -0.2, -0.1, -0.05, 0.05, 0.1, 0.2, 0.5)


def features(p: Prepared, s: RecallSettings) -> np.ndarray:
    """Per candidate: for each branch 1 / (k + rank), its score over the list's best and
    whether it is listed; whether the subject lift applies; and the final relevance recall
    gives it today (``fused``: so a fitted scorer starts from today's ranking)."""
    scores, lists = fused(p, s)
    rel = relevance(p, scores, s.subject_lift)
    row = {t: n for n, t in enumerate(p.targets)}
    out = np.zeros((len(p.targets), len(FEATURES)))
    for b, name in enumerate(BRANCHES):
        hits = lists.get(name, [])
        top = max((abs(score) for _, score in hits), default=0.0) or 1.0
        rank = 0
        for key, score in hits:
            if key not in row or out[row[key], 3 * b + 2]:
                continue
            rank += 1
            out[row[key], 3 * b : 3 * b + 3] = [1.0 / (s.k + rank), score / top, 1.0]
    for t, n in row.items():
        out[n, -2:] = [1.0 if t in p.lifted else 0.0, rel[t]]
    return out


def linear_ascent(
    prepared: Sequence[Prepared],
    feats: Sequence[np.ndarray],
    convs: set[int],
    slack: float,
    rounds: int,
) -> np.ndarray:
    """Coordinate ascent of a linear scorer's weights on recall@10 itself (listwise), from
    today's ranking (``fused`` weighs 1, the rest 0)."""
    weights = np.zeros(len(FEATURES))
    weights[-1] = 1.0

    base = figures(prepared, _linear_ids(prepared, feats, weights), convs)
    best = objective(base, base, slack)
    for _ in range(rounds):
        changed = False
        for i in range(len(FEATURES) - 1):
            for step in STEPS:
                trial = weights.copy()
                trial[i] += step
                got = objective(
                    figures(prepared, _linear_ids(prepared, feats, trial), convs), base, slack
                )
                if got > best + 1e-9:
                    best, weights, changed = got, trial, True
        if not changed:
            break
    return weights


# --------------------------------------------------------------------------- report


def _conversations(spec: str) -> set[int]:
    chosen: set[int] = set()
    for part in spec.split(","):
        first, _, last = part.partition("-")
        chosen.update(range(int(first), int(last or first) + 1))
    return chosen


COLUMNS = ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial", "all four")


def _line(label: str, f: Mapping[str, float]) -> str:
    return f"| {label} | " + " | ".join(f"{f.get(c, math.nan):.3f}" for c in COLUMNS) + " |"


def describe(s: RecallSettings) -> str:
    return ", ".join(f"{n}={get(s, n):g}" for n in GRID if n in _FIELDS or n in s.weights)


def ceiling(prepared: Sequence[Prepared], s: RecallSettings, convs: set[int]) -> None:
    """Where the multi-hop evidence recall misses ranks in each branch, and recall@10 if a
    fusion put first every evidence turn some branch ranks in its top ``depth``."""
    missed, reach = 0, {10: 0, 20: 0, 50: 0}
    oracle: dict[int, list[float]] = {10: [], 20: [], 50: []}
    for p in prepared:
        if p.row.conversation not in convs or p.row.category != 1 or not p.row.evidence:
            continue
        scores, lists = fused(p, s)
        rel = relevance(p, scores, s.subject_lift)
        order = sorted(p.targets, key=lambda t: rel[t], reverse=True)
        place = {t: n for n, t in enumerate(order, 1)}
        best: dict[Any, int] = {}
        for hits in lists.values():
            for n, (key, _) in enumerate(hits, 1):
                best[key] = min(best.get(key, n), n)
        wanted = set(p.row.evidence)
        answers = [t for t in p.targets if wanted & set(p.ids[t])]
        for t in answers:
            if place[t] > 10:
                missed += 1
                for depth in reach:
                    reach[depth] += best.get(t, 10**6) <= depth
        for depth, got in oracle.items():
            first = [t for t in answers if best.get(t, 10**6) <= depth]
            picked = (first + [t for t in order if t not in first])[:10]
            got.append(evidence_recall([i for t in picked for i in p.ids[t]], p.row.evidence) or 0)
    print(
        f"multi-hop evidence turns ranked past 10: {missed}; of them in some branch's "
        + ", ".join(f"top {d}: {n}" for d, n in reach.items())
    )
    print(
        "recall@10 if every evidence turn some branch ranks in its top d came first: "
        + ", ".join(f"d = {d}: {sum(v) / len(v):.3f}" for d, v in oracle.items())
    )


def _load(path: Path) -> list[Captured]:
    import __main__

    # a capture run as a script pickles its rows as __main__.Captured
    __main__.Captured = Captured  # type: ignore[attr-defined]
    rows: list[Captured] = pickle.loads(path.read_bytes())
    return rows


def score(args: argparse.Namespace) -> None:
    """A capture's figures under today's settings: tuned, held out, all."""
    prepared = [prepare(r, DEFAULT_SETTINGS) for r in _load(args.captures)]
    print("| settings | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for label, convs in ((args.tune, _conversations(args.tune)),
                         (f"{args.held_out} (held out)", _conversations(args.held_out)),
                         ("all", None)):  # fmt: skip
        print(_line(f"today, {label}", figures(prepared, DEFAULT_SETTINGS, convs)))


def fit(args: argparse.Namespace) -> None:
    rows = _load(args.captures)
    tuned, held_out = _conversations(args.tune), _conversations(args.held_out)
    start, names = DEFAULT_SETTINGS, args.names.split(",")
    prepared = [prepare(r, start) for r in rows]
    if args.check:  # the fast replay is rank_found: the same ids for every question
        for trial in (
            start,
            put(put(start, "keyword", 2.0), "k", 5.0),
            put(start, "subject_lift", 0.2),
        ):
            bad = sum(fast_ids(p, trial) != live_ids(p.row, trial) for p in prepared)
            print(f"check {describe(trial)}: {bad} of {len(prepared)} questions differ")
    print("| settings | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    print(_line(f"today, {args.tune}", figures(prepared, start, tuned)))
    print(_line(f"today, {args.held_out} (held out)", figures(prepared, start, held_out)))
    if args.ceiling:
        ceiling(prepared, start, tuned)
    if args.cv:  # leave one conversation out: fitted on the others, scored on it
        for out in sorted(tuned):
            fitted = ascend(prepared, start, tuned - {out}, names, args.slack, args.rounds, False)
            print(f"without {out}: {describe(fitted)}")
            print(_line(f"{out}, today", figures(prepared, start, {out})))
            print(_line(f"{out}, fitted on the others", figures(prepared, fitted, {out})))
    fitted = ascend(prepared, start, tuned, names, args.slack, args.rounds)
    print(f"fitted on {args.tune}: {describe(fitted)}")
    print(_line(f"fitted, {args.tune}", figures(prepared, fitted, tuned)))
    print(_line(f"fitted, {args.held_out} (held out)", figures(prepared, fitted, held_out)))
    if args.linear:
        feats = [features(p, start) for p in prepared]
        folds = [(tuned - {out}, {out}) for out in sorted(tuned)] if args.cv else []
        for inside, scored in [*folds, (tuned, held_out)]:
            w = linear_ascent(prepared, feats, inside, args.slack, args.rounds)
            chosen = {n: round(x, 2) for n, x in zip(FEATURES, w, strict=True) if x}
            ranking = _linear_ids(prepared, feats, w)
            print(f"linear scorer fitted on {sorted(inside)}: {chosen}")
            print(_line(f"{sorted(scored)}, today", figures(prepared, start, scored)))
            print(_line(f"{sorted(scored)}, linear", figures(prepared, ranking, scored)))


def _linear_ids(
    prepared: Sequence[Prepared], feats: Sequence[np.ndarray], w: np.ndarray
) -> Callable[[Prepared], list[str]]:
    index = {id(p): f for p, f in zip(prepared, feats, strict=True)}

    def ids(p: Prepared) -> list[str]:
        best = np.argsort(-(index[id(p)] @ w), kind="stable")[:10]
        return [i for n in best for i in p.ids[p.targets[n]]]

    return ids


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture", help="store and ask; keep each question's RecallFound")
    cap.add_argument("file", type=Path)
    cap.add_argument("--out", type=Path, default=Path("fusion-captures.pkl"))
    cap.add_argument("--conversations", default=None, help="e.g. 0-9 (default: all)")
    cap.add_argument(
        "--sentences", choices=("speaker", "bare"), default=None,
        help="index each turn's sentences too (one vector each)",
    )  # fmt: skip
    scorep = sub.add_parser("score", help="a capture's figures under today's settings")
    scorep.add_argument("captures", type=Path)
    scorep.add_argument("--tune", default="0-4")
    scorep.add_argument("--held-out", default="5-9")
    fitp = sub.add_parser("fit", help="coordinate ascent on the captures")
    fitp.add_argument("captures", type=Path)
    fitp.add_argument("--tune", default="0-4")
    fitp.add_argument("--held-out", default="5-9")
    fitp.add_argument("--names", default=",".join(GRID), help="the settings to fit")
    fitp.add_argument("--slack", type=float, default=0.005)
    fitp.add_argument("--rounds", type=int, default=3)
    fitp.add_argument("--cv", action="store_true", help="leave one tuned conversation out")
    fitp.add_argument("--check", action="store_true", help="fast replay == rank_found")
    fitp.add_argument("--ceiling", action="store_true", help="where the misses rank")
    fitp.add_argument("--linear", action="store_true", help="fit a linear scorer too")
    args = parser.parse_args(argv)
    if args.command == "capture":
        capture(args.file, args.out, args.conversations, args.sentences)
    elif args.command == "score":
        score(args)
    else:
        fit(args)


if __name__ == "__main__":
    main()
