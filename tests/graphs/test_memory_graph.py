"""End to end: the memory graph over several threads, sync and async, on three stores."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel

TEACH = [
    "Hi! My name is Dana and I live in Lyon.",
    "I work at Acme Robotics and I prefer window seats on flights.",
    "From now on, always end your answers with 'Cheers!'",
    "I will probably learn Rust next year.",
]


def _graph(store: BaseStore) -> Any:
    return build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=OfflineExtractor(use_spacy=False),
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=2),
    )


def _cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"user_id": "dana", "thread_id": thread_id}}


def _say(graph: Any, thread_id: str, text: str) -> str:
    out = graph.invoke({"messages": [HumanMessage(text)]}, _cfg(thread_id))
    reply = out["messages"][-1]
    assert isinstance(reply, AIMessage)
    return str(reply.content)


async def _asay(graph: Any, thread_id: str, text: str) -> str:
    out = await graph.ainvoke({"messages": [HumanMessage(text)]}, _cfg(thread_id))
    return str(out["messages"][-1].content)


def _check_vault(vault: MemoryVault) -> None:
    facts = {m.value.text: m.value for m in vault.list(status=None)}
    assert facts["User lives in Lyon"].status == "superseded"
    assert facts["User lives in Lyon"].valid_to is not None
    assert facts["User lives in Berlin"].status == "active"
    assert facts["User plans to probably learn Rust"].status == "pending_confirmation"
    assert len([t for t in facts if "Acme" in t]) == 1  # said twice, stored once


def test_threads_share_memory(store: BaseStore) -> None:
    graph = _graph(store)
    for line in TEACH:
        _say(graph, "t1", line)
    answer = _say(graph, "t2", "Where do I live, and where do I work?")
    assert "Lyon" in answer and "Acme Robotics" in answer  # facts carried over
    assert answer.endswith("Cheers!")  # the standing instruction is obeyed
    context = graph.get_state(_cfg("t2")).values["memory_context"]
    assert "learn Rust (commitment)" not in context  # pending facts are not injected as facts
    _say(graph, "t2", "I work at Acme Robotics. I moved to Berlin.")
    _say(graph, "t2", "ok")
    answer = _say(graph, "t3", "Where do I live now?")
    assert "Berlin" in answer and "Lyon" not in answer  # the contradiction superseded
    _check_vault(MemoryVault(store, user_id="dana"))
    state = graph.get_state(_cfg("t3")).values
    # the injected block is a state key; the persisted messages are only the conversation
    assert state["memory_context"] and all(
        "What you remember" not in str(m.content) for m in state["messages"]
    )
    assert state["cited"]


def test_users_do_not_see_each_other(store: BaseStore) -> None:
    graph = _graph(store)
    _say(graph, "t1", "I live in Lyon.")
    _say(graph, "t1", "I work at Acme Robotics.")
    other = {"configurable": {"user_id": "eve", "thread_id": "e1"}}
    out = graph.invoke({"messages": [HumanMessage("Where do I live?")]}, other)
    assert "Lyon" not in str(out["messages"][-1].content)
    assert out["memory_context"] == ""


async def test_threads_share_memory_async(astore: BaseStore) -> None:
    graph = _graph(astore)
    for line in TEACH:
        await _asay(graph, "t1", line)
    answer = await _asay(graph, "t2", "Where do I live, and where do I work?")
    assert "Lyon" in answer and "Acme Robotics" in answer
    assert answer.endswith("Cheers!")
    await _asay(graph, "t2", "I work at Acme Robotics. I moved to Berlin.")
    await _asay(graph, "t2", "ok")
    answer = await _asay(graph, "t3", "Where do I live now?")
    assert "Berlin" in answer and "Lyon" not in answer
    vault = MemoryVault(astore, user_id="dana")
    facts = {m.value.text: m.value.status for m in await vault.alist(status=None)}
    assert facts["User lives in Lyon"] == "superseded"
    assert facts["User plans to probably learn Rust"] == "pending_confirmation"


def test_langgraph_postgres_store_smoke(pg_uri: str, schema: str, index: dict[str, Any]) -> None:
    """The nodes use only the BaseStore interface: langgraph's PostgresStore works too."""
    import psycopg
    from langgraph.store.postgres import PostgresStore

    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    uri = f"{pg_uri}{'&' if '?' in pg_uri else '?'}options=-csearch_path%3D{schema}%2Cpublic"
    with PostgresStore.from_conn_string(uri, index=index) as pg_store:  # type: ignore[arg-type]
        pg_store.setup()
        graph = _graph(pg_store)
        for line in TEACH:
            _say(graph, "t1", line)
        answer = _say(graph, "t2", "Where do I work?")
        assert "Acme Robotics" in answer and answer.endswith("Cheers!")


@pytest.mark.parametrize("mode", ["background", None])
def test_background_extraction_through_the_queue(
    pg_uri: str, schema: str, index: Any, mode: str | None
) -> None:
    """extract_mode="background", and the default when a queue is given: the turn enqueues a
    durable job; a worker reconciles it."""
    from langmem_vault.jobs._queue import JobQueue
    from langmem_vault.jobs._worker import ExtractionWorker
    from langmem_vault.store import VaultStore

    with (
        VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as vault_store,
        JobQueue.from_conn_string(pg_uri, schema=schema) as queue,
    ):
        vault_store.setup()
        queue.setup()
        extractor = OfflineExtractor(use_spacy=False)
        graph = build_memory_graph(
            RecallChatModel(),
            store=vault_store,
            checkpointer=InMemorySaver(),
            extractor=extractor,
            summarizer=None,
            extract_mode=mode,  # type: ignore[arg-type]
            queue=queue,
            extract_options=ExtractOptions(
                every_n_messages=2, start_worker=False, debounce_seconds=0
            ),
        )
        _say(graph, "t1", "I work at Acme Robotics.")
        vault = MemoryVault(vault_store, user_id="dana")
        assert vault.list() == []  # the turn did not wait for extraction
        assert ExtractionWorker(queue, vault_store, extractor).run_pending() == 1
        assert [m.value.text for m in vault.list()] == ["User works at Acme Robotics"]
        assert "Acme Robotics" in _say(graph, "t2", "Where do I work?")
