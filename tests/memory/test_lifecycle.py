"""Memory layers (store TTL, promotion, ranking by session) and utility feedback, on
InMemoryStore and the real VaultStore, sync and async."""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from langmem_vault.extraction._reconcile import apply_extraction
from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory import Extraction
from langmem_vault.memory._layers import LayerPolicy
from langmem_vault.memory._lifecycle.feedback import (
    amemory_feedback,
    arate_turn,
    memory_feedback,
    rate_turn,
)
from langmem_vault.memory._models import ProposedFact
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.scoring import ScoringWeights
from langmem_vault.memory._recall.usage import usage_namespace
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.nodes._respond import create_respond_node
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.models import ScriptedModel
from tests.support.stores import USER, thread

SEMANTIC = ("memories", "u1", "semantic")
#: lifetimes short enough to watch the store expire them (0.6 s and 1.2 s)
FAST = LayerPolicy(short_term_minutes=0.01, working_minutes=0.02)


def test_layers_expire_by_the_store_ttl_and_promotion_clears_it(
    pg_uri: str, schema: str, index: dict[str, object]
) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:  # type: ignore[arg-type]
        store.setup()
        vault = MemoryVault(store, user_id="u1", weights=ScoringWeights(layers=FAST))
        note = vault.remember("In a hurry today", layer="short_term", thread_id="t1").key
        recent = vault.remember("Plans a trip to Rome", layer="working").key
        kept = vault.remember("Lives in Lyon").key  # stated by the user: long-term
        promoted = vault.remember("Likes jazz", layer="working").key
        assert vault.get(kept).value.layer == "long_term"  # type: ignore[union-attr]
        result = memory_feedback(store, promoted, "up", user_id="u1", layers=FAST)
        assert result.promoted == {}  # one thumbs-up: not enough evidence yet
        result = memory_feedback(store, [promoted, "nope"], "up", user_id="u1", layers=FAST)
        assert result.promoted == {promoted: "long_term"} and result.missing == ["nope"]
        time.sleep(1.5)
        assert vault.get(note) is None and vault.get(recent) is None
        assert vault.get(kept) is not None
        survivor = vault.get(promoted)
        assert survivor is not None and survivor.value.layer == "long_term"


async def test_async_layers_expire_and_confirm_makes_long_term(
    pg_uri: str, schema: str, index: dict[str, object]
) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:  # type: ignore[arg-type]
        await store.setup()
        vault = MemoryVault(store, user_id="u1", weights=ScoringWeights(layers=FAST))
        guess = (await vault.aremember("Might move to Oslo", layer="working")).key
        other = (await vault.aremember("Might learn Rust", layer="working")).key
        confirmed = await vault.aconfirm(guess)
        assert confirmed.value.layer == "long_term"
        result = await amemory_feedback(store, other, "down", user_id="u1", layers=FAST)
        assert result.utility[other] == pytest.approx(0.35) and result.promoted == {}
        await asyncio.sleep(1.5)
        assert await vault.aget(other) is None
        assert (await vault.aget(guess)) is not None


def test_reconcile_puts_new_facts_in_working_or_short_term_and_repetition_promotes(
    store: BaseStore,
) -> None:
    def extraction(*facts: ProposedFact, ids: list[str]) -> Extraction:
        return Extraction(facts=list(facts), thread_id="t1", message_ids=ids)

    apply_extraction(
        store,
        extraction(
            ProposedFact(text="Lives in Lyon", category="personal", confidence=0.9),
            ProposedFact(text="Maybe tired today", category="personal", confidence=0.3),
            ids=["m1"],
        ),
        config=USER,
    )
    vault = MemoryVault(store, user_id="u1")
    layers = {m.value.text: m.value.layer for m in vault.list(status=None)}
    assert layers == {"Lives in Lyon": "working", "Maybe tired today": "short_term"}
    for n, mid in enumerate(["m2", "m3"]):
        apply_extraction(
            store,
            extraction(ProposedFact(text="Lives in Lyon", confidence=0.9), ids=[mid]),
            config=USER,
        )
        fact = next(m.value for m in vault.list() if m.value.text == "Lives in Lyon")
        # mentions 2 -> 1 repetition (still working); mentions 3 -> 2 repetitions: long-term
        assert fact.layer == ("working" if n == 0 else "long_term")


def test_this_sessions_short_term_memory_competes_other_sessions_do_not(
    store: BaseStore,
) -> None:
    # The same note in two sessions: equal relevance, so only the layer factor decides.
    vault = MemoryVault(store, user_id="u1")
    vault.remember("Owns a red bicycle")
    note = "Wants short answers today"
    mine = vault.remember(note, layer="short_term", thread_id="t1").key
    theirs = vault.remember(note, layer="short_term", thread_id="t2").key
    node = create_inject_node(max_facts=1, record_access=False)
    graph = StateGraph(MemoryState).add_node("inject", node).add_edge(START, "inject")
    compiled = graph.compile(store=store)
    ask = {"messages": [HumanMessage("How long should answers be today?")]}
    assert list(compiled.invoke(ask, thread("u1", "t1"))["memory_refs"].values()) == [mine]
    assert list(compiled.invoke(ask, thread("u1", "t2"))["memory_refs"].values()) == [theirs]
    # A long-term memory beats another session's note of the same relevance.
    durable = vault.remember(note).key
    refs = compiled.invoke(ask, thread("u1", "t3"))["memory_refs"]
    assert list(refs.values()) == [durable]


def test_feedback_moves_utility_and_ranking(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    tea = vault.remember("Drinks green tea every morning", category="preference").key
    coffee = vault.remember("Drinks black coffee every morning", category="preference").key
    assert [m.key for m in vault.recall(limit=2)] == [coffee, tea]
    up = memory_feedback(store, tea, "up", user_id="u1")
    down = memory_feedback(store, coffee, "down", config=USER)
    # Momentum 0.5: one explicit signal moves a score by half its 0.3 at once.
    assert up.utility == {tea: pytest.approx(0.65)} and down.utility == {
        coffee: pytest.approx(0.35)
    }
    # Equal confidence, (almost) equal recency: utility decides the order. Coffee was
    # written last, so it led before the feedback.
    assert [m.key for m in vault.recall(limit=2)] == [tea, coffee]
    record = store.get(usage_namespace(SEMANTIC), tea)
    assert record is not None and record.value["feedback_up"] == 1
    with pytest.raises(ValueError, match="signal must be"):
        memory_feedback(store, tea, 3, user_id="u1")
    with pytest.raises(ValueError, match="keys must be non-empty"):
        memory_feedback(store, [tea, ""], "up", user_id="u1")
    after = store.get(usage_namespace(SEMANTIC), tea)
    assert after is not None and after.value == record.value  # bad input wrote nothing


def _chat_graph(store: BaseStore, reply: str) -> object:
    builder = StateGraph(MemoryState)
    builder.add_node("inject", create_inject_node(record_access=False))
    respond = create_respond_node(
        ScriptedModel(replies=[reply]), record_utility=AccessRecorder(inline=True)
    )
    builder.add_node("respond", respond)
    builder.add_edge(START, "inject").add_edge("inject", "respond")
    return builder.compile(store=store, checkpointer=InMemorySaver())


def test_thumbs_on_a_turn_rates_the_cited_memories(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    lyon = vault.remember("Lives in Lyon", category="personal").key
    acme = vault.remember("Works at Acme", category="company").key
    graph = _chat_graph(store, "You live in Lyon [M1].")
    config = thread("u1", "t1")
    out = graph.invoke({"messages": [HumanMessage("where do I live?")]}, config)  # type: ignore[attr-defined]
    assert out["memory_refs"]["M1"] == lyon
    result = rate_turn(graph, config, "down")
    assert list(result.utility) == [lyon]  # the cited memory, not every memory shown
    assert store.get(usage_namespace(SEMANTIC), acme) is None or "signal" not in (
        store.get(usage_namespace(SEMANTIC), acme).value  # type: ignore[union-attr]
    )


async def test_async_thumbs_on_a_turn(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    lyon = (await vault.aremember("Lives in Lyon", category="personal")).key
    graph = _chat_graph(astore, "No idea.")  # nothing cited: the rating covers what was shown
    config = thread("u1", "t1")
    await graph.ainvoke({"messages": [HumanMessage("where do I live?")]}, config)  # type: ignore[attr-defined]
    result = await arate_turn(graph, config, "up")
    # +0.3 for the thumbs-up, -0.02 for being shown and not cited; half of it at once.
    assert result.utility == {lyon: pytest.approx(0.64)}
