"""Memory degrades, the turn goes on (issue 22): a thread poisoned by the old code recovers,
and a database outage costs memory, not answers; what was said meanwhile is learned after."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import psycopg
import psycopg_pool
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langmem_vault.checkpointers import VaultSaver
from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel
from langmem_vault.store import AsyncVaultStore, VaultStore

FACT = "I work at Acme Robotics."


def _graph(store: BaseStore, checkpointer: Any, **kwargs: Any) -> Any:
    return build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=checkpointer,
        extractor=OfflineExtractor(use_spacy=kwargs.pop("use_spacy", False)),
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=2),
        **kwargs,
    )


def _cfg(thread: str, user: str = "dana") -> dict[str, Any]:
    return {"configurable": {"user_id": user, "thread_id": thread}}


@pytest.mark.parametrize("store", ["vault"], indirect=True)
@pytest.mark.parametrize(
    "poison", ["hello\x00world", "I live in Lyon. " * 330_000], ids=["nul", "5MB"]
)
def test_a_thread_poisoned_by_the_old_code_works(
    store: BaseStore, pg_uri: str, schema: str, poison: str
) -> None:
    with VaultSaver.from_conn_string(pg_uri, schema=schema) as saver:
        saver.setup()
        graph = _graph(store, saver, use_spacy=True)
        # What the old code left behind: the first turn checkpointed its input, then inject
        # raised (InvalidValueError: query cannot contain NUL characters), so the message is
        # in the checkpoint and inject is still pending. The old run's checkpoint is the one
        # before its failing step: the same as stopping before inject.
        poisoned = {"messages": [HumanMessage(poison)]}
        graph.invoke(poisoned, _cfg("t1"), interrupt_before=["inject"])
        state = graph.get_state(_cfg("t1"))
        assert state.next == ("inject",) and state.values["messages"][0].content == poison
        for text in (FACT, "ok"):
            out = graph.invoke({"messages": [HumanMessage(text)]}, _cfg("t1"))
            assert set(out["memory_status"].values()) == {"ok"}, out["memory_status"]
        answer = graph.invoke({"messages": [HumanMessage("Where do I work?")]}, _cfg("t2"))
    assert "Acme Robotics" in str(answer["messages"][-1].content)


@pytest.fixture
def outage_db(pg_uri: str) -> Iterator[tuple[str, Any]]:
    """A database of its own on the session's server, and a switch that cuts it off (no new
    connections, the open ones terminated) or brings it back: an outage as clients see it."""
    name = f"outage_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_uri, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
        admin.execute(f"ALTER DATABASE {name} OWNER TO CURRENT_USER")

        def down(off: bool) -> None:
            admin.execute(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {not off}")
            if off:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                    (name,),
                )

        uri = psycopg.conninfo.make_conninfo(pg_uri, dbname=name)
        yield uri, down
        down(False)
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _reconnected(probe: Callable[[], Any]) -> None:
    """Wait for the pool to be back (its reconnection backs off while the server is down)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            probe()
            return
        except psycopg_pool.PoolTimeout:
            assert time.monotonic() < deadline, "the pool never reconnected"


async def _areconnected(probe: Callable[[], Awaitable[Any]]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            await probe()
            return
        except psycopg_pool.PoolTimeout:
            assert time.monotonic() < deadline, "the pool never reconnected"


def _events(chunks: list[Any]) -> list[dict[str, Any]]:
    return [c for mode, c in chunks if mode == "custom" and c.get("type") == "memory_error"]


def _check_outage_turn(chunks: list[Any]) -> None:
    final = [c for mode, c in chunks if mode == "values"][-1]
    assert final["messages"][-1].content  # the turn answered
    status = final["memory_status"]
    assert status["inject"] != "ok" and status["extract"] != "ok", status
    assert {e["stage"] for e in _events(chunks)} >= {"inject", "extract"}


def test_an_outage_costs_memory_not_answers(
    outage_db: tuple[str, Any], index: Any, caplog: pytest.LogCaptureFixture
) -> None:
    uri, down = outage_db
    # a client that gives up on a dead server quickly (and so reconnects soon after)
    pool = {"timeout": 1.0}
    with VaultStore.from_conn_string(uri, index=index, pool_config=pool) as store:
        store.setup()
        graph = _graph(store, InMemorySaver(), inject_timeout=5.0)
        graph.invoke({"messages": [HumanMessage("I live in Lyon.")]}, _cfg("t1"))
        down(True)
        caplog.clear()
        turn = {"messages": [HumanMessage(FACT)]}
        chunks = list(graph.stream(turn, _cfg("t1"), stream_mode=["custom", "values"]))
        _check_outage_turn(chunks)
        warnings = [r for r in caplog.records if r.name == "langmem_vault.degrade"]
        assert len(warnings) == len(_events(chunks)) and warnings[0].levelname == "WARNING"
        down(False)
        _reconnected(lambda: store.search(("probe",)))
        out = graph.invoke({"messages": [HumanMessage("ok")]}, _cfg("t1"))
        assert set(out["memory_status"].values()) == {"ok"}, out["memory_status"]
        answer = graph.invoke({"messages": [HumanMessage("Where do I work?")]}, _cfg("t2"))
    reply = str(answer["messages"][-1].content)
    assert "Acme Robotics" in reply  # said during the outage: learned


async def test_an_outage_costs_memory_not_answers_async(
    outage_db: tuple[str, Any], index: Any
) -> None:
    uri, down = outage_db
    pool = {"timeout": 1.0}
    async with AsyncVaultStore.from_conn_string(uri, index=index, pool_config=pool) as store:
        await store.setup()
        graph = _graph(store, InMemorySaver(), inject_timeout=5.0)
        await graph.ainvoke({"messages": [HumanMessage("I live in Lyon.")]}, _cfg("t1"))
        down(True)
        turn = {"messages": [HumanMessage(FACT)]}
        modes = ["custom", "values"]
        chunks = [c async for c in graph.astream(turn, _cfg("t1"), stream_mode=modes)]
        _check_outage_turn(chunks)
        down(False)
        await _areconnected(lambda: store.asearch(("probe",)))
        out = await graph.ainvoke({"messages": [HumanMessage("ok")]}, _cfg("t1"))
        assert set(out["memory_status"].values()) == {"ok"}, out["memory_status"]
        answer = await graph.ainvoke({"messages": [HumanMessage("Where do I work?")]}, _cfg("t2"))
    reply = str(answer["messages"][-1].content)
    assert "Acme Robotics" in reply
