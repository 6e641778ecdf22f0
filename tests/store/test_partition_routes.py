"""A user's namespace search names the user's partitions on a partitioned store
(store/_routes.py): the first search of a user names the partitioned tables and learns where
the user's rows lie, in the same round trip; the next ones read the user's leaf tables by
name, with the same answers, on a plan that holds no other partition (a generic plan of the
partitioned tables locks all of them at every search). The leaf is computed as PostgreSQL
routes a row, checked here against the server for many tenants. ``setup()`` forgets what was
learnt: a store partitioned after its first searches routes them."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._routes import LAYOUT, TENANT_HASH, layout_of, leaf_for
from tests.support.plan_mode import (
    INDEX,
    PARTITIONS,
    USERS,
    aexplain_prepared,
    arecorded,
    explain_prepared,
    facts,
    nodes,
    partitioned_schema,
    recorded,
)
from tests.support.routing import partition_of

QUERY = "tea in the garden"


@pytest.fixture(scope="module")
def partitioned(pg_uri: str) -> Iterator[str]:
    yield from partitioned_schema(pg_uri, "routes_")


def _search_text(sent: list[tuple[Any, Any]]) -> str:
    (text,) = [q for q, _ in sent if isinstance(q, str) and q.lstrip().startswith("WITH")]
    return text


def _tables(text: str, schema: str) -> set[str]:
    return set(re.findall(rf"\b{schema}\.(store_\w+)", text))


def _answers(found: list[Any]) -> list[tuple[str, float]]:
    return [(item.key, round(item.score, 9)) for item in found]


def _asks_layout(sent: list[tuple[Any, Any]]) -> bool:
    return any("pg_partitioned_table" in str(q) for q, _ in sent)


def _check_routed(pg_uri: str, schema: str, user: str, first: str, second: str) -> set[str]:
    """The first search named the partitioned tables, the second the user's leaves alone."""
    leaves = {partition_of(pg_uri, schema, t, user) for t in ("store_items", "store_vectors")}
    assert _tables(first, schema) == {"store_items", "store_vectors"}, user
    assert _tables(second, schema) == leaves, user
    return leaves


def _check_plan(plan: dict[str, Any], leaves: set[str]) -> None:
    named = {n["Relation Name"] for n in nodes(plan) if "Relation Name" in n}
    assert named == leaves, f"the routed plan holds {sorted(named)}"


def test_a_users_later_searches_read_its_partitions_by_name(pg_uri: str, partitioned: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=partitioned, index=INDEX, pool_size=1) as store:
        for user in USERS:
            ns = ("memories", user)
            with recorded() as first:
                before = store.search(ns, query=QUERY, limit=5)
            with recorded() as second:
                after = store.search(ns, query=QUERY, limit=5)
            assert before and all(item.namespace[1] == user for item in before)
            assert _answers(after) == _answers(before), user
            assert not _asks_layout(first), "the warm-up learnt the layout"
            leaves = _check_routed(
                pg_uri, partitioned, user, _search_text(first), _search_text(second)
            )
        with store.conn.connection() as conn:
            _check_plan(explain_prepared(conn, second, "WITH"), leaves)


async def test_async_a_users_later_searches_read_its_partitions_by_name(
    pg_uri: str, partitioned: str
) -> None:
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=partitioned, index=INDEX, pool_size=1
    ) as store:
        for user in USERS:
            ns = ("memories", user)
            async with arecorded() as first:
                before = await store.asearch(ns, query=QUERY, limit=5)
            async with arecorded() as second:
                after = await store.asearch(ns, query=QUERY, limit=5)
            assert before and all(item.namespace[1] == user for item in before)
            assert _answers(after) == _answers(before), user
            assert not _asks_layout(first), "the warm-up learnt the layout"
            leaves = _check_routed(
                pg_uri, partitioned, user, _search_text(first), _search_text(second)
            )
        async with store.conn.connection() as conn:
            _check_plan(await aexplain_prepared(conn, second, "WITH"), leaves)


def test_the_leaf_is_where_the_server_routes_the_tenant(pg_uri: str, partitioned: str) -> None:
    """For 300 random tenants (any Unicode), the leaf computed from the server's hash is the
    one partition whose bounds take the tenant (satisfies_hash_partition)."""
    rng = random.Random(5)
    alphabet = "abcXYZ019_-.é中🙂 "
    tenants = ["", *("".join(rng.choices(alphabet, k=rng.randint(1, 24))) for _ in range(299))]
    tables = {f"route_{t}": f"{partitioned}.{t}" for t in ("store_items", "store_vectors")}
    with psycopg.connect(pg_uri, row_factory=psycopg.rows.dict_row) as conn:
        layout = layout_of(conn.execute(LAYOUT, tables).fetchall())
        assert layout is not None and len(layout["store_items"]) == PARTITIONS
        for tenant in tenants:
            row = conn.execute(TENANT_HASH, {"route_tenant": tenant}).fetchone()
            assert row is not None
            computed = leaf_for(layout["store_items"], row["hash"])
            (server,) = conn.execute(
                "SELECT c.relname::text AS leaf FROM pg_inherits AS h"
                " JOIN pg_class AS c ON c.oid = h.inhrelid"
                " WHERE h.inhparent = %(parent)s::regclass AND satisfies_hash_partition("
                "   h.inhparent, %(m)s, substring(pg_get_expr(c.relpartbound, c.oid)"
                "   FROM 'remainder (\\d+)')::int, %(t)s::text)",
                {"parent": f"{partitioned}.store_items", "m": PARTITIONS, "t": tenant},
            ).fetchall()
            assert computed == server["leaf"], tenant


def test_setup_that_partitions_the_tables_routes_the_next_searches(
    pg_uri: str, schema: str
) -> None:
    ns = ("memories", "u3")
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=INDEX, pool_size=1) as store:
        store.setup()
        store.batch(facts())
        for _ in range(2):  # learns that the tables are not partitioned
            with recorded() as sent:
                before = store.search(ns, query=QUERY, limit=5)
            assert _tables(_search_text(sent), schema) == {"store_items", "store_vectors"}
        store.setup(partitions=PARTITIONS)
        with recorded() as first:
            store.search(ns, query=QUERY, limit=5)
        with recorded() as second:
            after = store.search(ns, query=QUERY, limit=5)
    assert _answers(after) == _answers(before)
    _check_routed(pg_uri, schema, "u3", _search_text(first), _search_text(second))


async def test_async_setup_that_partitions_the_tables_routes_the_next_searches(
    pg_uri: str, schema: str
) -> None:
    ns = ("memories", "u3")
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=schema, index=INDEX, pool_size=1
    ) as store:
        await store.setup()
        await store.abatch(facts())
        for _ in range(2):
            async with arecorded() as sent:
                before = await store.asearch(ns, query=QUERY, limit=5)
            assert _tables(_search_text(sent), schema) == {"store_items", "store_vectors"}
        await store.setup(partitions=PARTITIONS)
        async with arecorded() as first:
            await store.asearch(ns, query=QUERY, limit=5)
        async with arecorded() as second:
            after = await store.asearch(ns, query=QUERY, limit=5)
    assert _answers(after) == _answers(before)
    _check_routed(pg_uri, schema, "u3", _search_text(first), _search_text(second))
