"""inject on a pooled VaultStore: the reads that need no query vector (instructions, episodes,
private facts) run on the database while the message is embedded, the turn's answer is the
one a single batch gives, and an embedding that fails still answers without memory."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage
from langgraph.store.base import SearchOp

from langmem_vault.embeddings import local_embeddings
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes import _inject
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.stores import thread

CFG = thread("u1", "t1")
QUESTION = "Which seat should I book for my flight to Lyon?"


class WaitingEmbeddings(Embeddings):
    """The local model, whose query embedding first waits (up to 2 s) for ``reads_done``: it
    records whether the store had answered the reads without a query by then."""

    def __init__(self) -> None:
        self.model = local_embeddings()
        self.reads_done = threading.Event()
        self.saw_reads: list[bool] = []
        self.fail = False

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.saw_reads.append(self.reads_done.wait(2))
        if self.fail:
            raise RuntimeError("the embedder is down")
        return self.model.embed_query(text)


def _no_query(ops: Any) -> bool:
    searches = [getattr(op, "search", op) for op in ops]
    return not any(isinstance(s, SearchOp) and s.query for s in searches)


class SignallingStore(VaultStore):
    """Signals the embedder when a batch that searches by no query has answered (a test
    clears the signal before the turn it looks at)."""

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        found = super().batch(ops)
        if _no_query(ops):
            self.index_config["embed"].reads_done.set()  # type: ignore[index, union-attr]
        return found


class AsyncSignallingStore(AsyncVaultStore):
    async def abatch(self, ops: Any) -> Any:
        ops = list(ops)
        found = await super().abatch(ops)
        if _no_query(ops):
            self.index_config["embed"].reads_done.set()  # type: ignore[index, union-attr]
        return found


def _seed(vault: MemoryVault) -> None:
    vault.remember("Prefers window seats on flights", category="preference")
    vault.remember("Lives in Lyon", category="personal")
    vault.remember("Has a dog named Rex", category="personal")
    vault.remember("User's passport number ends in 42", private=True)
    vault.add_instruction("Answer in French", priority=3)
    vault.add_episode("Planned a trip to Lisbon", importance=0.8)


@contextmanager
def _one_batch(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """inject as on a store that cannot run two batches at once: all reads in one batch."""
    with monkeypatch.context() as patch:
        patch.setattr(_inject, "runs_batches_at_once", lambda store: False)
        yield


def _memory(update: dict[str, Any]) -> tuple[Any, ...]:
    return update["memory_context"], update["memory_refs"], update["memory_status"]


def test_reads_run_while_the_message_is_embedded_with_the_same_answer(
    pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = WaitingEmbeddings()
    index = {"dims": 384, "embed": emb, "fields": ["text"]}
    with SignallingStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        _seed(MemoryVault(store, user_id="u1"))
        node = create_inject_node(store=store, record_access=False, emit_events=False)
        state = {"messages": [HumanMessage(QUESTION)]}
        emb.reads_done.clear()  # the seeding's batches signalled too
        apart = node.invoke(state, CFG)
        assert emb.saw_reads == [True]
        emb.saw_reads.clear()
        emb.reads_done.set()  # one batch: nothing to wait for
        store._query_cache.clear()
        with _one_batch(monkeypatch):
            together = node.invoke(state, CFG)
        assert emb.saw_reads == [True]
    assert _memory(apart) == _memory(together)
    context = apart["memory_context"]
    for shown in ("Prefers window seats", "passport number", "Answer in French", "Lisbon"):
        assert shown in context


def test_async_reads_run_while_the_message_is_embedded_with_the_same_answer(
    pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any], list[bool]]:
        emb = WaitingEmbeddings()
        index = {"dims": 384, "embed": emb, "fields": ["text"]}
        opened = AsyncSignallingStore.from_conn_string(pg_uri, index=index, schema=schema)  # type: ignore[arg-type]
        async with opened as store:
            await store.setup()
            vault = MemoryVault(store, user_id="u1")
            await vault.aremember("Prefers window seats on flights", category="preference")
            await vault.aremember("Lives in Lyon", category="personal")
            await vault.aremember("User's passport number ends in 42", private=True)
            await vault.aadd_instruction("Answer in French", priority=3)
            await vault.aadd_episode("Planned a trip to Lisbon", importance=0.8)
            node = create_inject_node(store=store, record_access=False, emit_events=False)
            state = {"messages": [HumanMessage(QUESTION)]}
            emb.reads_done.clear()
            apart = await node.ainvoke(state, CFG)
            saw = list(emb.saw_reads)
            emb.reads_done.set()
            store._query_cache.clear()
            with _one_batch(monkeypatch):
                together = await node.ainvoke(state, CFG)
        return apart, together, saw

    apart, together, saw = asyncio.run(main())
    assert saw == [True]
    assert _memory(apart) == _memory(together)
    assert "passport number" in apart["memory_context"]
    assert "Lisbon" in apart["memory_context"]


def test_a_failing_embedding_still_answers_without_memory(pg_uri: str, schema: str) -> None:
    emb = WaitingEmbeddings()
    index = {"dims": 384, "embed": emb, "fields": ["text"]}
    with SignallingStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        _seed(MemoryVault(store, user_id="u1"))
        emb.fail = True
        node = create_inject_node(store=store, record_access=False, emit_events=False)
        emb.reads_done.clear()
        update = node.invoke({"messages": [HumanMessage(QUESTION)]}, CFG)

        async def arun() -> dict[str, Any]:
            emb.reads_done.clear()
            return await node.ainvoke({"messages": [HumanMessage(QUESTION + "?")]}, CFG)

        aupdate = asyncio.run(arun())
        # the reads beside it had answered; the turn goes on without memory, and says why
        assert emb.saw_reads == [True, True]
        for out in (update, aupdate):
            assert out["memory_status"] == {"inject": "RuntimeError: the embedder is down"}
            assert "memory_context" not in out
        # the store still serves the next turn (no connection left behind)
        emb.fail = False
        again = node.invoke({"messages": [HumanMessage("Where do I live?")]}, CFG)
        assert "Lives in Lyon" in again["memory_context"]


def test_only_a_store_on_a_pool_runs_two_batches_at_once(pg_uri: str, schema: str) -> None:
    import psycopg
    from langgraph.store.memory import InMemoryStore

    from langmem_vault.db._store_plans import runs_batches_at_once

    with VaultStore.from_conn_string(pg_uri, schema=schema) as pooled:
        assert runs_batches_at_once(pooled)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        assert not runs_batches_at_once(VaultStore(conn, schema=schema))
    assert not runs_batches_at_once(InMemoryStore())
