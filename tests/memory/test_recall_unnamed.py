"""recall's second search, for the question without its names (memory/_recall/subjects.py,
branch_lists.py): in a transcript every line starts with a speaker's name, and the name in
the question pulls its embedding towards that person's greetings, whatever they say. inject
runs it too when asked (``search_without_names``), in its one batch."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.store.base import BaseStore, SearchOp
from langgraph.store.memory import InMemoryStore

from langmem_vault.memory import MemoryVault, Recalled
from langmem_vault.memory._recall.recall_plan import (
    Candidate,
    RecallFound,
    RecallQuery,
    rank_found,
    recall_ops,
)
from langmem_vault.memory._recall.subjects import named_share, without_names
from langmem_vault.nodes import create_inject_node
from tests.support.stores import thread

CHAT = [
    "Nate: Hey Joanna, Nate here! Long time no see.",
    "Nate: Joanna, you know me, always busy.",
    "Nate: Nate is my name, Joanna!",
    "Nate: Hi Joanna! It's Nate again.",
    "Nate: Thanks Joanna, talk soon!",
    "Joanna: Nate! So good to hear from you, Nate.",
    "Nate: Joanna, what about you?",
    "Joanna: Nate, tell me everything, Nate!",
    "Nate: Two weeks in Lisbon and Porto last spring.",
    "Nate: Jazz records on vinyl, mostly Coltrane.",
    "Nate: A new mechanical keyboard arrived today.",
    "Nate: Spicy lentil soup, almost every evening.",
]
ANSWER = "Nate: A new mechanical keyboard arrived today."
# by the question's own embedding the answer is 9th of these lines; without "Nate", 1st
QUESTION = "What did Nate buy recently?"


def _said(n: int) -> datetime:
    return datetime(2024, 3, 2, tzinfo=UTC) + timedelta(days=n)


def _check(hits: Sequence[Recalled]) -> None:
    # six candidates by the question as asked miss the answer; the second search (two)
    # finds it, and its cosine ranks the vector branch: Nate is whose lines these are
    texts = [h.value.text for h in hits]
    assert texts[0] == ANSWER, texts
    assert hits[0].parts["vector"].rank == 1


def test_the_search_without_the_names_finds_the_answer(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for n, text in enumerate(CHAT):
        vault.remember(text, observed_at=_said(n))
    _check(vault.recall(QUESTION, limit=3, candidates=6))


async def test_the_search_without_the_names_finds_the_answer_async(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, text in enumerate(CHAT):
        await vault.aremember(text, observed_at=_said(n))
    _check(await vault.arecall(QUESTION, limit=3, candidates=6))


def _inject_facts(out: dict[str, Any]) -> list[str]:
    return [m["text"] for m in out["memory_items"] if m["kind"] == "fact"]


def _inject_node(store: BaseStore, search_without_names: bool) -> Any:
    # six candidates, as the recall tests above: the second search reads two
    node = create_inject_node(
        record_access=False, max_facts=1, candidates=6, search_without_names=search_without_names
    ).node
    node.store = store
    return node


def test_inject_searches_without_the_names_when_asked(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for n, text in enumerate(CHAT):
        vault.remember(text, observed_at=_said(n))
    ask = {"messages": [HumanMessage(QUESTION)]}
    assert _inject_facts(_inject_node(store, True).invoke(ask, thread("u1", "t1"))) == [ANSWER]
    # by default one search per turn: the question as asked misses the answer
    assert _inject_facts(_inject_node(store, False).invoke(ask, thread("u1", "t1"))) != [ANSWER]


async def test_inject_searches_without_the_names_when_asked_async(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, text in enumerate(CHAT):
        await vault.aremember(text, observed_at=_said(n))
    ask = {"messages": [HumanMessage(QUESTION)]}
    out = await _inject_node(astore, True).ainvoke(ask, thread("u1", "t1"))
    assert _inject_facts(out) == [ANSWER]
    out = await _inject_node(astore, False).ainvoke(ask, thread("u1", "t1"))
    assert _inject_facts(out) != [ANSWER]


def test_only_a_question_with_a_name_searches_twice() -> None:
    ns = ("memories", "u1", "semantic")
    ops = recall_ops(RecallQuery(ns, QUESTION, candidates=300, unnamed=100))
    assert [(op.query, op.limit) for op in ops if isinstance(op, SearchOp)] == [
        (QUESTION, 300),
        ("What did buy recently?", 100),
    ]
    assert len(recall_ops(RecallQuery(ns, "what did I buy?", candidates=300, unnamed=100))) == 1
    # a query that asks for no second search (``unnamed`` 0) runs one
    assert len(recall_ops(RecallQuery(ns, QUESTION, candidates=50))) == 1


def test_names_come_out_and_only_a_crowded_subjects_name_swaps_the_vector_list() -> None:
    assert without_names("What did Nate's sister buy in Lisbon?") == "What did sister buy in?"
    assert without_names("Did the LGBTQ group meet?") == "Did the LGBTQ group meet?"
    assert named_share("Did Nate go to Lisbon?", {1: "Nate: hi", 2: "I flew to Lisbon"}) == 0.5
    at = datetime(2024, 3, 2, tzinfo=UTC)
    ns = ("memories", "u1", "semantic")

    def vector_ranks(question: str, others: int = 0) -> dict[str, int]:
        store = InMemoryStore()
        lines = {"a": "Nate: hi Joanna", "b": "Nate: a keyboard"}
        lines.update({f"o{n}": f"Joanna: line {n}" for n in range(others)})
        for key, text in lines.items():
            store.put(ns, key, {"text": text, "kind": "semantic", "created_at": at.isoformat()})
        # by the question as asked "a" is the best match, by the question without names "b"
        candidates = {
            (ns, i.key): Candidate(i, vector=0.9 if i.key == "a" else 0.5) for i in store.search(ns)
        }
        unnamed = [((ns, "b"), 0.8), ((ns, "a"), 0.1)]
        found = RecallFound(RecallQuery(ns, question, unnamed=10), candidates, {}, {}, unnamed)
        return {m.key: m.parts["vector"].rank for m in rank_found(found, at) if m.key < "c"}

    # Nate starts every candidate: the second search's cosine ranks
    assert vector_ranks("What did Nate buy?") == {"b": 1, "a": 2}
    # Lisbon starts none; Nate two of ten (the question is about him): the question's own
    assert vector_ranks("What did I buy in Lisbon?") == {"a": 1, "b": 2}
    assert vector_ranks("What did Nate buy?", others=8) == {"a": 1, "b": 2}
    assert vector_ranks("What did Nate buy?", others=6) == {"b": 1, "a": 2}
