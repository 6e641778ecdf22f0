"""Filtered reads without a query: booleans match exactly, and the owner's private facts (the
read inject sends every turn) come from their partial index instead of a scan of every fact."""

from __future__ import annotations

import json
import re

import psycopg
from langgraph.store.base import PutOp, SearchOp
from psycopg import sql

from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._lexemes import StatsCache
from langmem_vault.store._search_plan import search_plan

NS = ("memories", "u1", "semantic")


def test_boolean_filter_matches_only_true(pg_uri: str, schema: str) -> None:
    values = {
        "yes": {"private": True},
        "no": {"private": False},
        "text": {"private": "true"},
        "one": {"private": 1},
        "list": {"private": [True]},
        "missing": {"text": "x"},
    }
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        store.batch([PutOp(NS, key, value, index=False) for key, value in values.items()])
        found = store.search(NS, filter={"private": True})
        assert [i.key for i in found] == ["yes"]
        assert sorted(i.key for i in store.search(NS, filter={"private": False})) == ["no"]


async def test_boolean_filter_matches_only_true_async(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
        await store.abatch(
            [
                PutOp(NS, "yes", {"private": True}, index=False),
                PutOp(NS, "one", {"private": 1}, index=False),
            ]
        )
        found = await store.asearch(NS, filter={"private": True})
        assert [i.key for i in found] == ["yes"]


def test_private_read_uses_the_partial_index(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        ops = [
            PutOp(NS, f"f{i}", {"text": f"fact {i}", "private": i % 500 == 0}, index=False)
            for i in range(3000)
        ]
        store.batch(ops)
        op = SearchOp(NS, filter={"private": True}, limit=200)
        query = next(search_plan(op, store.settings, {}, StatsCache()))
        assert query.prepare is None  # prepared like any read: planned once, not every turn
        with psycopg.connect(pg_uri, autocommit=True, prepare_threshold=0) as conn:
            conn.execute(f"ANALYZE {schema}.store_items")
            # The plan a prepared statement settles on: generic, without the values.
            conn.execute("SET plan_cache_mode = force_generic_plan")
            text = query.sql if isinstance(query.sql, str) else query.sql.as_string(conn)
            conn.execute(text, query.params).fetchall()
            (name,) = conn.execute(  # type: ignore[misc]
                "SELECT name FROM pg_prepared_statements WHERE statement LIKE %s",
                ("%UNION ALL%",),  # the read above (the only such statement)
            ).fetchone()
            names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", text)))
            values = sql.SQL(", ").join(sql.Literal(query.params[n]) for n in names)
            explain = sql.SQL("EXPLAIN (FORMAT JSON) EXECUTE {}({})")
            (plan,) = conn.execute(  # type: ignore[misc]
                explain.format(sql.Identifier(name), values)
            ).fetchone()
        shown = json.dumps(plan)
        assert "store_items_private_idx" in shown
        assert sorted(i.key for i in store.search(NS, filter={"private": True})) == [
            "f0",
            "f1000",
            "f1500",
            "f2000",
            "f2500",
            "f500",
        ]
