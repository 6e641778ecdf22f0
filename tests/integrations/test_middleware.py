"""MemoryMiddleware in a real ``create_agent``: a scripted tool-calling model, real stores and
queues on the embedded Postgres (InMemoryStore for the inline mode)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langmem_vault.graphs._options import CompactOptions, ExtractOptions
from langmem_vault.integrations import MemoryMiddleware
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.usage import usage_namespace
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel
from tests.support.models import RecallToolModel

USER = {"user_id": "dana"}
#: the catch-up wait ends as soon as the jobs are done; generous for a loaded CI machine (the
#: first extraction of a process also loads the PII engines)
WAIT = 60.0


@tool
def clock() -> str:
    """The time now."""
    return "12:00"


def _cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _agent(model: Any, middleware: MemoryMiddleware, store: BaseStore, tools: bool = True) -> Any:
    return create_agent(
        model,
        [clock] if tools else [],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
        store=store,
    )


def _say(agent: Any, thread_id: str, text: str) -> str:
    out = agent.invoke({"messages": [("user", text)]}, _cfg(thread_id), context=USER)
    return str(out["messages"][-1].content)


async def _asay(agent: Any, thread_id: str, text: str) -> str:
    out = await agent.ainvoke({"messages": [("user", text)]}, _cfg(thread_id), context=USER)
    return str(out["messages"][-1].content)


def _count_injections(middleware: MemoryMiddleware) -> list[int]:
    """Count the inject node's runs (a spy on our own node; the store stays real)."""
    node = middleware.inject_node.node
    calls = [0]
    invoke, ainvoke = node.invoke, node.ainvoke

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return invoke(*args)

    async def acounted(*args: Any) -> Any:
        calls[0] += 1
        return await ainvoke(*args)

    node.invoke, node.ainvoke = counted, acounted  # type: ignore[method-assign]
    return calls


def test_two_threads_background_sync(pg_uri: str, schema: str, index: Any) -> None:
    """Thread 2 knows what thread 1 was told: extraction on the durable queue, injection once
    per user turn and in the system message of every model call of that turn."""
    from langmem_vault.jobs._queue import JobQueue
    from langmem_vault.store import VaultStore

    with (
        VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store,
        JobQueue.from_conn_string(pg_uri, schema=schema) as queue,
    ):
        store.setup()
        queue.setup()
        model = RecallToolModel()
        with MemoryMiddleware(
            OfflineExtractor(use_spacy=False), queue=queue, catch_up_seconds=WAIT
        ) as memory:
            injections = _count_injections(memory)
            agent = _agent(model, memory, store)
            assert "Thanks" in _say(agent, "t1", "I moved to Lyon.")
            answer = _say(agent, "t2", "Where do I live?")
        assert answer == "From what you told me: you live in Lyon [M1]."
        assert injections[0] == 2  # one per user turn, not one per model call
        # the second turn's two model calls (tool call, then answer) both saw the memory
        assert all("User lives in Lyon" in s for s in model.systems[2:4])
        assert "User lives in Lyon" not in model.systems[0]
        jobs = queue.list(thread_id="t1")
        assert [j.status for j in jobs] == ["done"]  # extracted once, no duplicate


async def test_two_threads_background_async(pg_uri: str, schema: str, index: Any) -> None:
    from langmem_vault.jobs._queue import AsyncJobQueue
    from langmem_vault.store import AsyncVaultStore

    async with (
        AsyncVaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store,
        AsyncJobQueue.from_conn_string(pg_uri, schema=schema) as queue,
    ):
        await store.setup()
        await queue.setup()
        model = RecallToolModel()
        async with MemoryMiddleware(
            OfflineExtractor(use_spacy=False), queue=queue, catch_up_seconds=WAIT
        ) as memory:
            injections = _count_injections(memory)
            agent = _agent(model, memory, store)
            await _asay(agent, "t1", "I moved to Lyon.")
            answer = await _asay(agent, "t2", "Where do I live?")
        assert answer == "From what you told me: you live in Lyon [M1]."
        assert injections[0] == 2
        assert [j.status for j in await queue.list(thread_id="t1")] == ["done"]
        # The cited memory gained a citation (recorded in the background, then flushed).
        assert memory.feedback.recorder is not None
        await memory.feedback.recorder.aflush()
        (fact,) = await MemoryVault(store, user_id="dana").alist()
        usage = await store.aget(usage_namespace(("memories", "dana", "semantic")), fact.key)
        assert usage is not None and usage.value["citations"] == 1


def _citations(store: BaseStore, key: str) -> Any:
    usage = store.get(usage_namespace(("memories", "dana", "semantic")), key)
    return usage.value.get("citations") if usage else None


def test_inline_without_queue(store: BaseStore) -> None:
    """No queue: extraction runs inline after the turn, on InMemoryStore and VaultStore; the
    memory the answer cites gains a citation, as after the respond node."""
    memory = MemoryMiddleware(
        OfflineExtractor(use_spacy=False), record_utility=AccessRecorder(inline=True)
    )
    agent = _agent(RecallToolModel(), memory, store)
    _say(agent, "t1", "I work at Acme Robotics.")  # 4 messages with the tool call
    (fact,) = MemoryVault(store, user_id="dana").list()
    assert fact.value.text == "User works at Acme Robotics"
    assert _citations(store, fact.key) is None
    out = agent.invoke({"messages": [("user", "Where do I work?")]}, _cfg("t2"), context=USER)
    assert "Acme Robotics [M1]" in out["messages"][-1].content
    assert out["cited"] == ["M1"] and _citations(store, fact.key) == 1


def test_one_turn_thread_is_not_lost(pg_uri: str, schema: str, index: Any) -> None:
    """A one-turn thread (2 messages, under every_n_messages=4) is extracted when the same
    user starts a new thread, and the new thread's first answer knows it."""
    from langmem_vault.jobs._queue import JobQueue
    from langmem_vault.store import VaultStore

    with (
        VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store,
        JobQueue.from_conn_string(pg_uri, schema=schema) as queue,
    ):
        store.setup()
        queue.setup()
        with MemoryMiddleware(
            OfflineExtractor(use_spacy=False), queue=queue, catch_up_seconds=WAIT
        ) as memory:
            agent = _agent(RecallChatModel(), memory, store, tools=False)
            _say(agent, "mon", "I moved to Lyon.")
            (job,) = queue.list(thread_id="mon")
            assert job.status == "pending"  # waiting for the thread to go idle
            assert "you live in Lyon [M1]" in _say(agent, "tue", "Where do I live?")
            _say(agent, "tue", "Thanks!")
            _say(agent, "wed", "Hello again")  # another new thread: nothing left to promote
        assert [j.status for j in queue.list(thread_id="mon")] == ["done"]
        texts = [m.value.text for m in MemoryVault(store, user_id="dana").list()]
        assert texts.count("User lives in Lyon") == 1


@pytest.mark.parametrize("run", ["sync", "async"])
async def test_one_turn_thread_is_not_lost_inline(store: BaseStore, run: str) -> None:
    """No queue: the one-turn thread's tail waits in the store, and the next thread's first
    turn extracts it before inject, so its first answer knows."""
    memory = MemoryMiddleware(OfflineExtractor(use_spacy=False))
    agent = _agent(RecallChatModel(), memory, store, tools=False)
    say = _say if run == "sync" else None

    async def ask(thread_id: str, text: str) -> str:
        return say(agent, thread_id, text) if say else await _asay(agent, thread_id, text)

    await ask("mon", "I moved to Lyon.")
    assert MemoryVault(store, user_id="dana").list() == []  # 2 messages: a tail
    assert "you live in Lyon [M1]" in await ask("tue", "Where do I live?")
    texts = [m.value.text for m in MemoryVault(store, user_id="dana").list()]
    assert texts == ["User lives in Lyon"]


async def test_idle_thread_is_extracted_async(pg_uri: str, schema: str, index: Any) -> None:
    """With no new thread at all, the tail runs once the thread has been idle_seconds."""
    from langmem_vault.jobs._queue import AsyncJobQueue
    from langmem_vault.store import AsyncVaultStore

    async with (
        AsyncVaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store,
        AsyncJobQueue.from_conn_string(pg_uri, schema=schema) as queue,
    ):
        await store.setup()
        await queue.setup()
        options = ExtractOptions(idle_seconds=0.3)
        extractor = OfflineExtractor(use_spacy=False)
        async with MemoryMiddleware(extractor, queue=queue, extract=options) as memory:
            agent = _agent(RecallChatModel(), memory, store, tools=False)
            await _asay(agent, "t1", "I work at Acme Robotics.")
            vault = MemoryVault(store, user_id="dana")
            deadline = time.monotonic() + 15
            while not await vault.alist() and time.monotonic() < deadline:
                await asyncio.sleep(0.1)  # the worker polls; nothing here triggers it
        assert [m.value.text for m in await vault.alist()] == ["User works at Acme Robotics"]


@pytest.mark.parametrize("run", ["sync", "async"])
async def test_compaction_keeps_tool_pairs(store: BaseStore, run: str) -> None:
    """Compaction in before_model: old turns leave, a summary and an episode stay, and no
    ToolMessage is ever separated from the AI message that called it."""
    memory = MemoryMiddleware(
        OfflineExtractor(use_spacy=False),
        compact=CompactOptions(max_tokens=120, keep_last_exchanges=1, redaction=None),
    )
    agent = _agent(RecallToolModel(), memory, store)
    lines = ["I work at Acme Robotics.", "I moved to Lyon last year.", "I like jazz a lot."]
    for line in lines:
        if run == "sync":
            agent.invoke({"messages": [("user", line)]}, _cfg("t1"), context=USER)
        else:
            await agent.ainvoke({"messages": [("user", line)]}, _cfg("t1"), context=USER)
    state = agent.get_state(_cfg("t1")).values
    messages = state["messages"]
    assert len(messages) < 4 * len(lines)  # something was compacted away
    assert "Acme Robotics" in state["running_summary"]
    calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    assert all(m.tool_call_id in calls for m in messages if isinstance(m, ToolMessage))
    episodes = MemoryVault(store, user_id="dana").episodes()
    assert "compaction" in {e.value.source for e in episodes}  # the removed turns, archived
