"""Inline extraction never loses a short thread: a chat shorter than ``every_n_messages`` is
kept as its thread's tail, and the user's next thread extracts it before its first inject."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langmem_vault.extraction._messages import serialize_span
from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory._namespaces import WATERMARK_NAMESPACE, tails_namespace
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inline_extraction import MAX_TAILS, TAIL_TTL_MINUTES
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel
from langmem_vault.privacy import aexport_user, erase_user, export_user
from langmem_vault.privacy._subject_rights.erase import restore_user

TAILS = tails_namespace(("memories", "dana", "semantic"))


def _graph(store: BaseStore, extractor: Any = None, **options: Any) -> Any:
    return build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=extractor or OfflineExtractor(use_spacy=False),
        summarizer=None,
        extract_options=ExtractOptions(**options),  # every_n_messages: the default 4
    )


def _cfg(thread_id: str, user: str = "dana") -> dict[str, Any]:
    return {"configurable": {"user_id": user, "thread_id": thread_id}}


def _facts(store: BaseStore) -> list[str]:
    return sorted(m.value.text for m in MemoryVault(store, user_id="dana").list())


def test_a_one_exchange_chat_is_known_in_the_next_thread(store: BaseStore) -> None:
    graph = _graph(store)
    graph.invoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
    assert _facts(store) == []  # 2 messages: below the threshold, kept as the tail
    assert [i.key for i in store.search(TAILS)] == ["a"]
    out = graph.invoke({"messages": [HumanMessage("Where do I live?")]}, _cfg("b"))
    assert "Leeds" in out["memory_context"]  # caught up before this turn's inject
    assert "Leeds" in str(out["messages"][-1].content)
    assert _facts(store) == ["User lives in Leeds"]
    assert [i.key for i in store.search(TAILS)] == ["b"]  # a's tail went; b's is new
    # Thread a goes on: its caught-up messages are in its watermark, never extracted again.
    graph.invoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
    graph.invoke({"messages": [HumanMessage("ok")]}, _cfg("a"))
    mark = store.get(WATERMARK_NAMESPACE, "a")
    assert mark is not None and len(mark.value["message_ids"]) == 6
    assert _facts(store) == ["User lives in Leeds"]
    # Another user's new thread never reads dana's tails.
    graph.invoke({"messages": [HumanMessage("hello")]}, _cfg("e", user="eve"))
    assert [i.key for i in store.search(TAILS)] == ["b"]


async def test_async_a_one_exchange_chat_is_known_in_the_next_thread(astore: BaseStore) -> None:
    graph = _graph(astore)
    await graph.ainvoke({"messages": [HumanMessage("I work at Acme Robotics.")]}, _cfg("a"))
    assert [i.key for i in await astore.asearch(TAILS)] == ["a"]
    out = await graph.ainvoke({"messages": [HumanMessage("Where do I work?")]}, _cfg("b"))
    assert "Acme Robotics" in out["memory_context"]
    assert [i.key for i in await astore.asearch(TAILS)] == ["b"]
    mark = await astore.aget(WATERMARK_NAMESPACE, "a")
    assert mark is not None and len(mark.value["message_ids"]) == 2


def test_idle_seconds_none_leaves_short_tails(store: BaseStore) -> None:
    graph = _graph(store, idle_seconds=None)
    graph.invoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
    out = graph.invoke({"messages": [HumanMessage("Where do I live?")]}, _cfg("b"))
    assert "Leeds" not in out["memory_context"]
    assert store.search(TAILS) == []


class _Broken(OfflineExtractor):
    def extract(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("model down")


def test_a_failed_catch_up_keeps_the_tail_and_the_turn(
    store: BaseStore, caplog: pytest.LogCaptureFixture
) -> None:
    _graph(store).invoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
    with caplog.at_level(logging.WARNING, logger="langmem_vault.extract"):
        out = _graph(store, _Broken(use_spacy=False)).invoke(
            {"messages": [HumanMessage("Where do I live?")]}, _cfg("b")
        )
    assert out["messages"][-1].content  # the chat turn still answered
    assert "catch-up failed (model down)" in caplog.text
    assert "a" in [i.key for i in store.search(TAILS)]  # kept for the next new thread
    _graph(store).invoke({"messages": [HumanMessage("Where do I live?")]}, _cfg("c"))
    assert _facts(store) == ["User lives in Leeds"]


def test_erase_takes_the_tails(store: BaseStore) -> None:
    _graph(store).invoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
    (tail,) = store.search(TAILS)
    erase_user(store, "dana", soft_days=30)  # quarantined: out of every node's reach
    assert store.search(TAILS) == []
    restore_user(store, "dana")  # back as it was, a tail (not made a memory)
    (back,) = store.search(TAILS)
    assert back.value == tail.value and _facts(store) == []
    erase_user(store, "dana")
    assert store.search(TAILS) == []


def test_a_first_turn_catches_up_at_most_max_tails(store: BaseStore) -> None:
    for t in range(MAX_TAILS + 1):  # tails of threads that ended, as the node keeps them
        said = [HumanMessage(f"I like topic{t}.", id=f"h{t}")]
        store.put(TAILS, f"old{t}", {"messages": serialize_span(said), "message_ids": [f"h{t}"]})
    _graph(store).invoke({"messages": [HumanMessage("hello")]}, _cfg("new"))
    left = sorted(i.key for i in store.search(TAILS))
    assert left == ["new", f"old{MAX_TAILS}"]  # the newest old tail waits for the next thread


def test_a_tail_rewritten_during_the_catch_up_stays(store: BaseStore) -> None:
    graph = _graph(store, every_n_messages=6)  # a's second turn is still a tail
    graph.invoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
    node = graph.nodes["extract"].bound.node  # the extract node object
    steps = node.inline.tail_steps(_cfg("b"))
    sent: Any = None
    for n in range(3):  # the tails' search, a's extraction, then the bookkeeping reads
        step = steps.send(sent)
        sent = step.run(None)
        if n == 1:  # thread a takes another turn meanwhile: its tail now holds more
            graph.invoke({"messages": [HumanMessage("ok")]}, _cfg("a"))
    with pytest.raises(StopIteration):
        steps.send(steps.send(sent).run(None))
    (kept,) = [i for i in store.search(TAILS) if i.key == "a"]
    assert len(kept.value["message_ids"]) == 4


def test_tails_expire_where_the_store_has_ttls(pg_uri: str, schema: str, index: Any) -> None:
    from langmem_vault.store import VaultStore

    with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as vault:
        vault.setup()
        _graph(vault).invoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
        with vault.conn.connection() as conn:  # type: ignore[union-attr]
            row = conn.execute(
                f"SELECT ttl_minutes FROM {schema}.store_items WHERE prefix LIKE %s",
                ("langmem_vault.tails.%",),
            ).fetchone()
    assert row is not None and row[0] == TAIL_TTL_MINUTES


def test_export_shows_the_pending_tails(store: BaseStore) -> None:
    _graph(store).invoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
    _graph(store).invoke({"messages": [HumanMessage("hello")]}, _cfg("e", user="eve"))
    doc = export_user(store, "dana")
    (pending,) = doc["pending"]  # dana's tail only, not eve's
    assert pending["thread_id"] == "a"
    said = [m["data"]["content"] for m in pending["messages"]]
    assert said[0] == "I live in Leeds." and len(said) == 2
    assert pending["kept_at"] == store.get(TAILS, "a").updated_at.isoformat()  # type: ignore[union-attr]
    erase_user(store, "dana")
    assert export_user(store, "dana")["pending"] == []


async def test_async_export_shows_the_pending_tails(astore: BaseStore) -> None:
    await _graph(astore).ainvoke({"messages": [HumanMessage("I live in Leeds.")]}, _cfg("a"))
    doc = await aexport_user(astore, "dana")
    assert [p["thread_id"] for p in doc["pending"]] == ["a"]
    assert doc["pending"][0]["messages"][0]["data"]["content"] == "I live in Leeds."
