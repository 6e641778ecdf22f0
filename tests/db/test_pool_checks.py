"""Our pools check a connection before handing it out when its last hand-out is older than
IDLE_CHECK_SECONDS (a server restart or an idle-killing proxy may have closed it), and skip
the check (a round trip) for one handed out just before."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from langmem_vault.db import _connection as connection
from langmem_vault.db import aopen_pool, open_pool


def _kill(pg_uri: str, pid: int) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_a_connection_idle_past_the_limit_is_checked_and_replaced(
    pg_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "IDLE_CHECK_SECONDS", 0.0)  # every hand-out is "idle"
    with open_pool(pg_uri, min_size=1, max_size=1) as pool:
        with pool.connection() as conn:
            first = conn.info.backend_pid
        _kill(pg_uri, first)
        with pool.connection() as conn:  # no error: the check found it dead
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.backend_pid != first


def test_a_connection_handed_out_just_before_is_not_checked(
    pg_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "IDLE_CHECK_SECONDS", 3600.0)
    with open_pool(pg_uri, min_size=1, max_size=1) as pool:
        with pool.connection() as conn:
            first = conn.info.backend_pid
        _kill(pg_uri, first)
        # handed out again unchecked (the point: no round trip), so the dead socket shows
        with pytest.raises(psycopg.OperationalError), pool.connection() as conn:
            conn.execute("SELECT 1")


async def test_async_idle_connection_is_checked_and_replaced(
    pg_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "IDLE_CHECK_SECONDS", 0.0)
    pool: Any = await aopen_pool(pg_uri, min_size=1, max_size=1)
    async with pool:
        async with pool.connection() as conn:
            first = conn.info.backend_pid
        _kill(pg_uri, first)
        async with pool.connection() as conn:
            cur = await conn.execute("SELECT 1")
            assert await cur.fetchone() == (1,)
            assert conn.info.backend_pid != first


async def test_async_connection_handed_out_just_before_is_not_checked(
    pg_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "IDLE_CHECK_SECONDS", 3600.0)
    pool: Any = await aopen_pool(pg_uri, min_size=1, max_size=1)
    async with pool:
        async with pool.connection() as conn:
            first = conn.info.backend_pid
        _kill(pg_uri, first)
        with pytest.raises(psycopg.OperationalError):
            async with pool.connection() as conn:
                await conn.execute("SELECT 1")
