"""The saver's own connection pools: checked when idle, retried once when broken.

``db.open_pool`` checks every connection it hands out with an extra round trip. A saver
takes a connection for every put and every read, so that doubles the round trips of a read.
Here a connection is only checked when it has sat idle for a while (when a server restart or
an idle-killing proxy, langgraph #5675, would have broken it), and :func:`retry_broken`
runs an operation once more, on a checked connection, if the connection it got turns out to
be dead. Every operation run this way is idempotent (reads, puts and writes that upsert),
so running it twice is safe even if the first attempt committed before the link dropped.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langmem_vault.db.embedded import resolve_dsn

T = TypeVar("T")
# A connection used within this many seconds is handed out without a check.
IDLE_CHECK_SECONDS = 2.0
_returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


def _stamp(conn: psycopg.Connection[Any]) -> None:
    _returned[conn] = time.monotonic()


async def _astamp(conn: psycopg.AsyncConnection[Any]) -> None:
    _returned[conn] = time.monotonic()


def _kwargs(max_size: int, prepare_threshold: int | None) -> dict[str, Any]:
    if not isinstance(max_size, int) or max_size < 1:
        raise ValueError(f"pool_size must be an int >= 1, got {max_size!r}")
    return {"autocommit": True, "prepare_threshold": prepare_threshold}


def _recently_used(conn: Any) -> bool:
    return time.monotonic() - _returned.get(conn, float("-inf")) < IDLE_CHECK_SECONDS


def _check(conn: psycopg.Connection[Any]) -> None:
    if not _recently_used(conn):
        ConnectionPool.check_connection(conn)


async def _acheck(conn: psycopg.AsyncConnection[Any]) -> None:
    if not _recently_used(conn):
        await AsyncConnectionPool.check_connection(conn)


def saver_pool(
    dsn: str | None, *, max_size: int, prepare_threshold: int | None
) -> ConnectionPool[Any]:
    """An open sync pool of autocommit connections (see the module docstring)."""
    kwargs = _kwargs(max_size, prepare_threshold)
    pool: ConnectionPool[Any] = ConnectionPool(
        resolve_dsn(dsn),
        min_size=1,
        max_size=max_size,
        kwargs=kwargs,
        check=_check,
        reset=_stamp,
        open=False,
    )
    pool.open(wait=True)
    return pool


async def asaver_pool(
    dsn: str | None, *, max_size: int, prepare_threshold: int | None
) -> AsyncConnectionPool[Any]:
    """Async twin of :func:`saver_pool`."""
    kwargs = _kwargs(max_size, prepare_threshold)
    dsn = await asyncio.to_thread(resolve_dsn, dsn)  # may start the embedded server
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        kwargs=kwargs,
        check=_acheck,
        reset=_astamp,
        open=False,
    )
    await pool.open(wait=True)
    return pool


def retry_broken(pool: ConnectionPool[Any], run: Callable[[psycopg.Connection[Any]], T]) -> T:
    """``run(conn)`` on a pooled connection; once more after a check if the link was dead."""
    for attempt in (0, 1):
        with pool.connection() as conn:
            try:
                return run(conn)
            except psycopg.OperationalError:
                if attempt or not conn.broken:
                    raise
        pool.check()  # replace every dead idle connection, not just this one
    raise AssertionError("unreachable")


async def aretry_broken(
    pool: AsyncConnectionPool[Any], run: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]
) -> T:
    """Async twin of :func:`retry_broken`."""
    for attempt in (0, 1):
        async with pool.connection() as conn:
            try:
                return await run(conn)
            except psycopg.OperationalError:
                if attempt or not conn.broken:
                    raise
        await pool.check()
    raise AssertionError("unreachable")
