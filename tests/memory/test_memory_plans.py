"""Memory plans with canned store results, no store: reconcile's reads, decisions and writes."""

from __future__ import annotations

from datetime import UTC, datetime

from langgraph.store.base import GetOp, Item, PutOp, SearchOp

from langmem_vault.extraction._reconcile import reconcile_plan
from langmem_vault.memory._models import Extraction, ProposedFact
from langmem_vault.memory._namespaces import MemoryNamespaces
from tests.support.plans import drive

NS = MemoryNamespaces().resolve({"configurable": {"user_id": "u1"}})
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _stored(key: str, text: str, confidence: float) -> Item:
    value = {"text": text, "category": "general", "confidence": confidence, "status": "active"}
    return Item(namespace=list(NS.semantic), key=key, value=value, created_at=NOW, updated_at=NOW)


def test_a_new_fact_is_one_read_batch_then_one_write_batch() -> None:
    extraction = Extraction(facts=[ProposedFact(text="Likes tea", confidence=0.9)])
    plan = reconcile_plan(extraction, NS, now=NOW)
    (reads, writes), report = drive(plan, [[], []], [None])
    assert [type(op) for op in reads] == [SearchOp, SearchOp]
    assert reads[0].query == "Likes tea" and tuple(reads[0].namespace_prefix) == NS.semantic
    assert len(writes) == 1 and isinstance(writes[0], PutOp)
    assert writes[0].value["text"] == "Likes tea" and report.added == [writes[0].key]


def test_the_same_fact_again_reinforces_instead_of_adding() -> None:
    stored = _stored("k1", "Likes tea", 0.6)
    extraction = Extraction(facts=[ProposedFact(text="Likes tea", confidence=0.5, same_as="k1")])
    plan = reconcile_plan(extraction, NS, now=NOW)
    (reads, writes), report = drive(plan, [stored, [], []], [None])
    assert isinstance(reads[0], GetOp) and reads[0].key == "k1"
    assert report.added == [] and report.reinforced == ["k1"]
    (put,) = writes
    assert put.key == "k1" and put.value["confidence"] == 0.8  # 1 - 0.4 x 0.5
