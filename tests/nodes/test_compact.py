"""compact: budget trigger, tool-call pairs intact, the summary extended, the span archived."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory._models import Episode
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.nodes._compact import (
    CompactSummary,
    create_compact_node,
    plan_compaction,
    safe_cut,
)
from tests.support.messages import ai, human, tool
from tests.support.models import ScriptedModel

CONFIG = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
NS = MemoryNamespaces().resolve(CONFIG)


def chars(messages: Sequence[BaseMessage]) -> int:
    """A deterministic token counter: one token per character of content."""
    return sum(len(str(m.content)) for m in messages)


def tool_exchange(i: int) -> list[BaseMessage]:
    call = {"name": "lookup", "args": {"q": str(i)}, "id": f"call-{i}", "type": "tool_call"}
    return [
        human(f"question {i} " + "x" * 40),
        ai("", tool_calls=[call]),
        tool(f"result {i} " + "y" * 40, f"call-{i}"),
        ai(f"answer {i} " + "z" * 40),
    ]


def pairs_intact(messages: Sequence[BaseMessage]) -> bool:
    calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return calls == results


def summariser(previous_seen: list[str]) -> Any:
    def answer(prompt: list[BaseMessage]) -> CompactSummary:
        body = str(prompt[-1].content)
        previous = body.split("PREVIOUS SUMMARY:\n", 1)[1].split("\n\nOLDER TURNS:", 1)[0]
        previous_seen.append(previous)
        turns = [
            line for line in body.split("OLDER TURNS:\n", 1)[1].splitlines() if "User:" in line
        ]
        segment = f"{len(turns)} user turns"
        running = segment if previous == "(none)" else f"{previous} + {segment}"
        return CompactSummary(running_summary=running, segment_summary=segment, importance=0.4)

    return answer


def test_under_budget_does_nothing() -> None:
    msgs = tool_exchange(1)
    assert (
        plan_compaction(msgs, max_tokens=10_000, trigger_ratio=0.8, keep_last_exchanges=1) is None
    )


def test_safe_cut_never_splits_a_tool_call() -> None:
    call = {"name": "lookup", "args": {}, "id": "c1", "type": "tool_call"}
    msgs = [human("a"), ai("", tool_calls=[call]), human("hurry up"), tool("r", "c1"), ai("done")]
    # A cut at the interrupting user message would strand the ToolMessage: it moves to the AI.
    assert safe_cut(msgs, 2) == 1
    # A cut landing on a ToolMessage moves before it too.
    assert safe_cut(msgs, 3) == 1
    assert safe_cut(msgs, 4) == 4


def test_plan_keeps_system_and_last_exchanges() -> None:
    msgs: list[BaseMessage] = [SystemMessage("sys", id="s")]
    for i in range(6):
        msgs += tool_exchange(i)
    plan = plan_compaction(
        msgs, max_tokens=600, trigger_ratio=0.8, keep_last_exchanges=2, count=chars
    )
    assert plan is not None
    assert plan.kept[0].id == "s"
    assert [m.content for m in plan.kept if m.type == "human"] == [
        msgs[17].content,
        msgs[21].content,
    ]
    assert pairs_intact(plan.kept) and pairs_intact(plan.removed)
    assert plan.tokens_after < plan.tokens_before


def test_keeps_fewer_exchanges_when_the_last_ones_are_too_big() -> None:
    msgs: list[BaseMessage] = []
    for i in range(4):
        msgs += tool_exchange(i)
    plan = plan_compaction(
        msgs, max_tokens=300, trigger_ratio=0.8, keep_last_exchanges=3, count=chars
    )
    assert plan is not None
    assert sum(m.type == "human" for m in plan.kept) == 1
    assert pairs_intact(plan.kept)


def _graph(node: Any, store: BaseStore) -> Any:
    builder = StateGraph(MemoryState)
    builder.add_node("compact", node)
    builder.add_edge(START, "compact")
    return builder.compile(checkpointer=InMemorySaver(), store=store)


@pytest.mark.parametrize("use_async", [False, True])
async def test_compaction_in_a_graph(use_async: bool) -> None:
    store = InMemoryStore()
    seen: list[str] = []
    model = ScriptedModel(default=summariser(seen))
    node = create_compact_node(
        model, max_tokens=700, trigger_ratio=0.8, keep_last_exchanges=2, token_counter=chars
    )
    app = _graph(node, store)

    async def step(messages: list[BaseMessage]) -> dict[str, Any]:
        if use_async:
            return await app.ainvoke({"messages": messages}, CONFIG)  # type: ignore[no-any-return]
        return app.invoke({"messages": messages}, CONFIG)  # type: ignore[no-any-return]

    all_msgs: list[BaseMessage] = []
    for i in range(4):
        all_msgs += tool_exchange(i)
    state = await step(all_msgs[:16])
    assert model.calls == 1
    assert [m.content for m in state["messages"]] == [m.content for m in all_msgs[8:16]]
    assert pairs_intact(state["messages"])
    assert state["running_summary"] == "2 user turns"
    more: list[BaseMessage] = []
    for i in range(4, 6):
        more += tool_exchange(i)
    state = await step(more)
    assert model.calls == 2
    assert seen == ["(none)", "2 user turns"]  # the previous summary went into the prompt
    assert state["running_summary"] == "2 user turns + 2 user turns"
    assert pairs_intact(state["messages"])
    assert len(state["messages"]) == 8
    episodes = store.search(NS.episodes, limit=10)
    assert len(episodes) == 2
    for item in episodes:
        episode = Episode.from_store(item.value)
        assert episode.source == "compaction" and episode.thread_id == "t1"
        assert len(item.value["messages"]) == 8
        assert episode.source_message_ids == [m["data"]["id"] for m in item.value["messages"]]


def test_empty_answer_keeps_the_previous_summary() -> None:
    store = InMemoryStore()
    model = ScriptedModel(default=CompactSummary(running_summary="  ", segment_summary=""))
    node = create_compact_node(
        model, max_tokens=300, keep_last_exchanges=1, token_counter=chars, store=store
    )
    msgs: list[BaseMessage] = []
    for i in range(3):
        msgs += tool_exchange(i)
    update = node.invoke({"messages": msgs, "running_summary": "User is Sam."}, CONFIG)
    assert update["running_summary"] == "User is Sam."
    assert len(update["messages"]) == 8


def test_rerun_rewrites_the_same_episode() -> None:
    store = InMemoryStore()
    node = create_compact_node(
        None, max_tokens=300, keep_last_exchanges=1, token_counter=chars, store=store
    )
    msgs: list[BaseMessage] = []
    for i in range(3):
        msgs += tool_exchange(i)
    first = node.invoke({"messages": msgs}, CONFIG)
    node.invoke({"messages": msgs}, CONFIG)  # the step retried after a crash
    assert len(store.search(NS.episodes)) == 1
    assert first["running_summary"].startswith("User said: question 0")


def test_model_failure_changes_nothing() -> None:
    store = InMemoryStore()
    model = ScriptedModel(script=[RuntimeError("overloaded")] * 2)
    msgs: list[BaseMessage] = []
    for i in range(3):
        msgs += tool_exchange(i)
    # by default the turn goes on: no message removed, the cause in memory_status
    node = create_compact_node(
        model, max_tokens=300, keep_last_exchanges=1, token_counter=chars, store=store
    )
    assert node.invoke({"messages": msgs}, CONFIG) == {
        "memory_status": {"compact": "RuntimeError: overloaded"}
    }
    raising = create_compact_node(
        model,
        max_tokens=300,
        keep_last_exchanges=1,
        token_counter=chars,
        store=store,
        on_error="raise",
    )
    with pytest.raises(RuntimeError, match="overloaded"):
        raising.invoke({"messages": msgs}, CONFIG)
    assert store.search(NS.episodes) == []


def test_bad_options_and_config_raise() -> None:
    with pytest.raises(ValueError, match="trigger_ratio"):
        create_compact_node(None, trigger_ratio=1.5)
    with pytest.raises(ValueError, match="keep_last_exchanges"):
        create_compact_node(None, keep_last_exchanges=0)
    with pytest.raises(ValueError, match="max_tokens"):
        create_compact_node(None, max_tokens=0)
    node = create_compact_node(
        None, max_tokens=100, keep_last_exchanges=1, token_counter=chars, store=InMemoryStore()
    )
    msgs = tool_exchange(1) + tool_exchange(2)
    with pytest.raises(KeyError, match="user_id"):
        node.invoke({"messages": msgs}, {"configurable": {"thread_id": "t"}})
    with pytest.raises(KeyError, match="messages"):
        node.invoke({}, CONFIG)


async def test_compaction_archives_on_vault_store(pg_uri: str, schema: str) -> None:
    from langmem_vault.embeddings import local_embeddings
    from langmem_vault.store import AsyncVaultStore

    index: Any = {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}
    async with AsyncVaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:
        await store.setup()
        node = create_compact_node(
            None, max_tokens=300, keep_last_exchanges=1, token_counter=chars, store=store
        )
        msgs: list[BaseMessage] = []
        for i in range(3):
            msgs += tool_exchange(i)
        update = await node.ainvoke({"messages": msgs}, CONFIG)
        assert len(update["messages"]) == 8
        [item] = await store.asearch(NS.episodes, query="question 0")
        assert item.value["source"] == "compaction" and len(item.value["messages"]) == 8
