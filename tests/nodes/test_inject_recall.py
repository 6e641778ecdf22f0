"""inject ranks its facts through recall: the same facts, in the same order, with the same
fused score and branch ranks as MemoryVault.recall (sync and async, both stores), for a
question with no name in it and for one that names someone (both then also search without
the names: inject with ``search_without_names``, docs/recall.md)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.base import BaseStore

from langmem_vault.memory import MemoryVault, Recalled
from langmem_vault.nodes import create_inject_node
from tests.support.stores import thread

CFG = thread("u1", "t1")
QUESTION = "what does my sister do for work?"
# Priya starts two of the six facts: the vector branch ranks by the search without her name
QUESTIONS = [QUESTION, "What does Priya do in Porto?"]
FACTS = [
    ("Priya is the user's sister", "relationship"),
    ("Priya works as an architect in Porto", "relationship"),
    ("The user moved to Lyon in 2023", "personal"),
    ("The user works as a nurse", "company"),
    ("The user plays chess on Sundays", "preference"),
    ("The user's brother Tom lives in Leeds", "relationship"),
]


def _seed(vault: MemoryVault) -> None:
    for n, (text, category) in enumerate(FACTS):
        # two conversations, so the thread branch has something to say
        vault.remember(text, category=category, thread_id=f"chat-{n % 2}")


def _same_ranking(out: dict[str, Any], recalled: list[Recalled]) -> None:
    facts = [m for m in out["memory_items"] if m["kind"] == "fact"]
    assert [m["key"] for m in facts] == [r.key for r in recalled]
    for entry, memory in zip(facts, recalled, strict=True):
        scores = entry["scores"]
        assert scores["fused"] == round(memory.fused, 4) > 0
        ranks = {k.removesuffix("_rank"): v for k, v in scores.items() if k.endswith("_rank")}
        assert ranks == {name: float(hit.rank) for name, hit in memory.parts.items()}


def _node() -> Any:
    return create_inject_node(
        record_access=False, max_facts=3, max_pending=0, search_without_names=True
    ).node


@pytest.mark.parametrize("question", QUESTIONS)
def test_inject_ranks_facts_through_recall(store: BaseStore, question: str) -> None:
    vault = MemoryVault(store, user_id="u1")
    _seed(vault)
    node = _node()
    node.store = store
    out = node.invoke({"messages": [HumanMessage(question)]}, CFG)
    _same_ranking(out, vault.recall(question, limit=3, candidates=50))


@pytest.mark.parametrize("question", QUESTIONS)
async def test_async_inject_ranks_facts_through_recall(astore: BaseStore, question: str) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, (text, category) in enumerate(FACTS):
        await vault.aremember(text, category=category, thread_id=f"chat-{n % 2}")
    node = _node()
    node.store = astore
    out = await node.ainvoke({"messages": [HumanMessage(question)]}, CFG)
    _same_ranking(out, await vault.arecall(question, limit=3, candidates=50))
