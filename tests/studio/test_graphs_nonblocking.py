"""The Studio graphs (graphs/*.py) on the server's store and checkpointer, run in-process the
way ``langgraph dev`` runs them, under BlockBuster: any blocking call on the event loop (a file
read, a sleep, a sync socket, loading spaCy) raises and fails the test.

The store and saver come from ``langmem_vault.studio`` on the session's Postgres (a fresh
schema); the graphs are imported after the store is open, as the server does; the
graphs get the store and checkpointer the way the server gives them (``graph.copy``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from blockbuster import BlockBuster, blockbuster_ctx

from langmem_vault import _nlp as spacy_loader
from langmem_vault import studio

GRAPHS = Path(__file__).resolve().parents[2] / "graphs"
USER = {"user_id": "dana.k@example.com"}


@pytest.fixture
def studio_env(pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGMEM_VAULT_DSN", pg_uri)
    monkeypatch.setenv(studio.SCHEMA_ENV, schema)
    for name in ("OPENAI_API_KEY", studio.MODEL_ENV, studio.OFFLINE_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def blockbuster() -> Iterator[BlockBuster]:
    with blockbuster_ctx() as bb:
        yield bb


@pytest.fixture
async def server(studio_env: None) -> AsyncIterator[tuple[Any, Any]]:
    """The server's store and checkpointer, opened like langgraph dev opens them."""
    async with studio.vault_saver() as saver, studio.vault_store() as store:
        yield store, saver


def _load(name: str) -> ModuleType:
    """Import graphs/<name>.py by path, as the server does (in a worker thread)."""
    spec = importlib.util.spec_from_file_location(f"studio_graph_{name}", GRAPHS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def _served(name: str, store: Any, saver: Any) -> Any:
    module = await asyncio.to_thread(_load, name)
    graph = module.graph
    assert graph.store is None and graph.checkpointer is None  # the server supplies them
    return graph.copy(update={"store": store, "checkpointer": saver})


def _turn(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


async def test_memory_graph_never_blocks_the_loop(
    server: tuple[Any, Any], blockbuster: BlockBuster, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, saver = server
    graph = await _served("memory_graph", store, saver)
    # The extractor loads spaCy on first use: forget the copy warm_up loaded, so this first
    # extraction loads it (the call BlockBuster caught on the event loop before).
    monkeypatch.setattr(spacy_loader, "_nlp", None)

    await graph.ainvoke(_turn("I live in Lyon and I work at Acme Robotics."), _cfg(), context=USER)
    assert spacy_loader._nlp is not None  # loaded during the run, off the loop

    events: list[Any] = []
    cfg = _cfg()
    async for mode, chunk in graph.astream(
        _turn("Where do I work?"), cfg, context=USER, stream_mode=["custom", "values"]
    ):
        events.append((mode, chunk))
    injected = [c for m, c in events if m == "custom" and c.get("type") == "memory_injected"]
    assert injected and "User works at Acme Robotics" in injected[0]["preview"]
    state = (await graph.aget_state(cfg)).values
    assert "User works at Acme Robotics" in state["memory_context"]
    assert state["cited"] and set(state["cited"]) <= set(state["memory_refs"])
    assert "Acme Robotics" in state["messages"][-1].content


async def test_agent_calls_its_tools_without_blocking(
    server: tuple[Any, Any], blockbuster: BlockBuster
) -> None:
    store, saver = server
    graph = await _served("agent", store, saver)
    await graph.ainvoke(_turn("I prefer green tea over coffee."), _cfg(), context=USER)
    out = await graph.ainvoke(_turn("Search my memories for tea"), _cfg(), context=USER)
    tool_said = [m for m in out["messages"] if m.type == "tool"]
    assert tool_said and "User prefers green tea over coffee" in tool_said[-1].content
    assert out["messages"][-1].content.startswith("search_memories says:")
    assert "User prefers green tea over coffee" in out["memory_context"]  # add_memory's inject


async def test_background_graph_worker_extracts_in_this_process(
    server: tuple[Any, Any], blockbuster: BlockBuster
) -> None:
    store, saver = server
    graph = await _served("background_extraction", store, saver)
    namespace = ("memories", "dana%2Ek@example%2Ecom", "semantic")
    await graph.ainvoke(_turn("I live in Oslo."), _cfg(), context=USER)
    # The turn only enqueued a job: the worker task (started by that run, on this loop)
    # extracts it after the debounce.
    for _ in range(100):
        found = await store.asearch(namespace, query="where does the user live")
        if any(item.value["text"] == "User lives in Oslo" for item in found):
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("the background worker never stored 'User lives in Oslo'")
