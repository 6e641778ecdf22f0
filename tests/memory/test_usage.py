"""Usage counters (access counts, last access, citations) live apart from memory values.

Injecting or citing a memory never rewrites its value, and concurrent recorders on separate
store instances (as separate processes would be) never lose an increment on VaultStore.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory import _utility as utility
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.usage import usage_namespace
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.store import AsyncVaultStore, VaultStore

SEMANTIC = ("memories", "u1", "semantic")
CFG = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
TURNS = 20  # per worker


def _utility_after(citations: int) -> float:
    # Citations not folded yet: one momentum step (m = 0.5) of 0.1 per citation from 0.5.
    return min(1.0, 0.5 + 0.5 * 0.1 * citations)


def _citations(store: BaseStore, key: str) -> int:
    # Many citations saturate utility at 1.0; the count itself shows none was lost.
    item = store.get(usage_namespace(SEMANTIC), key)
    return int(item.value["citations"]) if item is not None else 0


def test_inject_leaves_values_and_updated_at_alone(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    key = vault.remember("Lives in Lyon", category="personal").key
    episode = vault.add_episode("Planned the Rome trip").key
    vault.add_instruction("Answer in French")
    before = {ns: {i.key: i for i in store.search(ns)} for ns in _namespaces()}
    node = create_inject_node(record_access=AccessRecorder(inline=True))
    graph = StateGraph(MemoryState).add_node("inject", node).add_edge(START, "inject")
    compiled = graph.compile(store=store)
    for _ in range(3):
        out = compiled.invoke({"messages": [HumanMessage("where do I live?")]}, CFG)
    assert key in out["memory_refs"].values() and episode in out["memory_refs"].values()
    AccessRecorder(inline=True).record(store, [], cited=[(SEMANTIC, key)])
    after = {ns: {i.key: i for i in store.search(ns)} for ns in _namespaces()}
    for ns, items in before.items():
        assert after[ns].keys() == items.keys()
        for k, item in items.items():
            assert after[ns][k].value == item.value, (ns, k)
            assert after[ns][k].updated_at == item.updated_at, (ns, k)
    # ...while the counters are read back from their own records.
    fact = vault.get(key)
    assert fact is not None and fact.value.access_count == 3
    assert fact.value.last_accessed is not None
    assert fact.value.utility == pytest.approx(_utility_after(1))
    assert [e.value.access_count for e in vault.episodes()] == [3]
    assert [i.value.usage_count for i in vault.instructions()] == [3]


def _namespaces() -> list[tuple[str, ...]]:
    return [SEMANTIC, ("memories", "u1", "episodes"), ("memories", "u1", "instructions")]


def test_two_store_instances_lose_no_increment(pg_uri: str, schema: str) -> None:
    """Two stores on separate pools stand for two processes: no lock is shared."""
    with (
        VaultStore.from_conn_string(pg_uri, schema=schema, pool_size=2) as one,
        VaultStore.from_conn_string(pg_uri, schema=schema, pool_size=2) as two,
    ):
        one.setup()
        vault = MemoryVault(one, user_id="u1")
        keys = [vault.remember(f"Fact {i}").key for i in range(3)]
        targets = [(SEMANTIC, k) for k in keys]
        start = threading.Barrier(4)

        def work(store: BaseStore) -> None:
            recorder = AccessRecorder(inline=True)
            start.wait()
            for _ in range(TURNS):
                recorder.record(store, targets, cited=targets[:1])

        threads = [threading.Thread(target=work, args=(s,)) for s in (one, two, one, two)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        facts = {m.key: m.value for m in vault.list()}
        assert [facts[k].access_count for k in keys] == [4 * TURNS] * 3
        assert _citations(one, keys[0]) == 4 * TURNS
        assert facts[keys[0]].utility == 1.0
        assert facts[keys[1]].utility == 0.5


async def test_two_async_store_instances_lose_no_increment(pg_uri: str, schema: str) -> None:
    async with (
        AsyncVaultStore.from_conn_string(pg_uri, schema=schema, pool_size=2) as one,
        AsyncVaultStore.from_conn_string(pg_uri, schema=schema, pool_size=2) as two,
    ):
        await one.setup()
        vault = MemoryVault(one, user_id="u1")
        keys = [(await vault.aremember(f"Fact {i}")).key for i in range(3)]
        targets = [(SEMANTIC, k) for k in keys]

        async def work(store: BaseStore) -> None:
            recorder = AccessRecorder(inline=True)
            for _ in range(TURNS):
                await recorder.arecord(store, targets, cited=targets[:1])

        await asyncio.gather(*(work(s) for s in (one, two, one, two)))
        facts = {m.key: m.value for m in await vault.alist()}
        assert [facts[k].access_count for k in keys] == [4 * TURNS] * 3
        item = await one.aget(usage_namespace(SEMANTIC), keys[0])
        assert item is not None and item.value["citations"] == 4 * TURNS


def test_recorders_in_one_process_lose_nothing_without_atomic_increments(
    pg_uri: str, schema: str
) -> None:
    """langgraph's PostgresStore has no atomic increment: the fallback reads, adds and puts.
    inject and respond each own a recorder; in one process their writes must add up."""
    import psycopg
    from langgraph.store.postgres import PostgresStore

    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    uri = f"{pg_uri}{'&' if '?' in pg_uri else '?'}options=-csearch_path%3D{schema}%2Cpublic"
    with PostgresStore.from_conn_string(uri) as pg_store:
        pg_store.setup()
        vault = MemoryVault(pg_store, user_id="u1")
        key = vault.remember("Lives in Lyon").key
        start = threading.Barrier(4)

        def work(cite: bool) -> None:
            recorder = AccessRecorder(inline=True)
            start.wait()
            for _ in range(TURNS):
                if cite:
                    recorder.record(pg_store, [], cited=[(SEMANTIC, key)])
                else:
                    recorder.record(pg_store, [(SEMANTIC, key)])

        threads = [threading.Thread(target=work, args=(n % 2 == 0,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        fact = vault.get(key)
        assert fact is not None and fact.value.access_count == 2 * TURNS
        assert _citations(pg_store, key) == 2 * TURNS


@pytest.mark.parametrize(
    "usage",
    [
        None,
        {},
        {"access_count": 7, "last_accessed": "2026-01-01T00:00:00+00:00"},
        {"access_count": 2, "utility_shift": 0.125, "velocity": 0.05},
        {"access_count": 2, "utility_shift": 0.9},  # clipped to 1
        {"utility_shift": -0.7},  # clipped to 0
        {"citations": 2, "folded_citations": 2, "utility_shift": 0.1},  # all folded already
        {"folded_citations": 1},  # a count below its fold still moves it
        {"citations": 1, "velocity": 0.02},
        {"uncited": 3, "folded_access_count": 4},
        {"signal": -0.3, "folded_signal": 0.3},
    ],
)
@pytest.mark.parametrize("base", [0.0, 0.5, 0.93])
def test_current_utility_is_the_full_fold(base: float, usage: dict[str, Any] | None) -> None:
    """Records without signals skip the fold's bookkeeping: same value as the full fold."""
    _, after, _ = utility._step(base, usage or {}, utility.DEFAULT_UTILITY)
    assert utility.current_utility(base, usage) == round(after, 6)
