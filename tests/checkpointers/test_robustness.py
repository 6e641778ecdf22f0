"""Dropped connections, caller connections and transactions, concurrent setup, poolers."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver
from tests.support.savers import AnySaver, call, config, put_chain

KILL_OTHERS = """
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE pid <> pg_backend_pid() AND datname = current_database()
  AND backend_type = 'client backend'"""


async def test_next_operation_reconnects_after_connections_are_dropped(
    any_saver: AnySaver, pg_uri: str
) -> None:
    await put_chain(any_saver, "restart", 1)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(KILL_OTHERS)
    await put_chain(any_saver, "restart", 1)
    assert len(await call(any_saver, "list", config("restart"))) == 2


def test_setup_and_writes_join_the_callers_transaction(pg_uri: str, schema: str) -> None:
    # A plain connection: no autocommit, tuple rows (langgraph's saver needs both changed).
    with psycopg.connect(pg_uri) as conn:
        conn.execute("SELECT 1")  # the caller's transaction is open
        saver = VaultSaver(conn, schema=schema)
        saver.setup()
        conn.rollback()
        found = conn.execute("SELECT to_regclass(%s)", (f"{schema}.saver_checkpoints",))
        assert found.fetchone() == (None,)
        saver.setup()
        conn.commit()
        found = conn.execute("SELECT to_regclass(%s)", (f"{schema}.saver_checkpoints",))
        assert found.fetchone() != (None,)
        conn.commit()
        meta = {"source": "input", "step": -1}
        conn.execute("SELECT 1")  # open a transaction: the put joins it
        saver.put(config("own"), _cp(), meta, {})  # type: ignore[arg-type]
        conn.rollback()
        assert saver.get_tuple(config("own")) is None
        conn.commit()
        saver.put(config("own"), _cp(), meta, {})  # type: ignore[arg-type]
        conn.rollback()  # nothing open: the put committed on its own
        assert saver.get_tuple(config("own")) is not None


def _cp() -> dict[str, object]:
    from tests.support.savers import checkpoint

    return dict(checkpoint())


async def test_async_saver_on_a_callers_connection(pg_uri: str, schema: str) -> None:
    async with await psycopg.AsyncConnection.connect(pg_uri, prepare_threshold=0) as conn:
        saver = AsyncVaultSaver(conn, schema=schema)
        await saver.setup()
        await conn.commit()
        await put_chain(saver, "caller-async", 3)
        await conn.commit()
        assert len([t async for t in saver.alist(config("caller-async"))]) == 3


def test_setup_runs_concurrently_from_several_processes(pg_uri: str, schema: str) -> None:
    script = textwrap.dedent(
        f"""
        from langmem_vault.checkpointers import VaultSaver
        with VaultSaver.from_conn_string({pg_uri!r}, schema={schema!r}, pool_size=1) as s:
            s.setup()
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script]) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    with psycopg.connect(pg_uri) as conn:
        rows = conn.execute(
            f"SELECT version FROM {schema}.vault_migrations WHERE track = 'saver'"
        ).fetchall()
    assert sorted(rows) == [(1,), (2,), (3,), (4,)]


@pytest.mark.parametrize(("threshold", "prepared"), [(None, False), (0, True)])
def test_prepare_threshold_is_configurable(
    pg_uri: str, schema: str, threshold: int | None, prepared: bool
) -> None:
    # One connection, so the statements below see the saver's prepared statements.
    kwargs = {"autocommit": True, "prepare_threshold": threshold}
    with ConnectionPool(pg_uri, min_size=1, max_size=1, kwargs=kwargs) as pool:
        saver = VaultSaver(pool, schema=schema)
        saver.setup()
        for _ in range(3):
            saver.get_tuple(config("p"))
        with pool.connection() as conn:
            (count,) = conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()  # type: ignore[misc]
    assert (count > 0) is prepared
    with VaultSaver.from_conn_string(pg_uri, schema=schema, prepare_threshold=None) as s2:
        assert s2.get_tuple(config("p")) is None


def test_reads_are_prepared_from_their_first_use(pg_uri: str, schema: str) -> None:
    # A fresh connection would otherwise plan the long read statement again for each of its
    # first reads (psycopg prepares at the fifth); other statements keep that threshold.
    kwargs = {"autocommit": True, "prepare_threshold": 5}
    with ConnectionPool(pg_uri, min_size=1, max_size=1, kwargs=kwargs) as pool:
        saver = VaultSaver(pool, schema=schema)
        saver.setup()
        saver.get_tuple(config("p"))
        list(saver.list(config("p")))
        with pool.connection() as conn:
            rows = conn.execute("SELECT statement FROM pg_prepared_statements").fetchall()
    reads = [r[0] for r in rows if "saver_pages" in r[0]]
    assert len(reads) == 2 and len(rows) == 2


async def test_async_saver_sync_methods_work_from_worker_threads(asaver: AsyncVaultSaver) -> None:
    await put_chain(asaver, "bridge", 2)
    got = await asyncio.to_thread(asaver.get_tuple, config("bridge"))
    assert got is not None
    assert len(await asyncio.to_thread(lambda: list(asaver.list(config("bridge"))))) == 2
    await asyncio.to_thread(asaver.prune, ["bridge"])
    assert len(await asyncio.to_thread(lambda: list(asaver.list(config("bridge"))))) == 1
    with pytest.raises(asyncio.InvalidStateError, match="aget_tuple"):
        asaver.get_tuple(config("bridge"))


def test_constructor_rejects_a_dsn_string() -> None:
    with pytest.raises(TypeError, match="from_conn_string"):
        VaultSaver("postgresql://nowhere")  # type: ignore[arg-type]
    with (
        pytest.raises(ValueError, match="schema"),
        VaultSaver.from_conn_string("postgresql://nowhere", schema="Bad-Name"),
    ):
        pass


def test_callers_pool_without_autocommit_or_dict_rows(pg_uri: str, schema: str) -> None:
    with ConnectionPool(pg_uri, min_size=1, max_size=2) as pool:  # psycopg defaults
        saver = VaultSaver(pool, schema=schema)
        saver.setup()
        for i in range(3):
            saver.put_writes(config("plain-pool", checkpoint_id="x"), [("w", i)], f"task{i}")
        stored = saver.put(config("plain-pool"), _cp(), {"source": "input", "step": -1}, {})  # type: ignore[arg-type]
        assert saver.get_tuple(stored) is not None
        with pool.connection() as conn:  # nothing left open or uncommitted
            (n,) = conn.execute(
                f"SELECT count(*) FROM {schema}.saver_writes WHERE thread_id = 'plain-pool'"
            ).fetchone()  # type: ignore[misc]
        assert n == 3


def test_sync_saver_is_safe_from_many_threads(saver: VaultSaver) -> None:
    """Graph.batch and web servers call one sync saver from several threads at once."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.support.savers import checkpoint, meta

    def worker(n: int) -> list[str]:
        parent = None
        items: list[str] = []
        for k in range(10):
            items = [*items, f"item {n}-{k} " + "x" * 80]
            cp = checkpoint({"items": items}, {"items": k + 1})
            stored = saver.put(
                config(f"mt-{n}", checkpoint_id=parent), cp, meta(k), {"items": k + 1}
            )
            parent = stored["configurable"]["checkpoint_id"]
        return items

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(worker, range(8)))
    for n, items in enumerate(results):
        got = saver.get_tuple(config(f"mt-{n}"))
        assert got is not None and got.checkpoint["channel_values"]["items"] == items
        assert len(list(saver.list(config(f"mt-{n}")))) == 10


async def test_owner_checked_reads_on_a_callers_connection(pg_uri: str, schema: str) -> None:
    # Reads with a user_id send the owner check with the read (pipeline mode), also on a
    # caller's plain connection, sync and async.
    from langmem_vault.checkpointers import ThreadAccessError

    meta = {"source": "input", "step": -1}
    with psycopg.connect(pg_uri) as conn:
        saver = VaultSaver(conn, schema=schema)
        saver.setup()
        saver.put(config("owned", user_id="alice"), _cp(), meta, {})  # type: ignore[arg-type]
        conn.commit()
        assert saver.get_tuple(config("owned", user_id="alice")) is not None
        assert len(list(saver.list(config("owned", user_id="alice")))) == 1
        with pytest.raises(ThreadAccessError):
            saver.get_tuple(config("owned", user_id="bob"))
        with pytest.raises(ThreadAccessError):
            list(saver.list(config("owned", user_id="bob")))
        assert saver.get_tuple(config("owned", user_id="alice")) is not None
    async with await psycopg.AsyncConnection.connect(pg_uri) as aconn:
        asaver = AsyncVaultSaver(aconn, schema=schema)
        assert await asaver.aget_tuple(config("owned", user_id="alice")) is not None
        with pytest.raises(ThreadAccessError):
            await asaver.aget_tuple(config("owned", user_id="bob"))
        assert await asaver.aget_tuple(config("owned", user_id="alice")) is not None
