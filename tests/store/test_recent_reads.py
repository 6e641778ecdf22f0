"""Searches without a query in a namespace: its items and its sub-namespaces' items, newest
first, paged; read by an ordered walk of the namespace's own rows (store/0003), not of every
namespace's newer rows."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp, SearchOp

from langmem_vault.db._migrations import load_migrations
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._lexemes import StatsCache
from langmem_vault.store._search_plan import search_plan
from tests.support.probes import probed

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


def _plan_as_run(conn: psycopg.Connection[Any], steps: Any) -> dict[str, Any]:
    """EXPLAIN ANALYZE of a newest-first read as the store runs it: its settings statement,
    then the read (on its generic plan), in one transaction."""
    settings, query, restore = steps.queries
    assert query.prepare is True and "force_generic_plan" in settings.sql
    with conn.transaction():
        conn.execute(settings.sql)
        text = query.sql if isinstance(query.sql, str) else query.sql.as_string(conn)
        (plan,) = conn.execute(  # type: ignore[misc]
            f"EXPLAIN (ANALYZE, FORMAT JSON) {text}", query.params
        ).fetchone()
        conn.execute(restore.sql)
    return plan[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("flt", [None, {"active": True}], ids=["all", "filtered"])
def test_newest_read_skips_other_namespaces_rows(
    pg_uri: str, schema: str, flt: dict[str, Any] | None
) -> None:
    """Another user's 3,000 newer rows: the read walks this namespace's rows only, on the
    generic plan it is prepared with, whatever a filter's value (instructions: active)."""
    ns = ("memories", "u1", "semantic")
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        value = {"active": True}
        store.batch([PutOp(ns, f"f{i}", {"n": i, **value}, index=False) for i in range(300)])
        other = ("memories", "u2", "semantic")
        store.batch([PutOp(other, f"f{i}", {"n": i, **value}, index=False) for i in range(3000)])
        op = SearchOp(ns, filter=flt, limit=50)
        steps = next(search_plan(op, store.settings, {}, StatsCache()))
        with psycopg.connect(pg_uri) as conn:
            conn.execute(f"ANALYZE {schema}.store_items")
            conn.commit()
            plan = _plan_as_run(conn, steps)
        shown = json.dumps(plan)
        assert "store_items_prefix_updated_idx" in shown
        assert "store_items_updated_idx" not in shown
        # every scan of store_items stops at the page: no row of u2, no sort of u1's 300
        scans = [n for n in _nodes(plan["Plan"]) if n.get("Relation Name") == "store_items"]
        assert scans and all(n["Actual Rows"] <= 50 for n in scans)
        assert all(n.get("Rows Removed by Filter", 0) == 0 for n in scans)
        found = store.search(ns, filter=flt, limit=50)
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


# inject's every-turn reads without a query: instructions (by filter), episodes, the newest
# facts (without a message); the private facts' read settles on its generic plan by itself
# (tests/store/test_filtered_reads.py)
USER = ("memories", "u1")
TURN_READS = [
    SearchOp((*USER, "instructions"), filter={"active": True}, limit=100),
    SearchOp((*USER, "episodes"), limit=500),
    SearchOp((*USER, "semantic"), limit=50),
]
TURN_WRITES = [
    *(PutOp((*USER, "instructions"), f"i{n}", {"active": n % 3 > 0}) for n in range(6)),
    *(PutOp((*USER, "episodes"), f"e{n}", {"summary": f"talk {n}"}) for n in range(5)),
    *(PutOp((*USER, "semantic"), f"f{n}", {"n": n}, index=False) for n in range(8)),
]
TURNS = 8
# (generic plans used, custom plans made) per statement: the episodes' and the facts' reads
# are one statement
PLANS = [(TURNS, 0), (2 * TURNS, 0)]
# each read's plans on the connection
PREPARED = (
    "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
    " WHERE statement LIKE '%UNION ALL%'"
)
PROBE = "SELECT current_setting('plan_cache_mode'), current_setting('enable_sort')"


def _read_or_restore(text: str) -> str | None:
    """A newest-first read, or the statement that puts the settings back after it."""
    if "UNION ALL" in text:
        return "read"
    if text.startswith("SELECT set_config('plan_cache_mode', current_setting("):
        return "after"
    return None


def _check_turns(found: list[list[Any]]) -> None:
    assert [sorted(_keys(items)) for items in found] == [
        ["i1", "i2", "i4", "i5"],
        [f"e{n}" for n in range(5)],
        [f"f{n}" for n in range(8)],
    ]


def test_newest_reads_are_planned_once_per_connection(pg_uri: str, schema: str) -> None:
    """Each of a turn's newest-first reads is prepared on its first run and runs its generic
    plan from then on: no custom plan, made on every call before (issue 28, session 10); the
    settings it is planned under end with it."""
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema)  # type: ignore[arg-type]
        store.setup()
        store.batch(TURN_WRITES)
        for _ in range(TURNS - 1):
            _check_turns(store.batch(TURN_READS))
        with probed(_read_or_restore, PROBE) as probes:
            _check_turns(store.batch(TURN_READS))
        assert sorted(conn.execute(PREPARED).fetchall()) == PLANS
        seen = [(when, probe.fetchone()) for when, probe in probes]
        assert seen == [("read", ("force_generic_plan", "off")), ("after", ("auto", "on"))] * 3


async def test_newest_reads_are_planned_once_per_connection_async(pg_uri: str, schema: str) -> None:
    async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as conn:
        store = AsyncVaultStore(conn, schema=schema)  # type: ignore[arg-type]
        await store.setup()
        await store.abatch(TURN_WRITES)
        for _ in range(TURNS):
            _check_turns(await store.abatch(TURN_READS))
        assert sorted(await (await conn.execute(PREPARED)).fetchall()) == PLANS
