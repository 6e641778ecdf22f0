"""A pooled connection's warm-up (store/_warm.py) prepares inject's reads of the facts as inject
sends them: the candidate search with its usage records (a turn with a message) and the same
without a query (a turn without). inject's first turns on a new connection then run the
statements prepared at the warm-up on the generic plans it made, not new ones: before, each
pooled connection prepared and planned them at its first turns (bench/RESULTS.md, session 16).
The entity expansion too: it runs on a forced generic plan (store/_entity_plans.py), which the
warm-up makes, so a connection plans it once, there, not at its first 11 expansions."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langmem_vault.memory._recall.entity_branch import EntityBranch
from langmem_vault.memory._recall.recall_batch import recall_ops
from langmem_vault.memory._recall.recall_query import RecallQuery
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._prepare import StoreSettings
from langmem_vault.store._ranking import SearchRanking
from langmem_vault.store._sql import PRIVATE_PREDICATE
from langmem_vault.store._warm import WARM_QUERY, inject_expansion, inject_ops, warm_ops
from tests.support.embeddings import TrigramEmbeddings
from tests.support.stores import thread

INDEX = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}
CFG = thread("u1", "t1")
PREPARED = "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
# two connections: opened with the pool (min_size 2), or the second when inject's turn takes
# two (the reads beside the search)
OPENED = pytest.mark.parametrize("min_size", [1, 2])
TURNS = ({"messages": [HumanMessage("Which seat should I book for Lyon?")]}, {"messages": []})


def _kind(text: str) -> str | None:
    """Which of inject's fact reads a prepared statement is (None: another)."""
    text = " ".join(text.split())
    if text.startswith("WITH RECURSIVE seeds AS"):
        return "expand"
    if not text.startswith("SELECT r.*, m.value AS mirror_value"):
        return None
    if "WITH ql AS" in text:
        return "search"
    return None if PRIVATE_PREDICATE in text else "newest"  # the private facts' read


def _plans(rows: list[Any]) -> dict[str, tuple[int, int]]:
    """Generic and custom plans run so far per fact read, summed over the connections."""
    found: dict[str, tuple[int, int]] = {}
    for text, generic, custom in rows:
        if kind := _kind(text):
            g, c = found.get(kind, (0, 0))
            found[kind] = (g + generic, c + custom)
    return found


def _seed(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=INDEX) as store:
        store.setup()
        vault = MemoryVault(store, user_id="u1")
        vault.remember("Prefers window seats on flights", category="preference")
        vault.remember("Lives in Lyon", category="personal")


def _check(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> None:
    # each of the two connections prepared the three at its warm-up, on their generic plans
    assert before == {"search": (2, 0), "newest": (2, 0), "expand": (2, 0)}, before
    # the turns ran those statements (one run more of each, of the same generic plans: the
    # turn without a message expands nothing), nothing prepared anew
    assert after == {"search": (3, 0), "newest": (3, 0), "expand": (3, 0)}, after


def test_inject_ops_are_the_ones_inject_sends() -> None:
    """The warm-up's ops are recall's searches, built by memory/_recall for inject's 50
    candidates with joined usage (the store cannot import them)."""
    settings = StoreSettings("s", None, SearchRanking(), 1000)
    namespace = warm_ops(settings)[0].namespace_prefix
    branch = (EntityBranch(),)
    with_message = RecallQuery(namespace, WARM_QUERY, candidates=50, joined_usage=True)
    without = RecallQuery(namespace, None, candidates=50, joined_usage=True)
    search, newest = inject_ops(settings)
    assert recall_ops(with_message, branch)[0] == search
    assert recall_ops(without, branch) == [newest]
    # and the expansion of a message, as the entity branch builds it
    assert recall_ops(with_message, branch)[1] == inject_expansion(settings)


@OPENED
def test_injects_first_turns_on_a_new_connection_run_prepared_statements(
    pg_uri: str, schema: str, min_size: int
) -> None:
    _seed(pg_uri, schema)
    two = {"pool_size": 2, "pool_config": {"min_size": min_size}}
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=INDEX, **two) as store:
        node = create_inject_node(store=store, record_access=False, emit_events=False)

        def plans() -> dict[str, tuple[int, int]]:
            with store.conn.connection() as first, store.conn.connection() as opened_later:
                return _plans([r for c in (first, opened_later) for r in c.execute(PREPARED)])

        before = plans()
        for state in TURNS:
            node.invoke(state, CFG)
        _check(before, plans())


@OPENED
async def test_async_injects_first_turns_on_a_new_connection_run_prepared_statements(
    pg_uri: str, schema: str, min_size: int
) -> None:
    _seed(pg_uri, schema)
    two = {"pool_size": 2, "pool_config": {"min_size": min_size}}
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=INDEX, **two) as store:
        node = create_inject_node(store=store, record_access=False, emit_events=False)

        async def plans() -> dict[str, tuple[int, int]]:
            async with store.conn.connection() as first, store.conn.connection() as later:
                rows = [await (await c.execute(PREPARED)).fetchall() for c in (first, later)]
            return _plans([r for found in rows for r in found])

        before = await plans()
        for state in TURNS:
            await node.ainvoke(state, CFG)
        _check(before, await plans())
