"""Searches without a query in a namespace: its items and its sub-namespaces' items, newest
first, paged; read by an ordered walk of the namespace's own rows (store/0003), not of every
namespace's newer rows."""

from __future__ import annotations

import json
from typing import Any

import psycopg
from langgraph.store.base import PutOp, SearchOp

from langmem_vault.db._migrations import load_migrations
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._lexemes import StatsCache
from langmem_vault.store._search_plan import search_plan

# One batch each, in this order, so each has its own updated_at (its transaction's time).
WRITES: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("a", "b"), "k1", {"n": 1, "pick": True}),
    (("a", "b", "c"), "k2", {"n": 2, "pick": False}),
    (("a", "b-x"), "k3", {"n": 3, "pick": True}),  # sorts between "a.b" and "a.b." bytewise
    (("a", "bz"), "k4", {"n": 4, "pick": True}),
    (("a", "b"), "k5", {"n": 5, "pick": True}),
    (("a", "b", "c", "d"), "k6", {"n": 6, "pick": True}),
    (("a",), "k7", {"n": 7, "pick": True}),
    (("a", "b_"), "k8", {"n": 8, "pick": True}),  # LIKE's wildcard, escaped
]
NEWEST_UNDER_AB = ["k6", "k5", "k2", "k1"]


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("Plans", []) for n in _nodes(child))]


def _keys(items: list[Any]) -> list[str]:
    return [i.key for i in items]


def test_newest_first_across_sub_namespaces(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        for ns, key, value in WRITES:
            store.batch([PutOp(ns, key, value, index=False)])
        assert _keys(store.search(("a", "b"), limit=10)) == NEWEST_UNDER_AB
        assert _keys(store.search(("a", "b"), limit=2, offset=1)) == ["k5", "k2"]
        assert _keys(store.search(("a", "b"), limit=2, offset=3)) == ["k1"]
        assert _keys(store.search(("a", "b"), filter={"pick": True})) == ["k6", "k5", "k1"]
        assert _keys(store.search(("a", "b", "c"), limit=10)) == ["k6", "k2"]
        assert _keys(store.search(("a",), limit=3)) == ["k8", "k7", "k6"]
        assert len(store.search((), limit=100)) == len(WRITES)
        # a rewritten item moves to the front
        store.put(("a", "b"), "k1", {"n": 9, "pick": True}, index=False)
        assert _keys(store.search(("a", "b"), limit=10)) == ["k1", "k6", "k5", "k2"]


async def test_newest_first_across_sub_namespaces_async(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
        for ns, key, value in WRITES:
            await store.abatch([PutOp(ns, key, value, index=False)])
        assert _keys(await store.asearch(("a", "b"), limit=10)) == NEWEST_UNDER_AB
        assert _keys(await store.asearch(("a", "b"), limit=2, offset=1)) == ["k5", "k2"]
        found = await store.asearch(("a", "b"), filter={"pick": True})
        assert _keys(found) == ["k6", "k5", "k1"]


def test_newest_read_skips_other_namespaces_rows(pg_uri: str, schema: str) -> None:
    """Another user's 3,000 newer rows: the read walks this namespace's rows only."""
    ns = ("memories", "u1", "semantic")
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        store.batch([PutOp(ns, f"f{i}", {"text": f"fact {i}"}, index=False) for i in range(300)])
        other = ("memories", "u2", "semantic")
        store.batch([PutOp(other, f"f{i}", {"text": f"x {i}"}, index=False) for i in range(3000)])
        op = SearchOp(ns, limit=50)
        query = next(search_plan(op, store.settings, {}, StatsCache()))
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"ANALYZE {schema}.store_items")
            text = query.sql if isinstance(query.sql, str) else query.sql.as_string(conn)
            (plan,) = conn.execute(  # type: ignore[misc]
                f"EXPLAIN (ANALYZE, FORMAT JSON) {text}", query.params
            ).fetchone()
        shown = json.dumps(plan)
        assert "store_items_prefix_updated_idx" in shown
        assert "store_items_updated_idx" not in shown
        # every scan of store_items stops at the page: no row of u2, no sort of u1's 300
        scans = [n for n in _nodes(plan[0]["Plan"]) if n.get("Relation Name") == "store_items"]
        assert scans and all(n["Actual Rows"] <= 50 for n in scans)
        assert all(n.get("Rows Removed by Filter", 0) == 0 for n in scans)
        found = store.search(ns, limit=50)
        assert len(found) == 50 and all(tuple(i.namespace) == ns for i in found)


def test_a_store_at_version_2_upgrades_with_its_data(pg_uri: str, schema: str) -> None:
    """A data dir set up before store/0003: setup() adds the index; items stay, reads agree."""
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        for ns, key, value in WRITES:
            store.batch([PutOp(ns, key, value, index=False)])
        with psycopg.connect(pg_uri, autocommit=True) as conn:  # back to version 2
            conn.execute(f"DROP INDEX {schema}.store_items_prefix_updated_idx")
            conn.execute(
                f"DELETE FROM {schema}.vault_migrations WHERE track = 'store' AND version = 3"
            )
        assert _keys(store.search(("a", "b"), limit=10)) == NEWEST_UNDER_AB  # works without it
        store.setup()
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            found = conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (f"{schema}.store_items_prefix_updated_idx",)
            ).fetchone()
            versions = conn.execute(
                f"SELECT version FROM {schema}.vault_migrations WHERE track = 'store'"
            ).fetchall()
        assert found == (True,)
        # every store migration is applied again, 3 and the later ones
        assert sorted(v for (v,) in versions) == [m.version for m in load_migrations("store")]
        assert _keys(store.search(("a", "b"), limit=10)) == NEWEST_UNDER_AB
