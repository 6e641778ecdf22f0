"""Real graphs on VaultSaver and AsyncVaultSaver give the same results as InMemorySaver.

Each scenario runs twice, once on langgraph's InMemorySaver (the reference) and once on ours,
sync or async, and the observable results must match.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent
from langgraph.types import Command, Send, interrupt

from langmem_vault.checkpointers import AsyncVaultSaver
from tests.support.models import ToolCallingModel
from tests.support.savers import AnySaver


class Runner:
    """Drives a compiled graph with the sync or the async API, matching the saver."""

    def __init__(self, graph: Any, is_async: bool) -> None:
        self.graph, self.is_async = graph, is_async

    async def invoke(self, value: Any, cfg: Any) -> Any:
        if self.is_async:
            return await self.graph.ainvoke(value, cfg)
        return self.graph.invoke(value, cfg)

    async def stream(self, value: Any, cfg: Any, **kw: Any) -> list[Any]:
        if self.is_async:
            return [c async for c in self.graph.astream(value, cfg, **kw)]
        return list(self.graph.stream(value, cfg, **kw))

    async def state(self, cfg: Any, **kw: Any) -> Any:
        if self.is_async:
            return await self.graph.aget_state(cfg, **kw)
        return self.graph.get_state(cfg, **kw)

    async def history(self, cfg: Any) -> list[Any]:
        if self.is_async:
            return [s async for s in self.graph.aget_state_history(cfg)]
        return list(self.graph.get_state_history(cfg))

    async def update(self, cfg: Any, values: Any, as_node: str | None = None) -> Any:
        if self.is_async:
            return await self.graph.aupdate_state(cfg, values, as_node=as_node)
        return self.graph.update_state(cfg, values, as_node=as_node)


Scenario = Callable[[Runner], Any]


async def compare(saver: AnySaver, build: Callable[[Any], Any], scenario: Any) -> Any:
    """Run ``scenario`` on InMemorySaver and on ``saver``; the outcomes must be equal."""
    is_async = isinstance(saver, AsyncVaultSaver)
    expected = await scenario(Runner(build(InMemorySaver()), is_async))
    got = await scenario(Runner(build(saver), is_async))
    assert got == expected
    return got


def cfg(**extra: Any) -> Any:
    return {"configurable": {"thread_id": f"g-{uuid.uuid4().hex[:8]}", **extra}}


def texts(messages: Sequence[BaseMessage]) -> list[str]:
    return [f"{m.type}:{m.content}" for m in messages]


def chat_graph(saver: Any) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"echo {state['messages'][-1].content}")]}

    return StateGraph(MessagesState).add_node(reply).add_edge(START, "reply").compile(saver)


async def test_multi_turn_chat_stream_and_history(any_saver: AnySaver) -> None:
    async def scenario(run: Runner) -> Any:
        c = cfg(user_id="u-chat")
        for i in range(3):
            await run.invoke({"messages": [HumanMessage(f"hi {i}")]}, c)
        chunks = await run.stream({"messages": [HumanMessage("last")]}, c, stream_mode="values")
        state = await run.state(c)
        history = await run.history(c)
        return (
            texts(state.values["messages"]),
            len(chunks),
            [s.metadata["step"] for s in history],
            [len(s.values.get("messages", [])) for s in history],
        )

    got = await compare(any_saver, chat_graph, scenario)
    assert got[0][-2:] == ["human:last", "ai:echo last"]


async def test_user_id_from_the_run_context_indexes_the_thread(any_saver: AnySaver) -> None:
    graph = chat_graph(any_saver)
    c = cfg()  # no user id in configurable: it comes from the run context
    message = {"messages": [HumanMessage("hello there")]}
    if isinstance(any_saver, AsyncVaultSaver):
        await graph.ainvoke(message, c, context={"user_id": "ana.g@example.com"})
        threads = await any_saver.alist_threads("ana.g@example.com")
    else:
        graph.invoke(message, c, context={"user_id": "ana.g@example.com"})
        threads = any_saver.list_threads("ana.g@example.com")
    assert [t.thread_id for t in threads] == [c["configurable"]["thread_id"]]


async def test_interrupt_and_resume(any_saver: AnySaver) -> None:
    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt({"question": "approve?"})
        return {"messages": [AIMessage(f"approved={answer}")]}

    def build(saver: Any) -> Any:
        return StateGraph(MessagesState).add_node(ask).add_edge(START, "ask").compile(saver)

    async def scenario(run: Runner) -> Any:
        c = cfg()
        first = await run.invoke({"messages": [HumanMessage("go")]}, c)
        paused = await run.state(c)
        done = await run.invoke(Command(resume="yes"), c)
        return (
            [i.value for i in first["__interrupt__"]],
            paused.next,
            [i.value for t in paused.tasks for i in t.interrupts],
            texts(done["messages"]),
            (await run.state(c)).next,
        )

    got = await compare(any_saver, build, scenario)
    assert got[3][-1] == "ai:approved=yes"


class Inner(TypedDict):
    items: Annotated[list[str], operator.add]


async def test_subgraph_namespaces_and_resume(any_saver: AnySaver) -> None:
    def build(saver: Any) -> Any:
        def child_step(state: Inner) -> dict[str, Any]:
            note = interrupt("child needs input")
            return {"items": [f"child:{note}"]}

        child = StateGraph(Inner).add_node(child_step).add_edge(START, "child_step").compile()

        def before(state: Inner) -> dict[str, Any]:
            return {"items": ["parent"]}

        return (
            StateGraph(Inner)
            .add_node(before)
            .add_node("child", child)
            .add_edge(START, "before")
            .add_edge("before", "child")
            .compile(saver)
        )

    async def scenario(run: Runner) -> Any:
        c = cfg()
        await run.invoke({"items": ["start"]}, c)
        paused = await run.state(c, subgraphs=True)
        sub = paused.tasks[0].state
        done = await run.invoke(Command(resume="ok"), c)
        return (paused.next, sub.values, sub.next, done)

    got = await compare(any_saver, build, scenario)
    assert got[3]["items"][-1] == "child:ok"
    assert got[0] == ("child",)


class Fan(TypedDict):
    n: int
    results: Annotated[list[int], operator.add]


async def test_send_fan_out(any_saver: AnySaver) -> None:
    def build(saver: Any) -> Any:
        def spread(state: Fan) -> list[Send]:
            return [Send("work", {"n": i, "results": []}) for i in range(state["n"])]

        def work(state: Fan) -> dict[str, Any]:
            return {"results": [state["n"] * state["n"]]}

        return (
            StateGraph(Fan)
            .add_node(work)
            .add_conditional_edges(START, spread, ["work"])
            .compile(saver)
        )

    async def scenario(run: Runner) -> Any:
        c = cfg()
        out = await run.invoke({"n": 5, "results": []}, c)
        return sorted(out["results"]), len(await run.history(c))

    got = await compare(any_saver, build, scenario)
    assert got[0] == [0, 1, 4, 9, 16]


async def test_time_travel_with_update_state_and_fork(any_saver: AnySaver) -> None:
    async def scenario(run: Runner) -> Any:
        c = cfg()
        await run.invoke({"messages": [HumanMessage("one")]}, c)
        await run.invoke({"messages": [HumanMessage("two")]}, c)
        history = await run.history(c)
        after_first = next(s for s in history if len(s.values.get("messages", [])) == 2)
        forked = await run.update(
            after_first.config, {"messages": [HumanMessage("edited")]}, "reply"
        )
        replay = await run.invoke({"messages": [HumanMessage("three")]}, forked)
        latest = await run.state(c)
        return (
            texts(replay["messages"]),
            texts(latest.values["messages"]),
            len(await run.history(c)),
        )

    got = await compare(any_saver, chat_graph, scenario)
    assert got[0] == ["human:one", "ai:echo one", "human:edited", "human:three", "ai:echo three"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
async def test_react_agent_with_tool_calls(any_saver: AnySaver) -> None:
    def build(saver: Any) -> Any:
        return create_react_agent(ToolCallingModel(), [add], checkpointer=saver)

    async def scenario(run: Runner) -> Any:
        c = cfg(user_id="u-agent")
        await run.invoke({"messages": [HumanMessage("add please")]}, c)
        out = await run.invoke({"messages": [HumanMessage("again")]}, c)
        return texts(out["messages"]), [m.type for m in out["messages"]]

    got = await compare(any_saver, build, scenario)
    assert got[1] == ["human", "ai", "tool", "ai", "human", "ai", "tool", "ai"]
    assert got[0][3] == "ai:the sum is 3"
    threads = (
        await any_saver.alist_threads("u-agent")
        if isinstance(any_saver, AsyncVaultSaver)
        else any_saver.list_threads("u-agent")
    )
    assert threads[0].title == "add please" and threads[0].message_count == 8


class Log(TypedDict):
    log: Annotated[list[str], DeltaChannel(operator.add, snapshot_frequency=3)]


async def test_delta_channel_state_is_rebuilt_from_history(any_saver: AnySaver) -> None:
    def build(saver: Any) -> Any:
        def step(state: Log) -> dict[str, Any]:
            return {"log": [f"entry {len(state['log'])}"]}

        return StateGraph(Log).add_node(step).add_edge(START, "step").compile(saver)

    async def scenario(run: Runner) -> Any:
        c = cfg()
        for i in range(7):
            await run.invoke({"log": [f"in {i}"]}, c)
        history = await run.history(c)
        return (await run.state(c)).values, [s.values for s in history]

    got = await compare(any_saver, build, scenario)
    assert len(got[0]["log"]) == 14


async def test_delta_history_matches_the_base_class_walk(any_saver: AnySaver) -> None:
    """Our three-query history equals BaseCheckpointSaver's get_tuple-by-get_tuple walk."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    def step(state: Log) -> dict[str, Any]:
        return {"log": [f"entry {len(state['log'])}"]}

    graph = StateGraph(Log).add_node(step).add_edge(START, "step").compile(any_saver)
    run = Runner(graph, isinstance(any_saver, AsyncVaultSaver))
    c = cfg()
    for i in range(5):
        await run.invoke({"log": [f"in {i}"]}, c)
    for snapshot in await run.history(c):
        target = snapshot.config
        if isinstance(any_saver, AsyncVaultSaver):
            ours = await any_saver.aget_delta_channel_history(config=target, channels=["log"])
            base = await BaseCheckpointSaver.aget_delta_channel_history(
                any_saver, config=target, channels=["log"]
            )
        else:
            ours = any_saver.get_delta_channel_history(config=target, channels=["log"])
            base = BaseCheckpointSaver.get_delta_channel_history(
                any_saver, config=target, channels=["log"]
            )
        assert ours == base


async def test_memory_graph_from_the_nodes_issue(any_saver: AnySaver) -> None:
    """The package's own memory graph (inject -> respond -> extract -> reconcile -> compact)."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langgraph.store.memory import InMemoryStore

    from langmem_vault.graphs import build_memory_graph
    from langmem_vault.offline._extractor import OfflineExtractor

    def build(saver: Any) -> Any:
        return build_memory_graph(
            FakeListChatModel(responses=["Noted.", "You like tea.", "Sure."]),
            store=InMemoryStore(),
            checkpointer=saver,
            extractor=OfflineExtractor(),
            summarizer=None,
        )

    async def scenario(run: Runner) -> Any:
        c = cfg(user_id="u-memory")
        for text in ("I like tea.", "What do I like?", "Thanks"):
            await run.invoke({"messages": [HumanMessage(text)]}, c)
        state = await run.state(c)
        return texts(state.values["messages"]), state.next, len(await run.history(c))

    got = await compare(any_saver, build, scenario)
    assert got[0][0] == "human:I like tea."


async def test_prune_and_retention_keep_delta_channel_state(any_saver: AnySaver) -> None:
    """langgraph's saver refuses keep_latest on DeltaChannel threads; ours keeps the
    ancestors the latest value is rebuilt from, and the state is unchanged."""

    def build(saver: Any) -> Any:
        def step(state: Log) -> dict[str, Any]:
            return {"log": [f"entry {len(state['log'])}"]}

        return StateGraph(Log).add_node(step).add_edge(START, "step").compile(saver)

    async def scenario(run: Runner, maintain: Any) -> Any:
        c = cfg()
        for i in range(7):
            await run.invoke({"log": [f"in {i}"]}, c)
        before = (await run.state(c)).values
        count = len(await run.history(c))
        await maintain(c["configurable"]["thread_id"])
        after = (await run.state(c)).values
        await run.invoke({"log": ["more"]}, c)
        return before, after, (await run.state(c)).values, count, len(await run.history(c))

    is_async = isinstance(any_saver, AsyncVaultSaver)
    for name, kwargs in (("prune", {}), ("apply_retention", {"keep_last": 2})):

        async def maintain(thread_id: str, name: str = name, kwargs: Any = kwargs) -> None:
            if name == "prune":
                args: tuple[Any, ...] = ([thread_id],)
            else:
                args = ()
            if is_async:
                await getattr(any_saver, "a" + name)(*args, **kwargs)
            else:
                getattr(any_saver, name)(*args, **kwargs)

        before, after, later, count, pruned_count = await scenario(
            Runner(build(any_saver), is_async), maintain
        )
        assert after == before
        assert later["log"][: len(before["log"])] == before["log"]
        assert len(later["log"]) == len(before["log"]) + 2
        assert pruned_count < count
