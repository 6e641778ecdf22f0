"""The connection layer: DSN resolution, pools, drivers and migrations on a real Postgres."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.db._connection import CONFLICT_ATTEMPTS, AsyncDatabase, Database
from langmem_vault.db._embedded import DSN_ENV, resolve_dsn
from langmem_vault.db._migrations import check_schema, load_migrations, migrate_plan
from langmem_vault.db._runner import Plan, Query


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
    # every version of the track, in order; an online one runs outside (db/_online.py)
    versions = [m.version for m in load_migrations("store") if not m.online]
    assert versions[:3] == [1, 2, 3] and 8 not in versions
    with psycopg.connect(pg_uri) as conn:
        db = Database(conn)
        with conn.transaction() as tx:
            assert db.run(migrate_plan(schema, "store")) == versions
            raise psycopg.Rollback(tx)  # the caller changes its mind: nothing stays
        exists = conn.execute("SELECT to_regclass(%s)", (f"{schema}.store_items",)).fetchone()
        assert exists == (None,)
        assert db.run(migrate_plan(schema, "store")) == versions
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


def _conflicting_plan(runs: list[int], conflicts: int) -> Plan[int]:
    """A transaction Postgres aborts with a serialization failure on its first runs."""
    runs.append(len(runs))
    yield Query("INSERT INTO conflict_probe VALUES (%s)", (len(runs),))
    if len(runs) <= conflicts:
        yield Query("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$")
    rows = yield Query("SELECT count(*) AS n FROM conflict_probe")
    assert rows is not None
    return int(rows[0]["n"])


def _probe_table(pg_uri: str) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS conflict_probe")
        conn.execute("CREATE TABLE conflict_probe (run int)")


def test_a_plan_factory_runs_again_after_a_conflict(pg_uri: str) -> None:
    _probe_table(pg_uri)
    runs: list[int] = []
    with open_pool(pg_uri, max_size=2) as pool:
        db = Database(pool)
        # Each failed run rolled back its insert: the winning run sees only its own row.
        assert db.run(lambda: _conflicting_plan(runs, conflicts=2)) == 1
        assert len(runs) == 3
        # Bounded: a transaction that keeps failing raises after CONFLICT_ATTEMPTS runs.
        runs.clear()
        with pytest.raises(psycopg.errors.SerializationFailure):
            db.run(lambda: _conflicting_plan(runs, conflicts=99))
        assert len(runs) == CONFLICT_ATTEMPTS
        # A plan generator cannot be restarted: it runs once.
        runs.clear()
        with pytest.raises(psycopg.errors.SerializationFailure):
            db.run(_conflicting_plan(runs, conflicts=1))
        assert len(runs) == 1


async def test_async_plan_factory_runs_again_after_a_conflict(pg_uri: str) -> None:
    _probe_table(pg_uri)
    runs: list[int] = []
    async with await aopen_pool(pg_uri, max_size=2) as pool:
        db = AsyncDatabase(pool)
        assert await db.run(lambda: _conflicting_plan(runs, conflicts=2)) == 1
        assert len(runs) == 3
        runs.clear()
        with pytest.raises(psycopg.errors.SerializationFailure):
            await db.run(_conflicting_plan(runs, conflicts=1))
        assert len(runs) == 1
