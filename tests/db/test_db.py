"""The connection layer: DSN resolution, pools, drivers and migrations on a real Postgres."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from langmem_vault.db import (
    AsyncDatabase,
    Database,
    Query,
    aopen_pool,
    check_schema,
    migrate_plan,
    open_pool,
    resolve_dsn,
)
from langmem_vault.db.embedded import DSN_ENV


def test_resolve_dsn_prefers_argument_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DSN_ENV, "postgresql://env/db")
    assert resolve_dsn("postgresql://arg/db") == "postgresql://arg/db"
    assert resolve_dsn(None) == "postgresql://env/db"


def test_embedded_server_when_nothing_is_configured(
    monkeypatch: pytest.MonkeyPatch, pg_uri: str, server_dir: Path
) -> None:
    monkeypatch.delenv(DSN_ENV, raising=False)
    monkeypatch.setenv("LANGMEM_VAULT_DATA_DIR", str(server_dir / "pg"))
    uri = resolve_dsn(None)
    assert uri != pg_uri
    with psycopg.connect(uri) as conn:
        row = conn.execute(
            "SELECT array_agg(extname ORDER BY extname) FROM pg_extension "
            "WHERE extname IN ('vector', 'pg_trgm')"
        ).fetchone()
    assert row == (["vector"],)


@pytest.mark.parametrize(("min_size", "max_size"), [(0, 0), (3, 2), (-1, 2)])
def test_bad_pool_sizes(pg_uri: str, min_size: int, max_size: int) -> None:
    with pytest.raises(ValueError, match="pool sizes"):
        open_pool(pg_uri, min_size=min_size, max_size=max_size)


def test_database_refuses_other_objects() -> None:
    with pytest.raises(TypeError, match="from_conn_string"):
        Database("postgresql://not-a-connection")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="from_conn_string"):
        AsyncDatabase("postgresql://not-a-connection")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["Public", "drop table x", "a-b", "", "9abc", "x" * 64])
def test_bad_schema_names(name: str) -> None:
    with pytest.raises(ValueError, match="invalid schema name"):
        check_schema(name)


def test_migrations_are_idempotent_and_roll_back_with_the_callers_transaction(
    pg_uri: str, schema: str
) -> None:
    with psycopg.connect(pg_uri) as conn:
        db = Database(conn)
        with conn.transaction() as tx:
            assert db.run(migrate_plan(schema, "store")) == [1]
            raise psycopg.Rollback(tx)  # the caller changes its mind: nothing stays
        exists = conn.execute("SELECT to_regclass(%s)", (f"{schema}.store_items",)).fetchone()
        assert exists == (None,)
        assert db.run(migrate_plan(schema, "store")) == [1]
        assert db.run(migrate_plan(schema, "store")) == []


def test_pool_reconnects_after_the_server_drops_connections(pg_uri: str) -> None:
    pool = open_pool(pg_uri, min_size=2, max_size=2)
    try:
        db = Database(pool)

        def pid() -> int:
            rows = db.run(_one(Query("SELECT pg_backend_pid() AS pid")))
            return int(rows[0]["pid"])

        pids = {pid(), pid()}
        with psycopg.connect(pg_uri, autocommit=True) as admin:
            for p in pids:
                admin.execute("SELECT pg_terminate_backend(%s)", (p,))
        # The pool checks connections before handing them out: no error, a new backend.
        assert pid() not in pids
    finally:
        pool.close()


async def test_async_pool_runs_plans(pg_uri: str) -> None:
    pool = await aopen_pool(pg_uri, max_size=2)
    try:
        rows = await AsyncDatabase(pool).run(_one(Query("SELECT 41 + %s AS n", (1,))))
        assert rows == [{"n": 42}]
    finally:
        await pool.close()


def _one(query: Query):  # type: ignore[no-untyped-def]
    rows = yield query
    return rows
