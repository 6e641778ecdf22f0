"""inject: selection, budget, state key not message, stream event, access stamps."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.retrievers import BaseRetriever
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from langmem_vault.db import _store_plans as store_plans
from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory import MissingConfigKeyError
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.accounting import accounting_namespace
from langmem_vault.memory._recall.usage import arecord_usage, record_usage, usage_increments
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._degrade import Degrade
from langmem_vault.nodes._inject import create_inject_node, latest_user_text
from langmem_vault.store._mirrors import runs_mirror_search
from tests.support.stores import thread

CFG = thread("u1", "t1")


def _graph(node: Any, store: BaseStore) -> Any:
    builder = StateGraph(MemoryState).add_node("inject", node).add_edge(START, "inject")
    return builder.compile(store=store)


def _seed(vault: MemoryVault) -> dict[str, str]:
    keys = {
        "lyon": vault.remember("Lives in Lyon", category="personal").key,
        "acme": vault.remember("Works at Acme Robotics", category="company").key,
        "seat": vault.remember("Prefers window seats on flights", category="preference").key,
        "rex": vault.remember("Has a dog named Rex", category="personal").key,
    }
    vault.add_instruction("Answer in French", priority=3)
    vault.add_instruction("Keep answers under 100 words", priority=8)
    vault.add_instruction("Mention the visa rules", priority=5, condition="topic contains travel")
    return keys


def test_injects_instructions_then_relevant_facts(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    keys = _seed(vault)
    node = create_inject_node()
    graph = _graph(node, store)
    events: list[dict[str, Any]] = []
    out: dict[str, Any] = {}
    question = HumanMessage("Which airline seat should I book for my travel?")
    for mode, chunk in graph.stream(
        {"messages": [question]}, CFG, stream_mode=["custom", "values"]
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            out = chunk
    ctx = out["memory_context"]
    # highest priority first, the conditional one because the message is about travel
    assert ctx.index("under 100 words") < ctx.index("visa rules") < ctx.index("French")
    assert out["memory_refs"]["M1"] == keys["seat"]
    assert len(out["messages"]) == 1  # the block is a state key, not a message
    assert events == [
        {
            "type": "memory_injected",
            "count": 7,
            "facts": 4,
            "episodes": 0,
            "instructions": 3,
            "preview": events[0]["preview"],
        }
    ]
    assert events[0]["preview"][0] == "Keep answers under 100 words"


def test_no_user_message_uses_base_score(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    vault.remember("Maybe likes jazz", confidence=0.3)
    sure = vault.remember("Is vegetarian", category="personal", confidence=1.0).key
    node = create_inject_node()
    out = _graph(node, store).invoke({"messages": []}, CFG)
    assert out["memory_refs"]["M1"] == sure
    assert "conditional" not in out["memory_context"]


def test_condition_false_and_pending_excluded(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    _seed(vault)
    pending = vault.remember("Might move to Oslo", confidence=0.5).key
    vault.update(pending, status="pending_confirmation")
    out = _graph(create_inject_node(), store).invoke(
        {"messages": [HumanMessage("what is for dinner?")]}, CFG
    )
    assert "visa" not in out["memory_context"]
    assert "Oslo" not in out["memory_context"]
    assert pending not in out["memory_refs"].values()


def test_token_budget_respected(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for i in range(40):
        vault.remember(f"Fact number {i} about the user's long and detailed project history")
    words: list[int] = []

    def counter(text: str) -> int:
        words.append(1)
        return len(text.split())

    node = create_inject_node(max_tokens=120, token_counter=counter, max_facts=40)
    out = _graph(node, store).invoke({"messages": [HumanMessage("project?")]}, CFG)
    assert len(out["memory_context"].split()) <= 120
    assert 3 <= len(out["memory_refs"]) < 40
    assert words  # the given counter was used
    with pytest.raises(ValueError, match="max_tokens"):
        create_inject_node(max_tokens=10)


def test_category_balance(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for food in ["sushi", "pizza", "tacos", "ramen", "curry", "pho", "paella", "falafel"]:
        vault.remember(f"Likes eating {food}", category="preference")
    vault.remember("Works as a chef at a restaurant", category="company")
    node = create_inject_node(max_facts=5, max_share=0.4)
    out = _graph(node, store).invoke({"messages": [HumanMessage("what food do I like?")]}, CFG)
    assert "chef" in out["memory_context"]
    assert out["memory_context"].count("Likes eating") == 4  # 2 capped + filled after chef


def test_records_access_in_background(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    keys = _seed(vault)
    node = create_inject_node()
    _graph(node, store).invoke({"messages": [HumanMessage("where do I live?")]}, CFG)
    node.node.recorder.flush()
    fact = vault.get(keys["lyon"])
    assert fact is not None and fact.value.access_count == 1
    assert fact.value.last_accessed is not None
    used = {i.value.text: i.value.usage_count for i in vault.instructions()}
    assert used["Keep answers under 100 words"] == 1
    # the stamp kept the embedding: search still finds the fact
    assert vault.recall("city of residence", limit=1)[0].key == keys["lyon"]


class _Recorder(AccessRecorder):
    """Notes which thread hands over each turn's stamps, and what they are."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, list[Any]]] = []

    def record(self, store: BaseStore, targets: Any, *, cited: Any = (), uncited: Any = ()) -> None:
        self.calls.append((threading.current_thread().name, list(targets)))
        super().record(store, targets, cited=cited, uncited=uncited)


def test_stamps_are_handed_over_in_the_callers_thread(store: BaseStore) -> None:
    # The body runs on the guard's thread (timeout); the stamps' background writer is woken
    # from the caller's thread after it, so it never holds the GIL the caller waits for.
    vault = MemoryVault(store, user_id="u1")
    keys = _seed(vault)
    recorder = _Recorder()
    node = create_inject_node(store=store, record_access=recorder, timeout=5.0, emit_events=False)
    node.invoke({"messages": [HumanMessage("where do I live?")]}, CFG)
    recorder.flush()
    [(thread_name, targets)] = recorder.calls
    assert thread_name == threading.current_thread().name
    assert (("memories", "u1", "semantic"), keys["lyon"]) in targets
    fact = vault.get(keys["lyon"])
    assert fact is not None and fact.value.access_count == 1


class _SlowDocuments(BaseRetriever):
    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        time.sleep(0.4)
        return []


def test_a_turn_out_of_time_stamps_nothing(store: BaseStore) -> None:
    # The turn went on without memory: nothing it read counts as shown, even when the body
    # finishes later on its own thread.
    vault = MemoryVault(store, user_id="u1")
    keys = _seed(vault)
    recorder = _Recorder()
    node = create_inject_node(
        store=store,
        record_access=recorder,
        documents=_SlowDocuments(),
        timeout=0.1,
        emit_events=False,
    )
    out = node.invoke({"messages": [HumanMessage("where do I live?")]}, CFG)
    assert out["memory_status"]["inject"].startswith("TimeoutError")
    time.sleep(0.6)  # the body's thread is done by now
    recorder.flush()
    assert recorder.calls == []
    fact = vault.get(keys["lyon"])
    assert fact is not None and fact.value.access_count == 0


def test_degrade_runs_then_only_after_the_body_answered() -> None:
    done: list[str] = []
    guard = Degrade("inject", timeout=1.0)
    assert guard.run(lambda: {"a": 1}, lambda: done.append("then"))["a"] == 1
    assert done == ["then"]
    failed = guard.run(lambda: 1 / 0, lambda: done.append("again"))
    assert failed["memory_status"]["inject"].startswith("ZeroDivisionError")
    assert done == ["then"]
    # a failing bookkeeping step degrades the turn like the body's own failure
    broken = guard.run(lambda: {"a": 1}, lambda: [][0])
    assert broken["memory_status"]["inject"].startswith("IndexError")


def test_episodes_recent_first(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    now = datetime.now(UTC)
    old = now - timedelta(days=60)
    vault.add_episode("Very old chat", importance=0.5, started_at=old, ended_at=old)
    vault.add_episode("Planned the Rome trip", importance=0.8, outcome="booked")
    node = create_inject_node(max_episodes=1)
    graph = _graph(node, store)
    out = graph.invoke({"messages": []}, CFG)
    assert "Planned the Rome trip" in out["memory_context"]
    assert "Outcome: booked" in out["memory_context"]
    assert "Very old chat" not in out["memory_context"]
    graph.invoke({"messages": []}, CFG)
    node.node.recorder.flush()
    # both turns are counted: stamps of the same item never overwrite each other
    assert [e.value.access_count for e in vault.episodes()] == [2, 0]


def test_missing_user_id_is_named(store: BaseStore) -> None:
    graph = _graph(create_inject_node(), store)
    with pytest.raises(MissingConfigKeyError, match="user_id"):
        graph.invoke({"messages": []}, {"configurable": {"thread_id": "t"}})


def test_store_required() -> None:
    graph = StateGraph(MemoryState).add_node("inject", create_inject_node())
    graph.add_edge(START, "inject")
    with pytest.raises(ValueError, match="need a store"):
        graph.compile().invoke({"messages": []}, CFG)


def test_latest_user_text() -> None:
    msgs = [HumanMessage("first"), AIMessage("reply"), HumanMessage("  second ")]
    assert latest_user_text(msgs) == "second"
    assert latest_user_text([AIMessage("hi")]) is None


async def test_async_inject(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    lyon = (await vault.aremember("Lives in Lyon", category="personal")).key
    await vault.aremember("Works at Acme Robotics", category="company")
    await vault.aadd_instruction("Answer in French", priority=4)
    node = create_inject_node()
    graph = _graph(node, astore)
    events = []
    async for mode, chunk in graph.astream(
        {"messages": [HumanMessage("which city is home?")]},
        CFG,
        stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            out = chunk
    assert out["memory_refs"]["M1"] == lyon
    assert "Answer in French" in out["memory_context"]
    assert events[0]["count"] == 3
    await node.node.recorder.aflush()
    got = await vault.aget(lyon)
    assert got is not None and got.value.access_count == 1


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("max_facts", -1, "max_facts must be an int >= 0, got -1"),
        ("max_episodes", -1, "max_episodes must be an int >= 0, got -1"),
        ("max_instructions", -1, "max_instructions must be an int >= 0, got -1"),
        ("candidates", 0, "candidates must be an int >= 1, got 0"),
        ("max_facts", 2.5, "max_facts must be an int"),
    ],
)
def test_bad_counts_are_refused_at_construction(setting: str, value: Any, message: str) -> None:
    # A negative count used to slice the list from its end, silently dropping items.
    with pytest.raises(ValueError, match=message):
        create_inject_node(**{setting: value})


def test_recent_episodes_among_60_by_their_own_time(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    now = datetime.now(UTC)
    for n in [59, *range(57), 58, 57]:  # neither insertion nor time order
        when = now - timedelta(hours=60 - n)
        vault.add_episode(f"Episode number {n}", started_at=when, ended_at=when)
    node = create_inject_node(max_episodes=3, record_access=False)
    out = _graph(node, store).invoke({"messages": [HumanMessage("hello")]}, CFG)
    shown = [int(w) for w in out["memory_context"].replace(".", " ").split() if w.isdigit()]
    assert shown == [59, 58, 57]


def test_pending_facts_join_only_when_nothing_better_matches(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    key = vault.remember("User speaks Portuguese", category="skill", confidence=0.7).key
    vault.update(key, status="pending_confirmation")
    vault.remember("User works at Acme Robotics", category="company")
    vault.remember("User likes green tea", category="preference")
    node = create_inject_node(store=store, record_access=False).node
    asked = node.invoke({"messages": [HumanMessage("Which languages can I speak?")]}, CFG)
    # (its category, then when it was said: "(skill; said ...)")
    assert "- [M1] (unconfirmed) User speaks Portuguese (skill;" in asked["memory_context"]
    # an active fact matches better: the pending one stays out
    other = node.invoke({"messages": [HumanMessage("Where do I work?")]}, CFG)
    assert "Acme" in other["memory_context"] and "Portuguese" not in other["memory_context"]
    off = create_inject_node(store=store, record_access=False, max_pending=0).node
    asked = off.invoke({"messages": [HumanMessage("Which languages can I speak?")]}, CFG)
    assert "Portuguese" not in asked["memory_context"]


# Two facts alike but for their usage (the older one cited three times) and a private fact
# cited once.
USAGE_FACTS = [
    ("tea", "Likes green tea", "preference", False),
    ("coffee", "Likes black coffee", "preference", False),
    ("name", "Is called Dana", "personal", True),
]


def _citations(vault: MemoryVault, keys: dict[str, str]) -> list[Any]:
    now = datetime.now(UTC)
    cite = [(vault.ns.semantic, keys["tea"])] * 3 + [(vault.ns.semantic, keys["name"])]
    return [usage_increments([], [target], now) for target in cite]


def _check_usage_counted(out: dict[str, Any], keys: dict[str, str], tea: Any, name: Any) -> None:
    shown = list(out["memory_refs"].values())
    # the older fact's citations outweigh the newer one's recency
    assert shown.index(keys["tea"]) < shown.index(keys["coffee"])
    scores = {m["key"]: m["scores"] for m in out["memory_items"] if m["kind"] == "fact"}
    assert scores[keys["tea"]]["utility"] == round(tea.value.utility, 4) > 0.5
    assert scores[keys["coffee"]]["utility"] == 0.5
    assert scores[keys["name"]]["utility"] == round(name.value.utility, 4) > 0.5


def test_usage_records_count_in_the_score_in_one_batch(
    store: BaseStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = MemoryVault(store, user_id="u1")
    keys = {
        name: vault.remember(text, category=category, confidence=0.9, private=private).key
        for name, text, category, private in USAGE_FACTS
    }
    for increments in _citations(vault, keys):
        record_usage(store, increments)
    batches: list[int] = []
    batch = store_plans._batch
    accounting = accounting_namespace("u1")

    def counted(s: BaseStore, ops: Any) -> Any:
        # inject's reads; not the turn's accounting, which an InMemoryStore gets at once
        if not any(getattr(op, "namespace", None) == accounting for op in ops):
            batches.append(1)
        return batch(s, ops)

    monkeypatch.setattr(store_plans, "_batch", counted)
    node = create_inject_node(store=store, record_access=False).node
    out = node.invoke({"messages": []}, CFG)
    # VaultStore reads the usage records with the searches: one batch, not two
    assert len(batches) == (1 if runs_mirror_search(store) else 2)
    _check_usage_counted(out, keys, vault.get(keys["tea"]), vault.get(keys["name"]))


async def test_usage_records_count_in_the_score_in_one_batch_async(
    astore: BaseStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = MemoryVault(astore, user_id="u1")
    keys = {}
    for name, text, category, private in USAGE_FACTS:
        fact = await vault.aremember(text, category=category, confidence=0.9, private=private)
        keys[name] = fact.key
    for increments in _citations(vault, keys):
        await arecord_usage(astore, increments)
    batches: list[int] = []
    abatch = store_plans._abatch

    async def counted(s: BaseStore, ops: Any) -> Any:
        batches.append(1)
        return await abatch(s, ops)

    monkeypatch.setattr(store_plans, "_abatch", counted)
    node = create_inject_node(store=astore, record_access=False).node
    out = await node.ainvoke({"messages": []}, CFG)
    assert len(batches) == (1 if runs_mirror_search(astore) else 2)
    tea, name = await vault.aget(keys["tea"]), await vault.aget(keys["name"])
    _check_usage_counted(out, keys, tea, name)
