"""Database handles: a connection pool we own, or a connection or pool the caller passes in.

Every operation takes its own connection from the pool and runs in its own transaction, so
pooled operations run in parallel (langgraph's saver serialises them behind one instance lock,
langgraph #7259). A single caller connection can only run one statement at a time, so only
that case takes a lock. Caller connections are used as they are: our cursors set their own
row factory and ``conn.transaction()`` works with and without autocommit.

Our pools check a connection before handing it out only when it was last handed out a while
ago, so it may have sat idle (when a server restart or an idle-killing proxy, langgraph
#5675, would have broken it): checking every time would add a round trip to every
operation. :func:`retry_broken` runs an idempotent operation once more if its connection
turns out to be dead anyway.

A transaction that Postgres aborts on a deadlock or a serialization failure did nothing, and
runs again from its start when the caller passed a plan *factory* to ``run`` (a generator
cannot be restarted). The plans lock rows in one order so this is rare; the retry is the
safety net for orders no plan controls (foreign keys, index pages, other apps).
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection, AsyncCursor, Connection, Cursor
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from langmem_vault.db import _jsonb as jsonb
from langmem_vault.db._embedded import dsn_source, naming_crashes, resolve_dsn
from langmem_vault.db._runner import Plan, Statements
from langmem_vault.db._steps import Step, arun_steps, run_steps

T = TypeVar("T")
logger = logging.getLogger(__name__)

SyncConn = Connection[Any] | ConnectionPool[Any]
AsyncConn = AsyncConnection[Any] | AsyncConnectionPool[Any]

DEFAULT_POOL_SIZE = 10
# psycopg's default. Pass None to turn server-side prepared statements off, as PgBouncer in
# transaction mode requires (langgraph hard-codes 0 for everything, langgraph #6705).
DEFAULT_PREPARE_THRESHOLD: int | None = 5


# Runs of one transaction on a deadlock or serialization failure, the first included.
CONFLICT_ATTEMPTS = 5
# The first retry waits up to this long (randomised so the two sides do not meet again),
# doubling each time.
CONFLICT_BACKOFF_SECONDS = 0.005
_CONFLICTS = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)

PlanSource = Plan[T] | Callable[[], Plan[T]]

# A connection handed out within this many seconds is handed out again without a check.
IDLE_CHECK_SECONDS = 2.0
_handed_out: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


def _conn_kwargs(prepare_threshold: int | None, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    if isinstance(prepare_threshold, bool) or not (
        prepare_threshold is None or (isinstance(prepare_threshold, int) and prepare_threshold >= 0)
    ):
        raise ValueError(
            f"prepare_threshold must be None (no prepared statements) or an int >= 0, "
            f"got {prepare_threshold!r}"
        )
    kwargs = {"prepare_threshold": prepare_threshold, **(extra or {})}
    # Our drivers rely on autocommit connections (single statements skip BEGIN/COMMIT).
    if kwargs.get("autocommit", True) is not True:
        raise ValueError("connection kwargs: autocommit must be True on a langmem_vault pool")
    kwargs["autocommit"] = True
    return kwargs


# The stamp is taken when the pool hands a connection out (in ``check``, on the caller's
# thread), not when it comes back: a pool with a ``reset`` callback returns every connection
# through a worker thread, a thread handoff per operation (0.1-1.5 ms on a busy machine, and
# the next operation may find the pool empty meanwhile). The time since the last hand-out is
# never shorter than the time idle in the pool, so no check the idle rule asks for is skipped.


def _recently_used(conn: Any) -> bool:
    return time.monotonic() - _handed_out.get(conn, float("-inf")) < IDLE_CHECK_SECONDS


def _check(conn: Connection[Any]) -> None:
    if not _recently_used(conn):
        ConnectionPool.check_connection(conn)
    _handed_out[conn] = time.monotonic()


async def _acheck(conn: AsyncConnection[Any]) -> None:
    if not _recently_used(conn):
        await AsyncConnectionPool.check_connection(conn)
    _handed_out[conn] = time.monotonic()


# How long the first connection may take before a DSN counts as unreachable.
CONNECT_TIMEOUT_SECONDS = 5


def _connect_failed(exc: psycopg.Error, dsn: str | None) -> psycopg.Error:
    # The pool would retry a bad DSN for 30 s and then say only "pool initialization
    # incomplete"; the driver's own message ("Connection refused", 'missing "="') is the cause.
    exc.add_note(f"while connecting to {dsn_source(dsn)}")
    return exc


def _probe(dsn: str | None, conninfo: str, kwargs: Mapping[str, Any]) -> None:
    """Connect once, with the pool's connection arguments, so a malformed or unreachable DSN
    fails fast with the driver's message."""
    try:
        with psycopg.connect(conninfo, **{"connect_timeout": CONNECT_TIMEOUT_SECONDS, **kwargs}):
            pass
    except psycopg.Error as exc:
        raise _connect_failed(exc, dsn) from None


async def _aprobe(dsn: str | None, conninfo: str, kwargs: Mapping[str, Any]) -> None:
    """Async twin of :func:`_probe`."""
    try:
        async with await AsyncConnection.connect(
            conninfo, **{"connect_timeout": CONNECT_TIMEOUT_SECONDS, **kwargs}
        ):
            pass
    except psycopg.Error as exc:
        raise _connect_failed(exc, dsn) from None


def _check_sizes(min_size: int, max_size: int) -> None:
    if max_size < 1 or min_size < 0 or min_size > max_size:
        raise ValueError(
            "pool sizes must satisfy 0 <= min_size <= max_size and max_size >= 1; "
            f"got min_size={min_size}, max_size={max_size}"
        )


def open_pool(
    dsn: str | None = None,
    *,
    min_size: int = 1,
    max_size: int = DEFAULT_POOL_SIZE,
    prepare_threshold: int | None = DEFAULT_PREPARE_THRESHOLD,
    kwargs: Mapping[str, Any] | None = None,
    **pool_options: Any,
) -> ConnectionPool[Any]:
    """Open a sync pool of autocommit connections on ``dsn`` (or ``$LANGMEM_VAULT_DSN``, or
    the embedded server). Idle connections are checked when taken (see the module docstring).

    ``kwargs`` are extra connection arguments; ``pool_options`` go to psycopg_pool's
    ``ConnectionPool`` (``timeout``, ``max_idle``, ``name``...).
    """
    _check_sizes(min_size, max_size)
    conn_kwargs = _conn_kwargs(prepare_threshold, kwargs)
    conninfo = resolve_dsn(dsn)
    _probe(dsn, conninfo, conn_kwargs)
    user_configure = pool_options.pop("configure", None)

    def configure(conn: Connection[Any]) -> None:
        jsonb.configure(conn)  # faster jsonb decoding, same values (see db/_jsonb.py)
        if user_configure is not None:
            user_configure(conn)

    pool: ConnectionPool[Any] = ConnectionPool(
        conninfo,
        min_size=min_size,
        max_size=max_size,
        kwargs=conn_kwargs,
        check=_check,
        configure=configure,
        open=False,
        **pool_options,
    )
    pool.open(wait=True)
    return pool


async def aopen_pool(
    dsn: str | None = None,
    *,
    min_size: int = 1,
    max_size: int = DEFAULT_POOL_SIZE,
    prepare_threshold: int | None = DEFAULT_PREPARE_THRESHOLD,
    kwargs: Mapping[str, Any] | None = None,
    **pool_options: Any,
) -> AsyncConnectionPool[Any]:
    """Async twin of :func:`open_pool`."""
    _check_sizes(min_size, max_size)
    conn_kwargs = _conn_kwargs(prepare_threshold, kwargs)
    conninfo = await asyncio.to_thread(resolve_dsn, dsn)  # may start the embedded server
    await _aprobe(dsn, conninfo, conn_kwargs)
    user_configure = pool_options.pop("configure", None)

    async def configure(conn: AsyncConnection[Any]) -> None:
        await jsonb.aconfigure(conn)
        if user_configure is not None:
            await user_configure(conn)

    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        conninfo,
        min_size=min_size,
        max_size=max_size,
        kwargs=conn_kwargs,
        check=_acheck,
        configure=configure,
        open=False,
        **pool_options,
    )
    await pool.open(wait=True)
    return pool


def retry_broken(pool: ConnectionPool[Any], run: Callable[[Connection[Any]], T]) -> T:
    """``run(conn)`` on a pooled connection; once more if that connection was dead.

    Only for idempotent operations: the first attempt may have committed before the link dropped.
    """
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
    pool: AsyncConnectionPool[Any], run: Callable[[AsyncConnection[Any]], Awaitable[T]]
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


@dataclass
class _Attempts:
    """When to run a transaction again: the one retry policy of both drivers.

    ``after(exc, began)`` gives the seconds to wait before the next run, or None to raise.
    """

    conflicts_left: int
    reconnect: bool  # a pool may replace a connection found dead at BEGIN, once

    def after(self, exc: Exception, *, began: bool) -> float | None:
        if isinstance(exc, PoolTimeout):
            return None  # a busy pool, not a dead connection: waiting again would double it
        if isinstance(exc, _CONFLICTS):
            self.conflicts_left -= 1
            if self.conflicts_left <= 0:
                return None
            tries = CONFLICT_ATTEMPTS - self.conflicts_left
            logger.debug("transaction rolled back (%s); running it again", type(exc).__name__)
            return random.uniform(0, CONFLICT_BACKOFF_SECONDS * 2**tries)
        if isinstance(exc, psycopg.OperationalError) and self.reconnect and not began:
            self.reconnect = False
            return 0.0
        return None


def _source(plan: PlanSource[T], pooled: bool) -> tuple[Callable[[], Plan[T]], _Attempts]:
    """A factory for the plan and its retry budget: a bare generator runs at most once
    (it may still be handed a fresh connection, having not started)."""
    if callable(plan):
        return plan, _Attempts(CONFLICT_ATTEMPTS, pooled)
    return (lambda: plan), _Attempts(1, pooled)


class Database:
    """Sync driver: runs plans on a pool or on one connection, one transaction per call."""

    def __init__(self, conn: SyncConn) -> None:
        if not isinstance(conn, Connection | ConnectionPool):
            raise TypeError(
                f"expected a psycopg Connection or psycopg_pool ConnectionPool, got "
                f"{type(conn).__name__}; use from_conn_string() to connect from a DSN"
            )
        self.conn = conn
        self._lock = threading.Lock() if isinstance(conn, Connection) else None

    def run_direct(
        self, make: Callable[[], Plan[T]], *, binary: bool = False, session: bool = False
    ) -> T:
        """Run a plan whose statements are each atomic and idempotent without a transaction
        block (on autocommit connections that saves the BEGIN/COMMIT round trips), once more on
        a checked connection if the first was dead. ``make`` builds the plan, so a retry starts
        it afresh. A single caller connection runs it as :meth:`run` does. With ``session``
        the plan may leave state on its connection (a session lock, an open transaction) when
        it fails: the connection is then closed, not given back to the pool."""
        if not isinstance(self.conn, ConnectionPool):
            return self.run(make())

        def once(conn: Connection[Any]) -> T:
            try:
                with conn.cursor(row_factory=dict_row, binary=binary) as cur:
                    return run_steps(make(), Statements(cur))
            except BaseException:
                if session:
                    conn.close()
                raise

        with naming_crashes():
            return retry_broken(self.conn, once)

    @contextmanager
    def cursor(self) -> Iterator[Cursor[DictRow]]:
        """A dict-row cursor inside a transaction that commits when the block exits."""
        with self._transaction(False) as (cur, _):
            yield cur

    @contextmanager
    def _transaction(
        self, pipeline: bool
    ) -> Iterator[tuple[Cursor[DictRow], psycopg.Pipeline | None]]:
        with ExitStack() as stack:
            if isinstance(self.conn, ConnectionPool):
                conn = stack.enter_context(self.conn.connection())
            else:
                assert self._lock is not None
                stack.enter_context(self._lock)
                conn = self.conn
            # Entered before the transaction, a pipeline queues the BEGIN with the first step.
            pipe = stack.enter_context(conn.pipeline()) if pipeline else None
            stack.enter_context(conn.transaction())
            yield stack.enter_context(conn.cursor(row_factory=dict_row)), pipe

    def run(self, plan: PlanSource[T], *, pipeline: bool = False) -> T:
        """Run a plan in one transaction. On a pool, a connection found dead when the
        transaction begins (before any statement of the plan) is replaced, once. A crash of
        the embedded server raises :class:`~langmem_vault.db._embedded.ServerCrashedError`.

        Pass a factory (``lambda: make_plan(...)``) to have a transaction that hit a deadlock
        or a serialization failure run again from the start, up to ``CONFLICT_ATTEMPTS``
        times; a plan generator itself runs once.

        ``pipeline=True`` runs the transaction in pipeline mode: BEGIN and COMMIT travel with
        the first and last steps, two round trips fewer (for short transactions on the chat
        path; the plan must not use COPY or texts of several statements).
        """
        with naming_crashes():
            return self._run(plan, pipeline)

    def _run(self, plan: PlanSource[T], pipeline: bool = False) -> T:
        make, attempts = _source(plan, isinstance(self.conn, ConnectionPool))
        while True:
            began = False
            try:
                with self._transaction(pipeline) as (cur, pipe):
                    began = True
                    return run_steps(make(), Statements(cur, pipe))
            except psycopg.Error as exc:
                wait = attempts.after(exc, began=began)
                if wait is None:
                    raise
            if isinstance(self.conn, ConnectionPool) and not began:
                self.conn.check()
            time.sleep(wait)


class AsyncDatabase:
    """Async driver: the twin of :class:`Database`."""

    def __init__(self, conn: AsyncConn) -> None:
        if not isinstance(conn, AsyncConnection | AsyncConnectionPool):
            raise TypeError(
                f"expected a psycopg AsyncConnection or psycopg_pool AsyncConnectionPool, got "
                f"{type(conn).__name__}; use from_conn_string() to connect from a DSN"
            )
        self.conn = conn
        self._lock = asyncio.Lock() if isinstance(conn, AsyncConnection) else None

    async def run_direct(
        self, make: Callable[[], Plan[T]], *, binary: bool = False, session: bool = False
    ) -> T:
        """Async twin of :meth:`Database.run_direct`."""
        if not isinstance(self.conn, AsyncConnectionPool):
            return await self.run(make())

        async def once(conn: AsyncConnection[Any]) -> T:
            try:
                async with conn.cursor(row_factory=dict_row, binary=binary) as cur:
                    return await arun_steps(make(), Statements(cur))
            except BaseException:
                if session:
                    await conn.close()
                raise

        with naming_crashes():
            return await aretry_broken(self.conn, once)

    @asynccontextmanager
    async def cursor(self) -> AsyncIterator[AsyncCursor[DictRow]]:
        async with self._transaction(False) as (cur, _):
            yield cur

    @asynccontextmanager
    async def _transaction(
        self, pipeline: bool
    ) -> AsyncIterator[tuple[AsyncCursor[DictRow], psycopg.AsyncPipeline | None]]:
        async with AsyncExitStack() as stack:
            if isinstance(self.conn, AsyncConnectionPool):
                conn = await stack.enter_async_context(self.conn.connection())
            else:
                assert self._lock is not None
                await stack.enter_async_context(self._lock)
                conn = self.conn
            pipe = await stack.enter_async_context(conn.pipeline()) if pipeline else None
            await stack.enter_async_context(conn.transaction())
            cur = await stack.enter_async_context(conn.cursor(row_factory=dict_row))
            yield cur, pipe

    async def run(self, plan: PlanSource[T], *, pipeline: bool = False) -> T:
        """Async twin of :meth:`Database.run`."""
        with naming_crashes():
            return await self._run(plan, pipeline)

    async def _run(self, plan: PlanSource[T], pipeline: bool = False) -> T:
        make, attempts = _source(plan, isinstance(self.conn, AsyncConnectionPool))
        while True:
            began = False
            try:
                async with self._transaction(pipeline) as (cur, pipe):
                    began = True
                    return await arun_steps(make(), Statements(cur, pipe))
            except psycopg.Error as exc:
                wait = attempts.after(exc, began=began)
                if wait is None:
                    raise
            if isinstance(self.conn, AsyncConnectionPool) and not began:
                await self.conn.check()
            await asyncio.sleep(wait)


class Transaction(Step):
    """A plan run in a transaction of its own, as one step: ``db.run(plan)`` on the
    :class:`Database` or :class:`AsyncDatabase` it names (an operation that spans several
    transactions, such as re-embedding a store page by page)."""

    __slots__ = ("db", "plan")

    def __init__(self, db: Database | AsyncDatabase, plan: PlanSource[Any]) -> None:
        self.db = db
        self.plan = plan

    def run(self, ctx: Any) -> Any:
        assert isinstance(self.db, Database), "a sync driver runs a sync Database"
        return self.db.run(self.plan)

    async def arun(self, ctx: Any) -> Any:
        assert isinstance(self.db, AsyncDatabase), "an async driver runs an AsyncDatabase"
        return await self.db.run(self.plan)


class Direct(Step):
    """A plan of statements each atomic on its own, run without a transaction block, as one
    step: ``db.run_direct(make, session=session)`` on the :class:`Database` or
    :class:`AsyncDatabase` it names (a read-only store batch, on the primary or on a read
    replica; the online migrations)."""

    __slots__ = ("db", "make", "session")

    def __init__(
        self, db: Database | AsyncDatabase, make: Callable[[], Plan[Any]], *, session: bool = False
    ) -> None:
        self.db = db
        self.make = make
        self.session = session

    def run(self, ctx: Any) -> Any:
        assert isinstance(self.db, Database), "a sync driver runs a sync Database"
        return self.db.run_direct(self.make, session=self.session)

    async def arun(self, ctx: Any) -> Any:
        assert isinstance(self.db, AsyncDatabase), "an async driver runs an AsyncDatabase"
        return await self.db.run_direct(self.make, session=self.session)
