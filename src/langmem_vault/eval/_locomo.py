"""Evaluate memory on a LoCoMo-format file: evidence recall@k, answer coverage, tokens, and
(with a model) LLM-as-judge J and F1, by question category.

Each conversation is one user's memory (user id ``locomo-<sample_id>``). Its turns go in
either directly (every turn one fact, ``"<speaker>: <text>"``, through the store's one write
rule :func:`~langmem_vault.memory._writes.memory_put`, dated by its session: see
:func:`observed_fields`) or, with ``pipeline=True``, through the extraction pipeline (one
extraction and reconcile per turn, so each fact's ``source_message_ids`` name its turn).
Then each question is asked:

- **recall@k**: the share of its evidence turns among the turns of the top ``k`` memories
  :meth:`MemoryVault.recall <langmem_vault.memory._vault.MemoryVault.recall>` returns;
- **coverage** and **tokens**: what the inject node puts in the prompt for that question
  (``memory_context``): the share of the gold answer's words in it, and its size;
- with ``model``: the model's answer from that block, the ``judge``'s label (J) and F1.

A ``reference`` store (langgraph's ``PostgresStore``, say) gets every turn as
``{"text": ...}`` and every question sent to its ``search``, for the same figures beside it.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.eval._locomo_data import parse_locomo
>>> data = parse_locomo([{"sample_id": "c1", "conversation": {
...     "speaker_a": "Ana", "speaker_b": "Ben",
...     "session_1_date_time": "1:56 pm on 8 May, 2023",
...     "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat, Miso."},
...                   {"speaker": "Ben", "dia_id": "D1:2", "text": "I play chess on Sundays."}]},
...     "qa": [{"question": "What is Ana's cat called?", "answer": "Miso",
...             "evidence": ["D1:1"], "category": 4}]}])
>>> result = run_locomo(data, InMemoryStore(), k=1)
>>> row = result.by_category()[0]
>>> row.name, row.questions, row.recall, row.coverage
('single-hop', 1, 1.0, 1.0)
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, PutOp

from langmem_vault.eval._answers import answer_question, judge_answer
from langmem_vault.eval._locomo_data import CATEGORY_NAMES, Conversation, Question, Turn
from langmem_vault.eval._metrics import answer_coverage, evidence_recall, locomo_f1
from langmem_vault.extraction._apply import apply
from langmem_vault.extraction._span import extract_span
from langmem_vault.memory._dates import statement_validity
from langmem_vault.memory._entities import EntityFinder
from langmem_vault.memory._models import SemanticFact
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.memory._writes import memory_ops
from langmem_vault.nodes._inject import create_inject_node, make_token_counter
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy
from langmem_vault.store import VaultStore

__all__ = [
    "CategoryRow",
    "LocomoResult",
    "QuestionResult",
    "observed_fields",
    "run_locomo",
    "steps",
]

#: the reference store's namespace prefix (one namespace per conversation)
REFERENCE_NS = "locomo"
_BATCH = 250
_TURNS = uuid.uuid5(uuid.NAMESPACE_URL, "langmem-vault/eval/locomo")


def observed_fields(said_at: datetime | None, text: str = "") -> dict[str, Any]:
    """The fields of a stored turn that say when it was said and when it holds: its session
    date as ``observed_at`` (and as the fact's creation, so recency ranks as it did), and the
    dates ``text`` states resolved against it ("yesterday", "since 2019": see docs/time.md).
    The one place a turn's time enters the store.

    >>> from datetime import datetime, UTC
    >>> fields = observed_fields(datetime(2023, 5, 8, tzinfo=UTC), "I went there yesterday")
    >>> fields["observed_at"].day, fields["valid_from"].day
    (8, 7)
    """
    if said_at is None:
        return {}
    start, end = statement_validity(text, said_at) if text else (None, None)
    return {
        "created_at": said_at,
        "updated_at": said_at,
        "observed_at": said_at,
        "valid_from": start,
        "valid_to": end,
    }


@dataclass
class QuestionResult:
    """Every figure of one question (one row of the JSON file)."""

    sample_id: str
    question: str
    category: int
    answer: str
    evidence: list[str]
    found: list[str]
    recall: float | None
    coverage: float | None
    tokens: int
    prediction: str | None = None
    judge: bool | None = None
    f1: float | None = None
    #: the reference store's found turns, recall, coverage and tokens
    reference: dict[str, Any] | None = None


@dataclass(frozen=True)
class CategoryRow:
    """Means over the questions of one category (None where nothing was measured)."""

    name: str
    questions: int
    recall: float | None
    coverage: float | None
    tokens: float
    j: float | None = None
    f1: float | None = None
    reference_recall: float | None = None
    reference_coverage: float | None = None
    reference_tokens: float | None = None


def _mean(values: Iterable[float | bool | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _row(name: str, rows: Sequence[QuestionResult]) -> CategoryRow:
    refs = [r.reference for r in rows if r.reference is not None]
    return CategoryRow(
        name=name,
        questions=len(rows),
        recall=_mean(r.recall for r in rows),
        coverage=_mean(r.coverage for r in rows),
        tokens=_mean(r.tokens for r in rows) or 0.0,
        j=_mean(r.judge for r in rows),
        f1=_mean(r.f1 for r in rows),
        reference_recall=_mean(x["recall"] for x in refs) if refs else None,
        reference_coverage=_mean(x["coverage"] for x in refs) if refs else None,
        reference_tokens=_mean(x["tokens"] for x in refs) if refs else None,
    )


@dataclass
class LocomoResult:
    """Every question's figures; :meth:`by_category` sums them up."""

    k: int
    questions: list[QuestionResult] = field(default_factory=list)

    def by_category(self) -> list[CategoryRow]:
        """One row per category present (1 to 5), then "all four" (1 to 4: the
        answerable questions the published evaluations average over)."""
        rows = [
            _row(name, [q for q in self.questions if q.category == number])
            for number, name in CATEGORY_NAMES.items()
            if any(q.category == number for q in self.questions)
        ]
        answerable = [q for q in self.questions if q.category != 5]
        if answerable:
            rows.append(_row("all four (1-4)", answerable))
        return rows

    def to_json(self) -> dict[str, Any]:
        """The summary and every answer, JSON-ready."""
        return {
            "k": self.k,
            "by_category": [asdict(r) for r in self.by_category()],
            "questions": [asdict(q) for q in self.questions],
        }


def steps(conversations: Sequence[Conversation]) -> int:
    """How many progress steps :func:`run_locomo` reports: one per turn and per question."""
    return sum(len(c.turns) + len(c.questions) for c in conversations)


def _put_in_batches(store: BaseStore, ops: Sequence[Any]) -> Iterator[int]:
    """Write ``ops`` a batch at a time, yielding how many memories (puts) each stored."""
    for i in range(0, len(ops), _BATCH):
        store.batch(ops[i : i + _BATCH])
        yield sum(isinstance(op, PutOp) for op in ops[i : i + _BATCH])


def _figures(
    q: Question, found: Sequence[str], block: str, count: Callable[[str], int]
) -> dict[str, Any]:
    """What is measured of one retrieval, the vault's or the reference's."""
    return {
        "found": list(dict.fromkeys(found)),
        "recall": evidence_recall(found, q.evidence),
        "coverage": None if q.category == 5 else answer_coverage(q.answer, block),
        "tokens": count(block),
    }


def _turn_fact(conv: Conversation, turn: Turn, finder: EntityFinder | None) -> SemanticFact:
    # the entities the turn names; its speaker is who said it, not what it is about
    entities, relations = finder(turn.text) if finder is not None else ([], [])
    return SemanticFact(
        text=f"{turn.speaker}: {turn.text}",
        source="import",
        source_thread_id=f"{conv.sample_id}-session-{turn.session}",
        source_message_ids=[turn.dia_id],
        entities=entities,
        relations=relations,
        **observed_fields(turn.said_at, turn.text),
    )


def _store_turns(
    store: BaseStore, vault: MemoryVault, conv: Conversation, tick: Callable[[str], None]
) -> None:
    # Turn ids ("D1:3") are not keys (memory.keys): a stable UUID of the turn is; the fact's
    # source_message_ids keep the turn id, which is what recall is scored on. The write rule's
    # ops: the put, and the entity links when the vault's finder named any.
    ops = [
        op
        for t in conv.turns
        for op in memory_ops(
            vault.ns.semantic,
            str(uuid.uuid5(_TURNS, f"{conv.sample_id}/{t.dia_id}")),
            _turn_fact(conv, t, vault.entity_finder),
        )
    ]
    for written in _put_in_batches(store, ops):
        for _ in range(written):
            tick(f"{conv.sample_id}: storing turns")


def _extract_turns(
    store: BaseStore,
    vault: MemoryVault,
    conv: Conversation,
    extractor: Any,
    redaction: RedactionPolicy | None,
    tick: Callable[[str], None],
) -> None:
    for turn in conv.turns:
        message = HumanMessage(f"{turn.speaker}: {turn.text}", id=turn.dia_id, name=turn.speaker)
        thread = f"{conv.sample_id}-session-{turn.session}"
        checked = extract_span(
            store,
            extractor,
            [message],
            namespaces=vault.ns,
            thread_id=thread,
            redaction=redaction,
            observed_at=turn.said_at,  # the session date: observed_at, relative dates' base
        )
        apply(store, checked.extraction, vault.ns)
        tick(f"{conv.sample_id}: extracting")


def _settle(store: BaseStore) -> None:
    # VaultStore weighs a query's keywords by Postgres's statistics of the stored texts
    # (store._lexemes), which autovacuum refreshes when it gets round to it: questions asked
    # right after a bulk store were ranked with whichever statistics that moment held, and two
    # runs of one file differed on a fifth of the questions. Analyzing once the conversation is
    # stored asks every question as a user would, well after the writes, and the same way in
    # every run.
    if isinstance(store, VaultStore):
        store.analyze()


def _store_reference(reference: BaseStore, conv: Conversation) -> None:
    ns = (REFERENCE_NS, conv.sample_id)
    ops = [
        PutOp(ns, t.dia_id, {"text": f"{t.speaker}: {t.text}"}, index=["text"]) for t in conv.turns
    ]
    for _ in _put_in_batches(reference, ops):
        pass


def _ask_reference(
    reference: BaseStore, conv: Conversation, q: Question, k: int, count: Callable[[str], int]
) -> dict[str, Any]:
    hits = reference.search((REFERENCE_NS, conv.sample_id), query=q.question, limit=k)
    block = "\n".join(f"- {h.value['text']}" for h in hits)
    return _figures(q, [h.key for h in hits], block, count)


def run_locomo(
    conversations: Sequence[Conversation],
    store: BaseStore,
    *,
    k: int = 10,
    pipeline: bool = False,
    extractor: Any = None,
    model: Any = None,
    judge: Any = None,
    reference: BaseStore | None = None,
    max_tokens: int = 1000,
    redaction: RedactionPolicy | None = DEFAULT_POLICY,
    entity_finder: EntityFinder | None = None,
    on_step: Callable[[str], None] | None = None,
) -> LocomoResult:
    """Store every conversation in ``store``, ask every question, and score the answers.

    ``pipeline`` extracts with ``extractor`` (default: ``OfflineExtractor()``; a chat model
    or ``init_chat_model`` string works too) instead of storing each turn. ``model`` (a chat
    model) answers each question from the injected block and ``judge`` (default: ``model``)
    labels the answer. ``max_tokens`` is inject's budget. ``redaction`` is the pipeline's PII
    policy (None turns it off), as in :func:`~langmem_vault.extraction.extract_span`.
    ``entity_finder`` (:func:`langmem_vault.offline.find_entities`, say) names each stored
    turn's entities, so recall's entity branch can expand the questions that name them.
    ``on_step`` is called after each of :func:`steps` steps with what is being done.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if pipeline and extractor is None:
        from langmem_vault.offline._extractor import OfflineExtractor

        extractor = OfflineExtractor()
    tick = on_step or (lambda _: None)
    count = make_token_counter(None)
    inject = create_inject_node(
        store=store, max_tokens=max_tokens, max_facts=k, record_access=False, emit_events=False
    )
    result = LocomoResult(k=k)
    for conv in conversations:
        user = f"locomo-{conv.sample_id}"
        vault = MemoryVault(store, user_id=user, entity_finder=entity_finder)
        if pipeline:
            _extract_turns(store, vault, conv, extractor, redaction, tick)
        else:
            _store_turns(store, vault, conv, tick)
        if reference is not None:
            _store_reference(reference, conv)
        _settle(store)
        config: RunnableConfig = {"configurable": {"user_id": user, "thread_id": user}}
        for q in conv.questions:
            found = [
                i for m in vault.recall(q.question, limit=k) for i in m.value.source_message_ids
            ]
            block = inject.invoke({"messages": [HumanMessage(q.question)]}, config)[
                "memory_context"
            ]
            row = QuestionResult(
                sample_id=conv.sample_id,
                question=q.question,
                category=q.category,
                answer=q.answer,
                evidence=list(q.evidence),
                **_figures(q, found, block, count),
            )
            if model is not None:
                row.prediction = answer_question(model, block, q.question)
                row.judge = judge_answer(judge or model, q.question, q.answer, row.prediction)
                row.f1 = locomo_f1(row.prediction, q.answer, q.category)
            if reference is not None:
                row.reference = _ask_reference(reference, conv, q, k, count)
            result.questions.append(row)
            tick(f"{conv.sample_id}: asking")
    return result
