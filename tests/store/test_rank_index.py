"""store/0009 (issue 28): a namespace search ranks its candidates from store_items_rank_idx
(index-only) and reads the heap only for the rows it returns; the index is built online,
partition by partition, again after an interrupted build, and a store ranks from it only once
the migration is recorded. Sync and async."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp, SearchOp

from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.embeddings import TrigramEmbeddings, index_config
from tests.support.online import forget, index_state
from tests.support.vacuum import all_visible

USERS = [("memories", f"u{n}", "semantic") for n in range(3)]
LIMIT = 5
RANK_INDEX = "store_items_rank_idx"
_AUTO_EXPLAIN = (
    "LOAD 'auto_explain'",
    "SET auto_explain.log_min_duration = 0",
    "SET auto_explain.log_analyze = on",
    "SET auto_explain.log_nested_statements = on",
    "SET auto_explain.log_format = json",
    "SET auto_explain.log_level = notice",
)
SEARCH = SearchOp(USERS[1], query="tea garden notes", limit=LIMIT)


def _facts() -> list[PutOp]:
    """Three users' facts, interleaved, some sharing the query's words."""
    words = ["tea", "garden", "notes", "river", "coffee", "trains"]
    return [
        PutOp(USERS[n % 3], f"k{n:03d}", {"text": f"{words[n % 6]} and {words[n % 5]} {n}"})
        for n in range(240)
    ]


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("Plans", []) for n in _nodes(child))]


class _Plans:
    """The search statements' plans, as auto_explain logs them on the store's connection."""

    def __init__(self) -> None:
        self.found: list[dict[str, Any]] = []

    def __call__(self, diag: psycopg.errors.Diagnostic) -> None:
        message = diag.message_primary or ""
        if "plan:" in message:
            plan = json.loads(message[message.index("{") :])
            if "kw AS" in plan["Query Text"]:
                self.found.append(plan)

    def item_reads(self) -> list[tuple[str, str, int]]:
        """The last search's scans of store_items' indexes: (node type, index, loops)."""
        return [
            (n["Node Type"], n["Index Name"], n["Actual Loops"])
            for n in _nodes(self.found[-1]["Plan"])
            if n.get("Index Name", "").startswith("store_items") and n.get("Actual Loops")
        ]


async def _store_search(store: Any, op: SearchOp) -> list[tuple[str, float]]:
    if isinstance(store, AsyncVaultStore):
        (hits,) = await store.abatch([op])
    else:
        (hits,) = store.batch([op])
    return [(h.key, h.score) for h in hits]


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_namespace_search_reads_only_its_page_from_the_heap(
    pg_uri: str, schema: str, is_async: bool
) -> None:
    index = index_config(TrigramEmbeddings(), fields=["text"])
    plans = _Plans()

    async def search(conn: Any, store: Any) -> list[tuple[str, float]]:
        with psycopg.connect(pg_uri, autocommit=True) as vacuumed:
            all_visible(vacuumed, f"{schema}.store_items")
        for setting in _AUTO_EXPLAIN:
            await _run(conn, setting)
        conn.add_notice_handler(plans)
        return await _store_search(store, SEARCH)

    if is_async:
        async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as aconn:
            astore = AsyncVaultStore(aconn, schema=schema, index=index)  # type: ignore[arg-type]
            await astore.setup()
            await astore.abatch(_facts())
            hits = await search(aconn, astore)
    else:
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            store = VaultStore(conn, schema=schema, index=index)  # type: ignore[arg-type]
            store.setup()
            store.batch(_facts())
            hits = await search(conn, store)
    assert len(hits) == LIMIT
    reads = plans.item_reads()
    # every vector candidate ranked from the index alone (the user has 80 items: more than
    # the 50 candidates); the keyword branch's bitmap reads aside, only the page's rows are
    # read from the heap
    probes = [loops for node, name, loops in reads if node == "Index Only Scan"]
    assert {name for node, name, _ in reads if node == "Index Only Scan"} == {RANK_INDEX}, reads
    assert probes[0] >= 50
    fetched = [loops for node, _, loops in reads if node == "Index Scan"]
    assert fetched == [LIMIT], reads


async def _run(conn: Any, sql: str) -> None:
    if isinstance(conn, psycopg.AsyncConnection):
        await conn.execute(sql)
    else:
        conn.execute(sql)


def _before_0009(uri: str, schema: str, *, interrupted: bool) -> None:
    """The database as the code before store/0009 left it; ``interrupted``: with what a
    crashed CREATE INDEX CONCURRENTLY of the index leaves (an invalid index of its name)."""
    forget(uri, schema, RANK_INDEX, 9)
    with psycopg.connect(uri, autocommit=True) as conn:
        all_visible(conn, f"{schema}.store_items")  # as autovacuum leaves it
        if interrupted:  # on the table, or on a partition that holds rows (by its name)
            (leaf,) = conn.execute(
                "SELECT c.relname::text FROM pg_class AS c WHERE c.relkind = 'r'"
                " AND (c.oid = %s::regclass OR c.oid IN (SELECT relid FROM pg_partition_tree(%s)))"
                " AND c.reltuples > 0 ORDER BY 1 LIMIT 1",
                (f"{schema}.store_items",) * 2,
            ).fetchone()  # type: ignore[misc]
            with pytest.raises(psycopg.errors.UniqueViolation):
                conn.execute(
                    f"CREATE UNIQUE INDEX CONCURRENTLY {leaf}_rank_idx ON {schema}.{leaf} (tenant)"
                )


@pytest.mark.parametrize(("is_async", "partitions"), [(False, 0), (True, 4)])
async def test_the_index_is_built_online_and_used_once_recorded(
    pg_uri: str, schema: str, is_async: bool, partitions: int
) -> None:
    index = index_config(TrigramEmbeddings(), fields=["text"])
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as first:
        first.setup(partitions=partitions)
        first.batch(_facts())
    _before_0009(pg_uri, schema, interrupted=True)
    versions, indexes = index_state(pg_uri, schema, "rank_idx")
    assert versions == [1, 2, 3, 4, 5, 6, 7, 8, 10, 11]
    assert [valid for _, valid in indexes] == [False]
    plans = _Plans()

    def explained(conn: psycopg.Connection[Any]) -> None:
        for setting in _AUTO_EXPLAIN:
            conn.execute(setting)
        conn.add_notice_handler(plans)

    async def before_and_after(store: Any) -> tuple[Any, Any]:
        # the same store: before the migration, then after setup() recorded it
        before = await _store_search(store, SEARCH)
        ranked_before = "AS rank" in plans.found[-1]["Query Text"]
        await (store.setup() if is_async else _sync(store.setup))
        after = await _store_search(store, SEARCH)
        return (before, ranked_before), (after, plans.item_reads())

    # one connection in the pool, which auto_explain's settings stay on
    if is_async:
        store = AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index, pool_size=1)
        async with store as astore:
            async with astore._db.conn.connection() as conn:
                for setting in _AUTO_EXPLAIN:
                    await conn.execute(setting)
                conn.add_notice_handler(plans)
            (before, ranked_before), (after, reads) = await before_and_after(astore)
    else:
        with VaultStore.from_conn_string(pg_uri, schema=schema, index=index, pool_size=1) as sstore:
            with sstore._db.conn.connection() as conn:
                explained(conn)
            (before, ranked_before), (after, reads) = await before_and_after(sstore)
    assert not ranked_before  # not recorded: the search reads whole rows, as before
    assert after == before and len(after) == LIMIT
    assert any(name.endswith("rank_idx") for _, name, _ in reads), reads  # a partition's
    versions, indexes = index_state(pg_uri, schema, "rank_idx")
    assert versions == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    # the leftover dropped, the index built (with partitions: the partitioned index and each
    # partition's), every one valid
    expected = 1 + partitions
    assert len(indexes) == expected and all(valid for _, valid in indexes), indexes
    with psycopg.connect(pg_uri) as conn:  # new rows marked all-visible after 2%, not 20%
        options = conn.execute(
            "SELECT c.reloptions FROM pg_class AS c WHERE c.relkind = 'r'"
            " AND (c.oid = %s::regclass OR c.oid IN (SELECT relid FROM pg_partition_tree(%s)))",
            (f"{schema}.store_items",) * 2,
        ).fetchall()
    assert options == [(["autovacuum_vacuum_insert_scale_factor=0.02"],)] * max(partitions, 1)


async def _sync(call: Any) -> Any:
    return call()
