"""respond: prompt assembly, citations, utility of cited facts, sync and async."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.nodes._respond import build_system_prompt, cited_aliases, create_respond_node
from tests.support.models import ScriptedModel
from tests.support.stores import thread

CFG = thread("u1", "t1")


def _graph(model: Any, store: BaseStore | None, **kw: Any) -> Any:
    builder = StateGraph(MemoryState)
    builder.add_node("inject", create_inject_node())
    builder.add_node("respond", create_respond_node(model, **kw))
    builder.add_edge(START, "inject").add_edge("inject", "respond")
    return builder.compile(store=store)


def test_prompt_has_memory_and_summary_not_messages(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    vault.remember("Lives in Lyon", category="personal")
    model = ScriptedModel(replies=["You live in Lyon [M1]."])
    graph = _graph(model, store, system_prompt="You are Ada.")
    out = graph.invoke(
        {"messages": [HumanMessage("where do I live?")], "running_summary": "We met before."},
        CFG,
    )
    system = model.system_text()
    assert system.startswith("You are Ada.")
    assert "[M1] Lives in Lyon" in system and "cite it" in system
    assert "We met before." in system
    assert [type(m).__name__ for m in out["messages"]] == ["HumanMessage", "AIMessage"]
    assert out["cited"] == ["M1"]
    # only one system message reaches the model, the memory block is not in state messages
    assert sum(isinstance(m, SystemMessage) for m in model.prompts[0]) == 1


def test_citations_raise_utility(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    lyon = vault.remember("Lives in Lyon", category="personal").key
    acme = vault.remember("Works at Acme", category="company").key
    model = ScriptedModel(replies=["Lyon [M1], and [M7] is made up."])
    node = create_respond_node(model)
    builder = StateGraph(MemoryState)
    builder.add_node("inject", create_inject_node(record_access=False))
    builder.add_node("respond", node)
    builder.add_edge(START, "inject").add_edge("inject", "respond")
    out = builder.compile(store=store).invoke({"messages": [HumanMessage("home?")]}, CFG)
    assert out["cited"] == ["M1"]
    node.node.recorder.flush()
    assert out["memory_refs"]["M1"] == lyon
    cited = vault.get(lyon)
    other = vault.get(acme)
    assert cited is not None and cited.value.utility > 0.5
    # Shown to a citing model and not used: it loses a little (0.02, half of it at once).
    assert other is not None and other.value.utility == pytest.approx(0.49)


def test_no_memory_no_citation_rule() -> None:
    prompt = build_system_prompt("Be kind.", "", "")
    assert prompt == "Be kind."
    assert cited_aliases("see [M1]", {}) == []


def test_model_from_string_or_object(monkeypatch: Any) -> None:
    import langchain.chat_models as chat_models

    seen: list[str] = []

    def fake_init(name: str, **_: Any) -> Any:
        seen.append(name)
        return FakeListChatModel(responses=["hello"])

    monkeypatch.setattr(chat_models, "init_chat_model", fake_init)
    node = create_respond_node("openai:gpt-4o-mini")
    out = node.invoke({"messages": [HumanMessage("hi")]}, CFG)
    assert seen == ["openai:gpt-4o-mini"]
    assert out["messages"][0].content == "hello" and out["cited"] == []


async def test_async_respond(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    key = (await vault.aremember("Prefers window seats", category="preference")).key
    model = ScriptedModel(replies=["Window seat [M1]."])
    respond = create_respond_node(model)
    builder = StateGraph(MemoryState)
    builder.add_node("inject", create_inject_node())
    builder.add_node("respond", respond)
    builder.add_edge(START, "inject").add_edge("inject", "respond")
    out = await builder.compile(store=astore).ainvoke(
        {"messages": [HumanMessage("which seat?")]}, CFG
    )
    assert out["cited"] == ["M1"] and out["memory_refs"]["M1"] == key
    await respond.node.recorder.aflush()
    got = await vault.aget(key)
    assert got is not None and got.value.utility > 0.5
