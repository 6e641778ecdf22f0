"""store/0007-0008 online (issue 28): a database written before the page time column migrates
in place without a table rewrite: the column is filled in batches and indexed concurrently,
and every row keeps its page order and its pages, before, during and after the fill. A
database that applied 0007's first form (a stored generated column) keeps it and is not
migrated again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp
from psycopg.types.json import Jsonb

from langmem_vault.db import _page_at
from langmem_vault.db._migrations import load_migrations, render
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._pages import PageOp
from langmem_vault.store._plans import setup_plan

FACTS = ("memories", "u1", "semantic")
RULES = ("memories", "u1", "instructions")
OTHER = ("memories", "u2", "semantic")
# store/0007 as it first shipped: a stored generated column (rewrites the table)
FIRST_0007 = """
ALTER TABLE {s}.store_items ADD COLUMN page_at timestamptz
    GENERATED ALWAYS AS ({s}.item_time(value, created_at)) STORED;
CREATE INDEX store_items_page_at_idx
    ON {s}.store_items (tenant, prefix, page_at, key) INCLUDE (expires_at);
DROP INDEX {s}.store_items_prefix_created_idx;
ALTER INDEX {s}.store_items_page_at_idx RENAME TO store_items_prefix_created_idx;
"""
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _value(n: int) -> dict[str, Any]:
    """A memory's value: its own created_at (out of insertion order), none, or not a time
    (then the time it was stored orders it); some share a time (the key breaks the tie)."""
    if n % 4 == 0:
        return {"n": n}
    if n % 4 == 1:
        return {"n": n, "created_at": "not a time"}
    return {"n": n, "created_at": (T0 + timedelta(hours=(n * 7) % 5)).isoformat()}


def _old_database(uri: str, schema: str, *, first_0007: bool = False) -> None:
    """The store's schema at store/0006 (or with 0007's first form), written by the code
    before it: 90 items of two users in three namespaces."""
    with psycopg.connect(uri) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(
            f"CREATE TABLE {schema}.vault_migrations (track text NOT NULL, version integer "
            "NOT NULL, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), "
            "PRIMARY KEY (track, version))"
        )
        for m in load_migrations("store"):
            if m.version <= 6:
                conn.execute(render(m, schema, {}))  # type: ignore[arg-type]
                conn.execute(
                    f"INSERT INTO {schema}.vault_migrations VALUES ('store', %s, %s)",
                    (m.version, m.name),
                )
        if first_0007:
            conn.execute(FIRST_0007.format(s=schema))  # type: ignore[arg-type]
            conn.execute(
                f"INSERT INTO {schema}.vault_migrations VALUES ('store', 7, '0007_page_at.sql')"
            )
        for n in range(90):
            ns = (FACTS, RULES, OTHER)[n % 3]
            conn.execute(
                f"INSERT INTO {schema}.store_items (tenant, prefix, key, namespace, value,"
                f" created_at, updated_at) VALUES ({schema}.tenant_of(%s::text[]), %s, %s, %s,"
                " %s, %s, %s)",
                (list(ns), ".".join(ns), f"k{n % 7}-{n}", list(ns), Jsonb(_value(n)), T0, T0),
            )


async def _run(store: Any, ops: list[Any]) -> list[Any]:
    return await store.abatch(ops) if isinstance(store, AsyncVaultStore) else store.batch(ops)


async def _setup(store: Any) -> None:
    if isinstance(store, AsyncVaultStore):
        await store.setup()
    else:
        store.setup()


async def _pages(store: Any) -> list[list[tuple[tuple[str, ...], str]]]:
    """Every kind of page of u1's two namespaces: walks by cursor, newest and oldest first,
    with and without a filter, and pages at offsets."""
    seen = []
    for newest_first, flt in [(True, None), (False, None), (True, {"n": 10})]:
        op = PageOp((FACTS, RULES), limit=7, newest_first=newest_first, filter=flt)
        (page,) = await _run(store, [op])
        walk = [page]
        while walk[-1].next is not None:
            (page,) = await _run(store, [op._replace(after=walk[-1].next)])
            walk.append(page)
        seen += [[(i.namespace, i.key) for i in p.items] for p in walk]
        for offset in (1, 13, 40, 59):
            (page,) = await _run(store, [op._replace(offset=offset)])
            seen.append([(i.namespace, i.key) for i in page.items])
    return seen


def _state(uri: str, schema: str) -> dict[str, Any]:
    with psycopg.connect(uri) as conn:
        nulls, wrong = conn.execute(
            f"SELECT count(*) FILTER (WHERE page_at IS NULL), count(*) FILTER (WHERE page_at"
            f" IS DISTINCT FROM {schema}.item_time(value, created_at)) FROM {schema}.store_items"
        ).fetchone()  # type: ignore[misc]
        (index,) = conn.execute(
            "SELECT pg_get_indexdef(%s::regclass)", (f"{schema}.store_items_prefix_created_idx",)
        ).fetchone()  # type: ignore[misc]
        versions = [
            r[0]
            for r in conn.execute(
                f"SELECT version FROM {schema}.vault_migrations WHERE track = 'store'"
                " ORDER BY version"
            )
        ]
        (generated,) = conn.execute(
            "SELECT attgenerated FROM pg_attribute WHERE attrelid = %s::regclass"
            " AND attname = 'page_at'",
            (f"{schema}.store_items",),
        ).fetchone()  # type: ignore[misc]
        (old,) = conn.execute(
            "SELECT count(*) FROM pg_index WHERE indrelid = %s::regclass"
            " AND pg_get_indexdef(indexrelid) LIKE '%%item_time%%'",
            (f"{schema}.store_items",),
        ).fetchone()  # type: ignore[misc]
    return {
        "nulls": nulls,
        "wrong": wrong,
        "index": index,
        "versions": versions,
        "generated": generated,
        "old_index": old,  # indexes on the expression
    }


@pytest.fixture(params=["pool", "apool", "connection"])
def opened(request: pytest.FixtureRequest, pg_uri: str, schema: str) -> Any:
    """A store of each driver: sync and async on a pool (the online steps run outside
    setup()'s transaction), sync on one connection (inside it)."""

    def open_store() -> Any:
        if request.param == "pool":
            return VaultStore.from_conn_string(pg_uri, schema=schema)
        if request.param == "apool":
            return AsyncVaultStore.from_conn_string(pg_uri, schema=schema)
        return _OneConnection(pg_uri, schema)

    return open_store


class _OneConnection:
    def __init__(self, uri: str, schema: str) -> None:
        self.uri, self.schema = uri, schema

    def __enter__(self) -> VaultStore:
        self.conn = psycopg.connect(self.uri, autocommit=True)
        return VaultStore(self.conn, schema=self.schema)  # type: ignore[arg-type]

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


async def _with(opened: Any, body: Any) -> Any:
    made = opened()
    if hasattr(made, "__aenter__"):
        async with made as store:
            return await body(store)
    with made as store:
        return await body(store)


async def test_an_old_database_keeps_its_pages_through_the_migration(
    opened: Any, pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old_database(pg_uri, schema)
    monkeypatch.setattr(_page_at, "FILL_BLOCKS", 1)  # a batch a heap page: several batches
    before = await _with(opened, _pages)  # the code reads pages before setup() too
    assert sum(map(len, before)) > 100

    async def migrate(store: Any) -> Any:
        await _setup(store)
        return await _pages(store)

    assert await _with(opened, migrate) == before
    state = _state(pg_uri, schema)
    assert state["nulls"] == 0 and state["wrong"] == 0
    assert "(tenant, prefix, page_at, key)" in state["index"]
    assert state["versions"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] and state["generated"] == ""
    assert state["old_index"] == 0

    async def put(store: Any) -> Any:  # a write after it fills the column (the trigger)
        await _run(store, [PutOp(FACTS, "new", {"n": 1}, index=False)])
        return await _pages(store)

    newest = (await _with(opened, put))[0]
    assert newest[0] == (FACTS, "new") and newest[1:] == before[0][:6]
    assert _state(pg_uri, schema)["nulls"] == 0


async def test_pages_are_right_while_the_column_is_being_filled(
    opened: Any, pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old_database(pg_uri, schema)
    before = await _with(opened, _pages)
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store._db.run(setup_plan(store.settings, online=False))  # 0007: column and trigger
    with psycopg.connect(pg_uri, autocommit=True) as conn:  # a fill half done
        conn.execute(
            f"UPDATE {schema}.store_items SET page_at = {schema}.item_time(value, created_at)"
            " WHERE key < 'k4'"
        )
    assert 0 < _state(pg_uri, schema)["nulls"] < 90
    assert await _with(opened, _pages) == before
    monkeypatch.setattr(_page_at, "FILL_BLOCKS", 1)
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            (blocks,) = conn.execute(
                f"SELECT pg_relation_size('{schema}.store_items') / 8192"
            ).fetchone()  # type: ignore[misc]
        assert blocks > 2
        # the batches alone, without the last pass that fills what they missed
        store._db.run_direct(lambda: _page_at._fill(schema, f"{schema}.store_items", True))
        assert _state(pg_uri, schema)["nulls"] == 0
        assert await _pages(store) == before  # filled, not yet indexed: still the old order
        store.setup()
    assert await _with(opened, _pages) == before
    assert _state(pg_uri, schema)["versions"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]


async def test_a_database_with_the_generated_column_is_not_migrated_again(
    opened: Any, pg_uri: str, schema: str
) -> None:
    _old_database(pg_uri, schema, first_0007=True)
    index = f"{schema}.store_items_prefix_created_idx"
    with psycopg.connect(pg_uri) as conn:
        (oid,) = conn.execute("SELECT %s::regclass::oid", (index,)).fetchone()  # type: ignore[misc]
    before = await _with(opened, _pages)

    async def migrate(store: Any) -> Any:
        await _setup(store)
        await _run(store, [PutOp(FACTS, "new", {"n": 1}, index=False)])
        return await _pages(store)

    after = await _with(opened, migrate)
    assert after[0][0] == (FACTS, "new") and after[0][1:] == before[0][:6]
    state = _state(pg_uri, schema)
    assert state["generated"] == "s" and state["wrong"] == 0
    assert state["versions"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    with psycopg.connect(pg_uri) as conn:
        assert conn.execute("SELECT %s::regclass::oid", (index,)).fetchone() == (oid,)
        triggers = conn.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
            (f"{schema}.store_items",),
        ).fetchone()
    assert triggers == (0,)


async def test_an_old_database_partitioned_by_setup_migrates_online(
    pg_uri: str, schema: str
) -> None:
    """The copy into partitions keeps the trigger; each partition's index is built
    concurrently and attached to the partitioned one."""
    _old_database(pg_uri, schema)
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        before = await _pages(store)
        await store.setup(partitions=4)
        assert await _pages(store) == before
        await store.abatch([PutOp(OTHER, "new", {"n": 1}, index=False)])
    state = _state(pg_uri, schema)
    assert state["nulls"] == 0 and state["wrong"] == 0 and state["old_index"] == 0
    assert state["versions"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    with psycopg.connect(pg_uri) as conn:
        parts = conn.execute(
            "SELECT count(*) FILTER (WHERE i.indisvalid), count(*) FROM pg_partition_tree(%s)"
            " AS t JOIN pg_index AS i ON i.indexrelid = t.relid",
            (f"{schema}.store_items_prefix_created_idx",),
        ).fetchone()
    assert parts == (5, 5)  # the partitioned index and its 4 partitions', all valid
