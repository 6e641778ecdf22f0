"""reconcile: reinforce, supersede, pending, idempotent retries, one atomic write."""

from __future__ import annotations

import base64
import os
from typing import Any, ClassVar

import pytest
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from pydantic import ValidationError

from langmem_vault.extraction._reconcile import aapply_extraction, apply_extraction
from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory import Extraction
from langmem_vault.memory._models import ProposedEpisode, ProposedFact, ProposedInstruction
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._sealing import ENV_KEY, is_sealed
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._reconcile import create_reconcile_node
from tests.support.stores import USER, thread


def _ext(*facts: ProposedFact, ids: list[str] | None = None, **kw: Any) -> Extraction:
    return Extraction(facts=list(facts), thread_id="t1", message_ids=ids or [], **kw)


def test_new_facts_active_or_pending(store: BaseStore) -> None:
    report = apply_extraction(
        store,
        _ext(
            ProposedFact(text="Lives in Lyon", category="personal", confidence=0.9),
            ProposedFact(text="Might learn Rust", category="skill", confidence=0.6),
        ),
        config=USER,
    )
    assert len(report.added) == 1 and len(report.pending) == 1
    vault = MemoryVault(store, user_id="u1")
    facts = {m.value.text: m.value for m in vault.list(status=None)}
    assert facts["Lives in Lyon"].status == "active"
    assert facts["Lives in Lyon"].source == "conversation"
    assert facts["Lives in Lyon"].source_thread_id == "t1"
    assert facts["Might learn Rust"].status == "pending_confirmation"


def test_same_fact_raises_confidence(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    key = vault.remember("Lives in Lyon", confidence=0.7).key
    # by text match (no same_as given), then by explicit same_as
    r1 = apply_extraction(
        store, _ext(ProposedFact(text="lives in lyon.", confidence=0.6)), config=USER
    )
    r2 = apply_extraction(
        store, _ext(ProposedFact(text="Resides in Lyon", confidence=0.5, same_as=key)), config=USER
    )
    assert r1.reinforced == [key] and r2.reinforced == [key]
    facts = vault.list(status=None)
    assert len(facts) == 1
    fact = facts[0].value
    assert fact.confidence == pytest.approx(1 - 0.3 * 0.4 * 0.5)
    assert fact.mentions == 3
    assert fact.text == "Lives in Lyon"


def test_similarity_threshold_merges_paraphrase(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    key = vault.remember("The user prefers window seats on flights").key
    loose = apply_extraction(
        store,
        _ext(ProposedFact(text="The user prefers window seats on flights.", confidence=0.9)),
        config=USER,
        similarity_threshold=0.5,
    )
    assert loose.reinforced == [key]
    strict = apply_extraction(
        store,
        _ext(ProposedFact(text="The user prefers aisle seats on trains", confidence=0.9)),
        config=USER,
        similarity_threshold=0.99,
    )
    assert strict.reinforced == [] and len(strict.added) == 1


def test_pending_fact_confirmed_by_repetition(store: BaseStore) -> None:
    first = apply_extraction(
        store, _ext(ProposedFact(text="Plays tennis", confidence=0.6)), config=USER
    )
    (key,) = first.pending
    again = apply_extraction(
        store, _ext(ProposedFact(text="Plays tennis", confidence=0.6)), config=USER
    )
    assert again.confirmed == [key]
    got = MemoryVault(store, user_id="u1").get(key)
    assert got is not None and got.value.status == "active"
    assert got.value.confidence == pytest.approx(0.84)


def test_contradiction_supersedes_and_keeps_both(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    old = vault.remember("Lives in Lyon", category="personal").key
    report = apply_extraction(
        store,
        _ext(
            ProposedFact(
                text="Lives in Berlin", category="personal", confidence=0.9, supersedes=old
            )
        ),
        config=USER,
    )
    (new,) = report.added
    assert report.superseded == [old]
    old_fact, new_fact = vault.get(old), vault.get(new)
    assert old_fact is not None and new_fact is not None
    assert old_fact.value.status == "superseded" and old_fact.value.valid_to is not None
    assert old_fact.value.superseded_by == new
    assert new_fact.value.supersedes == old and new_fact.value.status == "active"
    assert [m.value.text for m in vault.recall("where does the user live")] == ["Lives in Berlin"]


def test_shaky_contradiction_waits(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    old = vault.remember("Lives in Lyon").key
    report = apply_extraction(
        store, _ext(ProposedFact(text="Lives in Oslo", confidence=0.5, supersedes=old)), config=USER
    )
    assert report.superseded == [] and len(report.pending) == 1
    assert vault.get(old).value.status == "active"  # type: ignore[union-attr]
    # the user says it again: the pending fact is confirmed and only then closes the old one
    again = apply_extraction(
        store, _ext(ProposedFact(text="Lives in Oslo", confidence=0.7)), config=USER
    )
    assert again.confirmed == report.pending
    assert again.superseded == [old]
    assert vault.get(old).value.status == "superseded"  # type: ignore[union-attr]


def test_invented_keys_become_new_facts(store: BaseStore) -> None:
    report = apply_extraction(
        store,
        _ext(ProposedFact(text="Owns a boat", confidence=0.9, same_as="nope", supersedes="nah")),
        config=USER,
    )
    assert len(report.added) == 1 and report.superseded == []


def test_instructions_and_episode(store: BaseStore) -> None:
    ext = _ext(
        instructions=[
            ProposedInstruction(text="Answer in French", priority=7),
            ProposedInstruction(text="answer in french"),
        ],
        episode=ProposedEpisode(summary="Talked about moving", importance=0.6, topics=["Move"]),
    )
    report = apply_extraction(store, ext, config=USER)
    assert len(report.instructions) == 1 and report.episode is not None
    vault = MemoryVault(store, user_id="u1")
    (ins,) = vault.instructions()
    assert ins.value.priority == 7 and ins.value.source == "conversation"
    (ep,) = vault.episodes()
    assert ep.value.thread_id == "t1" and ep.value.topics == ["move"]
    assert apply_extraction(store, ext, config=USER).instructions == []


def test_retry_of_same_span_changes_nothing(store: BaseStore) -> None:
    ext = _ext(
        ProposedFact(text="Lives in Lyon", confidence=0.9),
        ProposedFact(text="Likes jazz", confidence=0.6),
        ids=["m1", "m2"],
        episode=ProposedEpisode(summary="Intro chat"),
    )
    apply_extraction(store, ext, config=USER)
    before = {i.key: i.value for i in store.search(("memories", "u1"), limit=100)}
    again = apply_extraction(store, ext, config=USER)
    after = {i.key: i.value for i in store.search(("memories", "u1"), limit=100)}
    assert not again.reinforced and not again.added and not again.pending
    assert {k: v for k, v in after.items() if v.get("kind") == "semantic"} == {
        k: v for k, v in before.items() if v.get("kind") == "semantic"
    }
    assert set(after) == set(before)


def test_invalid_extraction_writes_nothing(store: BaseStore) -> None:
    with pytest.raises(ValidationError, match="confidence"):
        apply_extraction(
            store, {"facts": [{"text": "ok"}, {"text": "bad", "confidence": 4}]}, config=USER
        )
    assert store.search(("memories",)) == []


def test_one_batch_for_all_writes() -> None:
    class Counting(InMemoryStore):
        writes: ClassVar[list[int]] = []

        def batch(self, ops: Any) -> Any:
            ops = list(ops)
            if any(isinstance(op, PutOp) for op in ops):
                self.writes.append(len(ops))
                assert all(isinstance(op, PutOp) for op in ops)
            return super().batch(ops)

    store = Counting()
    vault = MemoryVault(store, user_id="u1")
    old = vault.remember("Lives in Lyon").key
    Counting.writes.clear()
    apply_extraction(
        store,
        _ext(
            ProposedFact(text="Lives in Berlin", confidence=0.9, supersedes=old),
            ProposedFact(text="Likes tea", confidence=0.9),
            instructions=[ProposedInstruction(text="Be brief")],
            episode=ProposedEpisode(summary="Moved"),
        ),
        config=USER,
    )
    assert Counting.writes == [5]  # new fact, closed fact, tea, instruction, episode
    assert all(item.value is not None for item in store.search(("memories",), limit=50))


def test_namespaces_resolved_or_templates(store: BaseStore) -> None:
    ns = MemoryNamespaces(semantic=("org", "{org}", "{user_id}", "facts"))
    cfg = {"configurable": {"user_id": "u1", "org": "acme"}}
    apply_extraction(
        store, _ext(ProposedFact(text="Knows SQL", confidence=0.9)), config=cfg, namespaces=ns
    )
    apply_extraction(
        store, _ext(ProposedFact(text="Knows Go", confidence=0.9)), namespaces=ns.resolve(cfg)
    )
    assert len(store.search(("org", "acme", "u1", "facts"))) == 2


def test_node_applies_state_extraction(store: BaseStore) -> None:
    node = create_reconcile_node()
    graph = (
        StateGraph(MemoryState).add_node("reconcile", node).add_edge(START, "reconcile")
    ).compile(store=store)
    ext = _ext(ProposedFact(text="Lives in Lyon", confidence=0.9))
    out = graph.invoke(
        {"messages": [], "extraction": ext.model_dump(mode="json")}, thread("u1", "t")
    )
    assert out["extraction"] is None
    assert node.node.last_report is not None and len(node.node.last_report.added) == 1
    assert graph.invoke({"messages": []}, thread("u1", "t")).get("extraction") is None
    with pytest.raises(ValueError, match="confirm_threshold"):
        create_reconcile_node(confirm_threshold=2)


def test_access_stamps_never_reopen_a_closed_fact(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    old = vault.remember("Lives in Lyon").key
    ns = ("memories", "u1", "semantic")
    recorder = AccessRecorder()
    for _ in range(10):
        recorder.record(store, [(ns, old)])
    apply_extraction(
        store,
        _ext(ProposedFact(text="Lives in Paris", confidence=0.9, supersedes=old)),
        config=USER,
    )
    for _ in range(10):
        recorder.record(store, [(ns, old)])
    recorder.flush()
    fact = vault.get(old)
    assert fact is not None and fact.value.status == "superseded"
    assert fact.value.access_count == 20


async def test_async_apply(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    old = (await vault.aremember("Lives in Lyon")).key
    report = await aapply_extraction(
        astore,
        _ext(
            ProposedFact(text="Lives in Berlin", confidence=0.9, supersedes=old),
            ProposedFact(text="Lives in Berlin", confidence=0.9),
            ProposedFact(text="Might buy a bike", confidence=0.4),
        ),
        config=USER,
    )
    assert report.superseded == [old]
    assert len(report.added) == 1 and len(report.reinforced) == 1 and len(report.pending) == 1
    active = await vault.alist()
    assert [m.value.text for m in active] == ["Lives in Berlin"]
    assert len(await vault.alist(status=None)) == 3


def test_private_fact_sealed_with_the_environment_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Private facts that extraction proposes are sealed by reconcile when a key is set."""
    monkeypatch.setenv(ENV_KEY, base64.b64encode(os.urandom(32)).decode())
    store = InMemoryStore()
    facts = [
        ProposedFact(text="User's sister is Anna Weber", confidence=0.9, private=True),
        ProposedFact(text="User prefers tea", confidence=0.9),
    ]
    apply_extraction(store, Extraction(facts=facts), config=USER)
    stored = {i.value.get("text"): i.value for i in store.search(("memories", "u1", "semantic"))}
    assert "User prefers tea" in stored and not is_sealed(stored["User prefers tea"])
    [sealed] = [v for v in stored.values() if is_sealed(v)]
    assert "Anna" not in str(sealed)
    # The facade opens it with the same environment key.
    texts = {m.value.text for m in MemoryVault(store, user_id="u1").list(status=None)}
    assert "User's sister is Anna Weber" in texts
