"""Every connection a store's pool opens has the hot reads prepared and planned before a user's
search takes it (store/_warm.py): the namespace search and the newest-first read, on their
generic plans. A user's first search then runs the statement prepared at the warm-up (no new
prepared statement on the connection, the same one's generic plan run again), so no user pays
a connection's first plan (210-310 ms at 1M items in 64 partitions; bench/RESULTS.md). On a
partitioned store the user's next searches name the user's partition (store/_routes.py): that
statement is prepared at the first of them, one per partition, and run again after."""

from __future__ import annotations

import re
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp

from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.embeddings import TrigramEmbeddings
from tests.support.routing import partition_of

INDEX = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}
NS = ("memories", "u1", "semantic")
PARTITIONS = 4
# the statements a search runs on its generic plan, and how each begins
MARKS = {"namespace search": "WITH", "newest first": "SELECT * FROM ("}
PREPARED = "SELECT statement, generic_plans FROM pg_prepared_statements"
# a second connection: the pool opens it when the first is taken
TWO = {"pool_size": 2, "pool_config": {"min_size": 1}}
_LEAF = re.compile(r"store_items_(p\d+)")
# what each connection holds prepared after its warm-up: the hot statements on the
# partitioned tables
WARM = {(name, "") for name in MARKS}


@pytest.fixture
def filled(pg_uri: str, schema: str) -> str:
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=INDEX) as store:
        store.setup(partitions=PARTITIONS)
        store.batch([PutOp(NS, f"k{n}", {"text": f"tea in the garden {n}"}) for n in range(12)])
    return schema


def _plans(rows: list[Any]) -> dict[tuple[str, str], int]:
    """Generic plans made or run so far per hot statement (by its mark, and the partition it
    names: "" for the partitioned tables), of the prepared ones."""
    found = {}
    for text, generic in rows:
        if text.lstrip().startswith("WITH RECURSIVE"):  # the entity expansion: test_warm_inject
            continue
        for name, mark in MARKS.items():
            if text.lstrip().startswith(mark) and "store_items" in text:
                leaf = _LEAF.search(text)
                key = (name, leaf.group(1) if leaf else "")
                assert key not in found, f"{key} prepared twice: {text[:80]}"
                found[key] = generic
    return found


def _searches(store: VaultStore) -> None:
    assert store.search(NS, query="tea in the garden", limit=5)  # learns u1's partition
    assert store.search(NS, query="tea in the garden", limit=5)  # reads it by name
    assert store.search(NS, query="tea in the garden", limit=5)
    assert store.search(NS, limit=5)


def _total(per_connection: list[dict[tuple[str, str], int]]) -> dict[tuple[str, str], int]:
    keys = {key for plans in per_connection for key in plans}
    return {key: sum(plans.get(key, 0) for plans in per_connection) for key in keys}


def _expected(before: dict[tuple[str, str], int], mine: str) -> dict[tuple[str, str], int]:
    """``before`` after the searches: one run more of each warm statement (the first search,
    the newest-first read), and u1's partition's search prepared once and run twice."""
    return {**{key: n + 1 for key, n in before.items()}, ("namespace search", mine): 2}


def _mine(pg_uri: str, schema: str) -> str:
    return partition_of(pg_uri, schema, "store_items", "u1").rsplit("_", 1)[1]


def test_connections_are_warm_before_the_first_search(pg_uri: str, filled: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=filled, index=INDEX, **TWO) as store:
        pool = store.conn
        with pool.connection() as first, pool.connection() as opened_later:
            before = [_plans(c.execute(PREPARED).fetchall()) for c in (first, opened_later)]
        for plans in before:
            assert set(plans) == WARM and all(n >= 1 for n in plans.values()), plans
        _searches(store)
        with pool.connection() as first, pool.connection() as opened_later:
            after = [_plans(c.execute(PREPARED).fetchall()) for c in (first, opened_later)]
    # the searches ran the plans the warm-ups made: one run more each, nothing prepared anew
    assert _total(after) == _expected(_total(before), _mine(pg_uri, filled))


async def test_async_connections_are_warm_before_the_first_search(pg_uri: str, filled: str) -> None:
    async def plans_of(pool: Any) -> list[dict[tuple[str, str], int]]:
        async with pool.connection() as first, pool.connection() as opened_later:
            return [
                _plans(await (await c.execute(PREPARED)).fetchall()) for c in (first, opened_later)
            ]

    async with AsyncVaultStore.from_conn_string(pg_uri, schema=filled, index=INDEX, **TWO) as store:
        before = await plans_of(store.conn)
        for plans in before:
            assert set(plans) == WARM and all(n >= 1 for n in plans.values()), plans
        for _ in range(3):
            assert await store.asearch(NS, query="tea in the garden", limit=5)
        assert await store.asearch(NS, limit=5)
        after = await plans_of(store.conn)
    assert _total(after) == _expected(_total(before), _mine(pg_uri, filled))


def test_a_store_opened_before_setup_is_warm_after_it(pg_uri: str, schema: str) -> None:
    """Nothing to warm before the tables exist (nothing prepared, no error left on the
    connection); setup() warms the pool's connection."""
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=INDEX, pool_size=1) as store:
        with store.conn.connection() as conn:
            assert conn.execute(PREPARED).fetchall() == []
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        store.setup()
        with store.conn.connection() as conn:
            assert {name for name, _ in _plans(conn.execute(PREPARED).fetchall())} == set(MARKS)
        store.put(NS, "k", {"text": "tea"})
        assert store.search(NS, query="tea")


async def test_async_store_opened_before_setup_is_warm_after_it(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=schema, index=INDEX, pool_size=1
    ) as store:
        async with store.conn.connection() as conn:
            assert await (await conn.execute(PREPARED)).fetchall() == []
        await store.setup()
        async with store.conn.connection() as conn:
            rows = await (await conn.execute(PREPARED)).fetchall()
        assert {name for name, _ in _plans(rows)} == set(MARKS)
