"""The extract node's sync and async paths, background and inline, take the same steps in the
same order (one body of steps, two drivers): recorded turn by turn, on a real queue
(background) and on a store that records each batch (inline)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.memory import InMemoryStore

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.graphs._state import MemoryState
from langmem_vault.jobs import AsyncJobQueue, JobQueue
from langmem_vault.jobs._background import BackgroundExtraction
from langmem_vault.memory._recall.accounting import METRICS
from langmem_vault.nodes._extract import create_extract_node
from langmem_vault.offline import OfflineExtractor
from tests.support.messages import ai, human, proposal
from tests.support.models import ScriptedModel

TURNS = [[human("I live in Oslo."), ai("Noted.")], [human("I drink tea."), ai("Noted.")]]


def record(monkeypatch: pytest.MonkeyPatch, calls: list[str], obj: Any, name: str) -> None:
    original = getattr(obj, name)
    if inspect.iscoroutinefunction(original):

        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return await original(*args, **kwargs)

    else:

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return original(*args, **kwargs)

    monkeypatch.setattr(obj, name, wrapped)


def recorded_node(
    monkeypatch: pytest.MonkeyPatch, queue: JobQueue | AsyncJobQueue, calls: list[str]
) -> Any:
    for name in ("promote_tails", "enqueue_span"):
        record(monkeypatch, calls, queue, name)
    background = BackgroundExtraction(queue, start_worker=False)
    record(monkeypatch, calls, background, "wake")
    node = create_extract_node(
        ScriptedModel(), queue=background, every_n_messages=2, debounce_seconds=0
    )
    builder = StateGraph(MemoryState)
    builder.add_node("extract", node)
    builder.add_edge(START, "extract")
    return builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore())


def config(user: str) -> Any:
    return {"configurable": {"user_id": user, "thread_id": f"{user}-t"}}


async def test_sync_and_async_background_paths_take_the_same_steps(
    pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = open_pool(pg_uri, max_size=2)
    apool = await aopen_pool(pg_uri, max_size=2)
    try:
        queue = JobQueue(pool, schema=schema)
        queue.setup()
        sync_calls: list[str] = []
        sync_graph = recorded_node(monkeypatch, queue, sync_calls)
        async_calls: list[str] = []
        async_graph = recorded_node(monkeypatch, AsyncJobQueue(apool, schema=schema), async_calls)
        for messages in TURNS:
            await asyncio.to_thread(sync_graph.invoke, {"messages": messages}, config("s"))
            await async_graph.ainvoke({"messages": messages}, config("a"))
        # a first turn catches up before it enqueues; a later turn only enqueues
        assert sync_calls[:3] == ["promote_tails", "enqueue_span", "wake"]
        assert sync_calls[3:] == ["enqueue_span", "wake"]
        assert async_calls == sync_calls
    finally:
        pool.close()
        await apool.close()


class RecordingStore(InMemoryStore):
    """An in-memory store that records each batch it runs: the ops' kinds and rooms."""

    def __init__(self, calls: list[Any]) -> None:
        super().__init__()
        self.calls = calls

    def _record(self, ops: list[Any]) -> None:
        def room(op: Any) -> str:
            ns = getattr(op, "namespace", None) or getattr(op, "namespace_prefix", ())
            return str(ns[0]) if ns else ""

        self.calls.append(tuple((type(op).__name__, room(op)) for op in ops))

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        self._record(ops)
        return super().batch(ops)

    async def abatch(self, ops: Any) -> Any:
        ops = list(ops)
        self._record(ops)
        return await super().abatch(ops)


def inline_graph(calls: list[Any]) -> Any:
    def extract(prompt: Any) -> Any:
        calls.append("model")
        said = "Oslo" if "Oslo" in str(prompt[-1].content) else "tea"
        fact = {"text": f"User likes {said}", "confidence": 0.9, "evidence": said}
        return proposal(facts=[fact])

    model = ScriptedModel(default=extract)
    node = create_extract_node(model, mode="inline", every_n_messages=2, debounce_seconds=0)
    builder = StateGraph(MemoryState)
    builder.add_node("extract", node)
    builder.add_edge(START, "extract")
    return builder.compile(checkpointer=InMemorySaver(), store=RecordingStore(calls))


async def test_sync_and_async_inline_paths_take_the_same_steps() -> None:
    sync_calls: list[Any] = []
    async_calls: list[Any] = []
    sync_graph, async_graph = inline_graph(sync_calls), inline_graph(async_calls)
    for messages in TURNS:
        await asyncio.to_thread(sync_graph.invoke, {"messages": messages}, config("s"))
        await METRICS.aflush()  # the sync path's accounting is written on the writer's timer
        await async_graph.ainvoke({"messages": messages}, config("a"))
        await METRICS.aflush()
    # each turn: the watermark, the similar facts, the model, consent, the reconcile reads and
    # writes, the watermark and tail
    assert sync_calls.count("model") == 2
    assert any(
        kind == "PutOp" and room == "memories"
        for c in sync_calls
        if c != "model"
        for kind, room in c
    )
    assert async_calls == sync_calls


class WarmCounting(OfflineExtractor):
    """An extractor that counts its warm-ups (the loading of its model files)."""

    def __init__(self) -> None:
        super().__init__(use_spacy=False)
        self.warmed = 0

    def warm_up(self) -> None:
        self.warmed += 1


@pytest.mark.parametrize("start_worker", [True, False])
def test_a_background_node_loads_its_worker_models_when_built(start_worker: bool) -> None:
    """Loaded by the worker's first job instead, they would take seconds out of a new
    thread's catch-up wait (docs/agents.md's example missed the fact under load)."""
    extractor = WarmCounting()
    background = BackgroundExtraction("postgresql://unused", start_worker=start_worker)
    node = create_extract_node(extractor, queue=background, redaction=None)
    assert extractor.warmed == (1 if start_worker else 0)
    assert node.node.mode == "background"
