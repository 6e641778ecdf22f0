"""VaultRetriever: a user's memories in VaultStore fused with a langchain-postgres PGVectorStore
collection (hybrid search) on the embedded server, local embeddings, sync and async."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage

from langmem_vault.integrations import VaultRetriever, render_context
from langmem_vault.integrations._retriever import pg_engine
from langmem_vault.memory._vault import MemoryVault

pytest.importorskip("langchain_postgres", reason="the [docs] extra is not installed")

DOCS = [
    "Refunds are paid back to the original card within 5 business days.",
    "Orders ship from our Lyon warehouse every weekday at noon.",
    "The Porto store opens at 9 and closes at 19, Monday to Saturday.",
    "Gift cards never expire and can be used online or in any store.",
]


@pytest.fixture
def collection(pg_uri: str, schema: str, index: dict[str, Any]) -> Iterator[Any]:
    """A PGVectorStore of DOCS (hybrid: a tsvector column fused by reciprocal rank)."""
    from langchain_postgres import PGVectorStore
    from langchain_postgres.v2.hybrid_search_config import (
        HybridSearchConfig,
        reciprocal_rank_fusion,
    )

    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    engine = pg_engine(pg_uri)
    hybrid = HybridSearchConfig(tsv_column="content_tsv", fusion_function=reciprocal_rank_fusion)
    engine.init_vectorstore_table("docs", 384, schema_name=schema, hybrid_search_config=hybrid)
    store = PGVectorStore.create_sync(
        engine, index["embed"], "docs", schema_name=schema, hybrid_search_config=hybrid
    )
    store.add_texts(DOCS)
    yield store
    engine._run_as_sync(engine.close())  # PGEngine has no public sync close


@pytest.fixture
def memories(pg_uri: str, schema: str, index: dict[str, Any]) -> Iterator[Any]:
    from langmem_vault.store import VaultStore

    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        vault = MemoryVault(store, user_id="ana")
        vault.remember("Ana lives in Porto", category="personal")
        vault.remember("Ana paid for order 42 with a gift card")
        vault.remember("Ana is being treated for diabetes", private=True)
        MemoryVault(store, user_id="bob").remember("Bob lives in Lyon")
        yield store


def _check(found: list[Any]) -> None:
    sources = [d.metadata["source"] for d in found]
    assert set(sources) == {"memory", "document"}
    texts = [d.page_content for d in found]
    assert "Ana lives in Porto" in texts and any("Porto store" in t for t in texts)
    assert not any("diabetes" in t or "Bob" in t for t in texts)  # private, other user
    refs = [d.metadata["ref"] for d in found]
    assert [r for r in refs if r[0] == "M"] == [
        f"M{i}" for i in range(1, sources.count("memory") + 1)
    ]
    assert [r for r in refs if r[0] == "D"] == [
        f"D{i}" for i in range(1, sources.count("document") + 1)
    ]
    scores = [d.metadata["rrf_score"] for d in found]
    assert scores == sorted(scores, reverse=True)
    # Reciprocal rank fusion: the two sources' firsts lead, whatever their own score scales.
    assert {found[0].metadata["ref"], found[1].metadata["ref"]} == {"M1", "D1"}


def test_fuses_memories_and_documents(memories: Any, collection: Any) -> None:
    retriever = VaultRetriever(store=memories, user_id="ana", documents=collection, k=5)
    found = retriever.invoke("When does the Porto store open near where Ana lives?")
    assert len(found) == 5
    _check(found)
    context = retriever.context("When does the Porto store open?")
    assert context.splitlines()[0].startswith("Sources (cite memories as [M1]")
    assert "- [D1] " in context and "- [M1] " in context


async def test_fuses_memories_and_documents_async(memories: Any, collection: Any) -> None:
    retriever = VaultRetriever(store=memories, user_id="ana", documents=collection, k=5)
    found = await retriever.ainvoke("When does the Porto store open near where Ana lives?")
    _check(found)


def test_memories_only_and_weights(memories: Any) -> None:
    retriever = VaultRetriever(store=memories, user_id="ana", k=3)
    found = retriever.invoke("gift card")
    assert [d.metadata["source"] for d in found] == ["memory", "memory"]  # private left out
    assert found[0].page_content == "Ana paid for order 42 with a gift card"
    assert render_context([]) == ""


def _inject_documents(collection: Any, memories: Any) -> Any:
    from langmem_vault.nodes import create_inject_node

    retriever = collection.as_retriever(search_kwargs={"k": 2})
    return create_inject_node(
        store=memories, documents=retriever, document_tokens=200, emit_events=False
    )


def _check_block(update: dict[str, Any]) -> None:
    block = update["memory_context"]
    shown, documents = block.split("Documents (cite as [D1], [D2], ...):\n", 1)
    assert "Ana lives in Porto" in shown  # the memories first, as inject ranks them
    documents = documents.splitlines()
    assert documents[0].startswith("[D1] The Porto store opens at 9")
    assert [line[:4] for line in documents] == ["[D1]", "[D2]"]
    assert not any(ref.startswith("D") for ref in update["memory_refs"])  # not memories


def test_inject_adds_documents_after_the_memories(collection: Any, memories: Any) -> None:
    node = _inject_documents(collection, memories)
    config = {"configurable": {"user_id": "ana", "thread_id": "t-docs"}}
    _check_block(node.invoke({"messages": [HumanMessage("When is the Porto store open?")]}, config))


async def test_inject_adds_documents_async(collection: Any, memories: Any) -> None:
    node = _inject_documents(collection, memories)
    config = {"configurable": {"user_id": "ana", "thread_id": "t-docs"}}
    state = {"messages": [HumanMessage("When is the Porto store open?")]}
    _check_block(await node.ainvoke(state, config))
