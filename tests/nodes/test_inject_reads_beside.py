"""inject on a pooled VaultStore works out what the reads without a query vector give (the
instructions that apply, the recent episodes in order) beside the message's embedding and
search, not after them: the turn's path after the search answers holds only the ranking.
The answer is the one a single batch gives (tests/nodes/test_inject_overlap.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Generator
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage

from langmem_vault.embeddings import local_embeddings
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes import _inject_select
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.stores import thread

CFG = thread("u1", "t1")
QUESTION = "Which seat should I book for my flight to Lyon?"


class Beside:
    """Marks when inject has worked out the instructions and the episodes, and the thread
    that did each."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.threads: dict[str, int] = {}

    def mark(self, part: str) -> None:
        self.threads[part] = threading.get_ident()
        if len(self.threads) == 2:
            self.done.set()


class WaitingEmbeddings(Embeddings):
    """The local model, whose query embedding first waits (up to 2 s) for the reads' work to
    be done: it records whether it was, and in which thread the embedding ran."""

    def __init__(self, beside: Beside) -> None:
        self.model = local_embeddings()
        self.beside = beside
        self.saw: list[bool] = []
        self.thread = 0
        self.armed = False  # the seeding's searches do not wait

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        if self.armed:
            self.thread = threading.get_ident()
            self.saw.append(self.beside.done.wait(2))
        return self.model.embed_query(text)


@pytest.fixture
def beside(monkeypatch: pytest.MonkeyPatch) -> Beside:
    marks = Beside()
    instructions = _inject_select.applicable_instructions
    newest = _inject_select.newest_plan

    def applicable(*args: Any, **kwargs: Any) -> Any:
        found = instructions(*args, **kwargs)
        marks.mark("instructions")
        return found

    def episodes(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        found = yield from newest(*args, **kwargs)
        marks.mark("episodes")
        return found

    monkeypatch.setattr(_inject_select, "applicable_instructions", applicable)
    monkeypatch.setattr(_inject_select, "newest_plan", episodes)
    return marks


def _seed(vault: MemoryVault) -> None:
    vault.remember("Prefers window seats on flights", category="preference")
    vault.remember("Lives in Lyon", category="personal")
    vault.add_instruction("Answer in French", priority=3)
    vault.add_episode("Planned a trip to Lisbon", importance=0.8)


def _turn(
    pg_uri: str, schema: str, beside: Beside, messages: list[Any]
) -> tuple[dict[str, Any], WaitingEmbeddings]:
    """One inject turn on a pooled VaultStore seeded with a fact, an instruction, an episode."""
    emb = WaitingEmbeddings(beside)
    index = {"dims": 384, "embed": emb, "fields": ["text"]}
    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        _seed(MemoryVault(store, user_id="u1"))
        node = create_inject_node(store=store, record_access=False, emit_events=False)
        emb.armed = True
        return node.invoke({"messages": messages}, CFG), emb


def test_the_reads_are_worked_out_while_the_message_is_embedded(
    pg_uri: str, schema: str, beside: Beside
) -> None:
    out, emb = _turn(pg_uri, schema, beside, [HumanMessage(QUESTION)])
    assert emb.saw == [True]
    # on the reads' own worker, not in the thread that embeds and searches
    assert set(beside.threads) == {"instructions", "episodes"}
    assert emb.thread not in beside.threads.values()
    for shown in ("Prefers window seats", "Answer in French", "Lisbon"):
        assert shown in out["memory_context"]


def test_async_reads_are_worked_out_while_the_message_is_embedded(
    pg_uri: str, schema: str, beside: Beside
) -> None:
    async def main() -> tuple[dict[str, Any], list[bool]]:
        emb = WaitingEmbeddings(beside)
        index = {"dims": 384, "embed": emb, "fields": ["text"]}
        opened = AsyncVaultStore.from_conn_string(pg_uri, index=index, schema=schema)  # type: ignore[arg-type]
        async with opened as store:
            await store.setup()
            vault = MemoryVault(store, user_id="u1")
            await vault.aremember("Prefers window seats on flights", category="preference")
            await vault.aadd_instruction("Answer in French", priority=3)
            await vault.aadd_episode("Planned a trip to Lisbon", importance=0.8)
            node = create_inject_node(store=store, record_access=False, emit_events=False)
            emb.armed = True
            out = await node.ainvoke({"messages": [HumanMessage(QUESTION)]}, CFG)
        return out, emb.saw

    out, saw = asyncio.run(main())
    assert saw == [True]
    for shown in ("Prefers window seats", "Answer in French", "Lisbon"):
        assert shown in out["memory_context"]


def test_without_a_message_the_reads_are_worked_out_in_the_turn(
    pg_uri: str, schema: str, beside: Beside
) -> None:
    # no embedding to overlap: one batch, worked out after it, in the body's thread
    out, emb = _turn(pg_uri, schema, beside, [])
    assert emb.saw == []
    assert len(set(beside.threads.values())) == 1
    assert "Answer in French" in out["memory_context"]
