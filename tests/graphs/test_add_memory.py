"""add_memory: memory wired around an app's own agent node, with a tool loop and compaction."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import BaseStore

from langmem_vault.graphs import CompactOptions, ExtractOptions, MemoryState, add_memory
from langmem_vault.offline._extractor import OfflineExtractor


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


class Agent:
    """A scripted agent: asks the weather tool when the user says 'weather', else echoes the
    memory section it was given (so tests can see what inject provided)."""

    def __init__(self) -> None:
        self.calls = 0
        self.contexts: list[str] = []

    def __call__(self, state: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        last = state["messages"][-1]
        self.contexts.append(state.get("memory_context", ""))
        if isinstance(last, HumanMessage) and "weather" in str(last.content).lower():
            call = {"name": "get_weather", "args": {"city": "Lyon"}, "id": f"call_{self.calls}"}
            return {"messages": [AIMessage("", tool_calls=[call])]}
        if isinstance(last, ToolMessage):
            return {"messages": [AIMessage(f"It is {last.content}.")]}
        return {"messages": [AIMessage("Noted. " + state.get("memory_context", "")[-200:])]}


def _app(agent: Agent, state: Any = MemoryState) -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(state)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([get_weather]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"user_id": "dana", "thread_id": thread}}


def test_memory_around_agent_with_tools(store: BaseStore) -> None:
    agent = Agent()
    builder = add_memory(
        _app(agent),
        "agent",
        extractor=OfflineExtractor(use_spacy=False),
        extract_options=ExtractOptions(every_n_messages=2),
    )
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("I live in Lyon.")]}, _cfg("t1"))
    graph.invoke({"messages": [HumanMessage("What's the weather like?")]}, _cfg("t1"))
    # a tool turn: agent ran twice, inject once per user turn
    assert agent.calls == 3
    graph.invoke({"messages": [HumanMessage("I work at Acme Robotics.")]}, _cfg("t1"))
    graph.invoke({"messages": [HumanMessage("ok")]}, _cfg("t1"))
    graph.invoke({"messages": [HumanMessage("hello again")]}, _cfg("t2"))
    assert "User lives in Lyon" in agent.contexts[-1]
    assert "User works at Acme Robotics" in agent.contexts[-1]
    assert set(graph.get_graph().nodes) >= {"inject", "extract", "reconcile", "compact"}


def test_app_state_without_memory_context_is_refused() -> None:
    # Memories would be learnt and never reach the model: refused, with what to do instead.
    with pytest.raises(ValueError, match=r"no 'memory_context' key.*Subclass MemoryState"):
        add_memory(
            _app(Agent(), MessagesState), "agent", extractor=OfflineExtractor(use_spacy=False)
        )


def test_a_compiled_graph_is_refused_with_what_to_pass() -> None:
    compiled = _app(Agent()).compile()
    with pytest.raises(TypeError, match=r"StateGraph builder, not a compiled graph.*compile\(\)"):
        add_memory(compiled, "agent", extractor=OfflineExtractor(use_spacy=False))  # type: ignore[arg-type]
    react = create_agent(GenericFakeChatModel(messages=iter([])), tools=[])
    with pytest.raises(TypeError, match="create_react_agent"):
        add_memory(react, "agent", extractor=OfflineExtractor(use_spacy=False))  # type: ignore[arg-type]


def test_options_as_a_dict_still_work_with_a_deprecation_warning(store: BaseStore) -> None:
    agent = Agent()
    with pytest.warns(
        DeprecationWarning, match=r"extract_options= as a dict.*ExtractOptions"
    ) as warned:
        builder = add_memory(
            _app(agent),
            "agent",
            extractor=OfflineExtractor(use_spacy=False),
            compact=False,
            extract_options={"every_n_messages": 1},
        )
    # the warning names the caller's line, not a line of the package
    assert [w.filename for w in warned if w.category is DeprecationWarning] == [__file__]
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("I live in Lyon.")]}, _cfg("t1"))
    graph.invoke({"messages": [HumanMessage("hi")]}, _cfg("t2"))
    assert "User lives in Lyon" in agent.contexts[-1]  # every_n_messages=1 was applied
    with pytest.raises(TypeError, match=r"extract_options: .*every_n_mesages"):
        add_memory(
            _app(Agent()),
            "agent",
            extractor=OfflineExtractor(use_spacy=False),
            extract_options={"every_n_mesages": 1},
        )
    with pytest.raises(TypeError, match="inject_options must be InjectOptions"):
        add_memory(
            _app(Agent()),
            "agent",
            extractor=OfflineExtractor(use_spacy=False),
            inject_options=ExtractOptions(),  # type: ignore[arg-type]
        )


def test_compaction_keeps_tool_pairs(store: BaseStore) -> None:
    agent = Agent()
    builder = add_memory(
        _app(agent),
        "agent",
        extractor=OfflineExtractor(use_spacy=False),
        compact_options=CompactOptions(max_tokens=200, keep_last_exchanges=1),
    )
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    for i in range(6):
        text = f"What's the weather for trip {i}?" if i % 2 else f"I like hiking trail number {i}."
        graph.invoke({"messages": [HumanMessage(text)]}, _cfg("t1"))
    state = graph.get_state(_cfg("t1")).values
    messages = state["messages"]
    assert len(messages) < 6 * 2  # older turns were compacted away
    assert state["running_summary"]
    calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    assert answered <= calls and calls <= answered  # no orphan on either side


def test_wiring_errors() -> None:
    builder = StateGraph(MemoryState)
    with pytest.raises(ValueError, match="not in the graph"):
        add_memory(builder, "agent", extractor=OfflineExtractor(use_spacy=False))
    builder.add_node("agent", Agent())
    builder.add_edge("agent", END)
    with pytest.raises(ValueError, match="START"):
        add_memory(builder, "agent", extractor=OfflineExtractor(use_spacy=False))
    builder.add_edge(START, "agent")
    builder.add_node("inject", Agent())
    with pytest.raises(ValueError, match="already used"):
        add_memory(builder, "agent", extractor=OfflineExtractor(use_spacy=False))


def test_agent_without_exit_edge(store: BaseStore) -> None:
    """A node with no outgoing edge ends the run; add_memory routes it through extract."""
    agent = Agent()
    builder = StateGraph(MemoryState).add_node("agent", agent).add_edge(START, "agent")
    add_memory(builder, "agent", extractor=OfflineExtractor(use_spacy=False), compact=False)
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    cfg = {"configurable": {"user_id": "dana", "thread_id": "t1", "extract_now": True}}
    graph.invoke({"messages": [HumanMessage("My sister is called Priya.")]}, cfg)
    graph.invoke({"messages": [HumanMessage("hi")]}, _cfg("t2"))
    assert "User's sister is Priya" in agent.contexts[-1]


async def test_add_memory_async(astore: BaseStore) -> None:
    agent = Agent()
    builder = add_memory(
        _app(agent),
        "agent",
        extractor=OfflineExtractor(use_spacy=False),
        extract_options=ExtractOptions(every_n_messages=2),
    )
    graph = builder.compile(store=astore, checkpointer=InMemorySaver())
    await graph.ainvoke({"messages": [HumanMessage("I live in Lyon.")]}, _cfg("t1"))
    await graph.ainvoke({"messages": [HumanMessage("What's the weather?")]}, _cfg("t1"))
    await graph.ainvoke({"messages": [HumanMessage("hi")]}, _cfg("t2"))
    assert "User lives in Lyon" in agent.contexts[-1]
