"""The pool every ``from_conn_string`` opens: one set of options for every Postgres class.

``VaultStore``, ``VaultSaver``, ``JobQueue``, ``AuditLog`` and their async twins all take

    from_conn_string(conn_string=None, *, pool_size=10, prepare_threshold=5,
                     schema="langmem_vault", pipeline=False, pool_config=None)

and open their pool here, so a setting means the same thing everywhere (PgBouncer users set
``prepare_threshold=None`` once per component, not "everywhere but the queue").

``pipeline`` and ``pool_config`` exist so that code written for langgraph's ``PostgresStore`` /
``PostgresSaver`` runs unchanged:

- ``pool_config`` is langgraph's ``PoolConfig``: ``min_size`` and ``max_size`` size our pool
  (``max_size`` overrides ``pool_size``; ``None`` keeps ``pool_size``), ``kwargs`` are extra
  connection arguments (a ``prepare_threshold`` there wins over the keyword), and any other key
  (``timeout``, ``max_idle``, ``max_lifetime``, ``name``...) goes to psycopg_pool as it is.
- ``pipeline`` is accepted and has no effect. langgraph uses it to batch statements on one
  connection; our components always run on a pool, and a plan reads each statement's rows
  before it sends the next, so a pipeline would save no round trip.

>>> pool_arguments(pool_size=4, prepare_threshold=None, pool_config={"min_size": 2})
{'min_size': 2, 'max_size': 4, 'prepare_threshold': None, 'kwargs': None}
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Self, TypedDict, Unpack

from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langmem_vault.db._connection import (
    DEFAULT_POOL_SIZE,
    DEFAULT_PREPARE_THRESHOLD,
    AsyncConn,
    AsyncDatabase,
    Database,
    SyncConn,
    aopen_pool,
    open_pool,
)
from langmem_vault.db._migrations import DEFAULT_SCHEMA, check_schema

# Keys of pool_config our pools decide: "check" is the idle check (with its use stamp, see
# connection.py), "reset" would send every returned connection through a worker thread (a
# thread handoff per operation; connection.py), and "open" is ours to call.
_RESERVED = frozenset({"conninfo", "check", "reset", "open"})


class PoolOptions(TypedDict, total=False):
    """The pool keywords of every ``from_conn_string`` (``**pool_options``), as above."""

    pool_size: int
    prepare_threshold: int | None
    pipeline: bool
    pool_config: Mapping[str, Any] | None


class PoolConfig(TypedDict, total=False):
    """langgraph's ``PoolConfig``; other psycopg_pool options are passed through as well."""

    min_size: int
    max_size: int | None
    kwargs: dict[str, Any]


def pool_arguments(
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    prepare_threshold: int | None = DEFAULT_PREPARE_THRESHOLD,
    pool_config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The arguments of :func:`~langmem_vault.db.open_pool` for these settings (checked)."""
    if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
        raise ValueError(f"pool_size must be an int >= 1, got {pool_size!r}")
    if pool_config is not None and not isinstance(pool_config, Mapping):
        raise TypeError(f"pool_config must be a dict (PoolConfig), got {type(pool_config)}")
    options = dict(pool_config or {})
    if reserved := sorted(_RESERVED & options.keys()):
        raise ValueError(f"pool_config may not set {reserved}: langmem_vault's pool sets them")
    max_size = options.pop("max_size", None)
    args: dict[str, Any] = {
        "min_size": options.pop("min_size", 1),
        "max_size": pool_size if max_size is None else max_size,
        "prepare_threshold": prepare_threshold,
        "kwargs": options.pop("kwargs", None),
    }
    if args["kwargs"] is not None and "prepare_threshold" in args["kwargs"]:
        kwargs = dict(args["kwargs"])
        args["prepare_threshold"] = kwargs.pop("prepare_threshold")
        args["kwargs"] = kwargs
    return {**args, **options}


class LateConfigure:
    """A pool's ``configure`` callback whose work is given once the pool is open: a store warms
    every connection its pool opens (store/_warm.py), but it is built on the pool, after the
    first connections. Runs the caller's own ``configure`` (``pool_config``) first."""

    def __init__(self, first: Callable[[Any], Any] | None = None) -> None:
        self.first = first
        self.then: Callable[[Any], Any] | None = None

    def __call__(self, conn: Any) -> None:
        if self.first is not None:
            self.first(conn)
        if self.then is not None:
            self.then(conn)


class AsyncLateConfigure(LateConfigure):
    """Async twin of :class:`LateConfigure` (both callbacks async)."""

    async def __call__(self, conn: Any) -> None:  # type: ignore[override]
        if self.first is not None:
            await self.first(conn)
        if self.then is not None:
            await self.then(conn)


def late_configured(
    options: PoolOptions, kind: type[LateConfigure] = LateConfigure
) -> tuple[PoolOptions, LateConfigure]:
    """``options`` whose pools run a :class:`LateConfigure` (``kind``) on each new connection,
    and that callback, to be given its work once the pool is open.

    >>> options, hook = late_configured({"pool_size": 2})
    >>> options["pool_config"]["configure"] is hook
    True
    """
    config = dict(options.get("pool_config") or {})
    hook = kind(config.get("configure"))
    return {**options, "pool_config": {**config, "configure": hook}}, hook


@contextmanager
def pooled(
    conn_string: str | None,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    prepare_threshold: int | None = DEFAULT_PREPARE_THRESHOLD,
    pool_config: Mapping[str, Any] | None = None,
    pipeline: bool = False,
) -> Iterator[ConnectionPool[Any]]:
    """Open the pool a ``from_conn_string`` runs on, and close it after the block.

    ``conn_string=None`` means ``$LANGMEM_VAULT_DSN``, else the embedded server.
    """
    del pipeline  # accepted for langgraph compatibility, see the module docstring
    args = pool_arguments(
        pool_size=pool_size, prepare_threshold=prepare_threshold, pool_config=pool_config
    )
    with open_pool(conn_string, **args) as pool:
        yield pool


@asynccontextmanager
async def apooled(
    conn_string: str | None,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    prepare_threshold: int | None = DEFAULT_PREPARE_THRESHOLD,
    pool_config: Mapping[str, Any] | None = None,
    pipeline: bool = False,
) -> AsyncIterator[AsyncConnectionPool[Any]]:
    """Async twin of :func:`pooled`."""
    del pipeline
    args = pool_arguments(
        pool_size=pool_size, prepare_threshold=prepare_threshold, pool_config=pool_config
    )
    async with await aopen_pool(conn_string, **args) as pool:
        yield pool


@contextmanager
def pooled_with_reads(
    conn_string: str | None, read_conn_string: str | None, **options: Unpack[PoolOptions]
) -> Iterator[tuple[ConnectionPool[Any], ConnectionPool[Any] | None]]:
    """The pool on ``conn_string`` and, given ``read_conn_string`` (a streaming replica),
    a pool on that with the same options (``None`` without)."""
    with pooled(conn_string, **options) as pool:
        if read_conn_string is None:
            yield pool, None
        else:
            with pooled(read_conn_string, **options) as reads:
                yield pool, reads


@asynccontextmanager
async def apooled_with_reads(
    conn_string: str | None, read_conn_string: str | None, **options: Unpack[PoolOptions]
) -> AsyncIterator[tuple[AsyncConnectionPool[Any], AsyncConnectionPool[Any] | None]]:
    """Async twin of :func:`pooled_with_reads`."""
    async with apooled(conn_string, **options) as pool:
        if read_conn_string is None:
            yield pool, None
        else:
            async with apooled(read_conn_string, **options) as reads:
                yield pool, reads


def renamed_max_size(options: PoolOptions, max_size: int | None, owner: str) -> PoolOptions:
    """``options`` with the deprecated ``max_size`` keyword ``owner`` took before 0.2 as
    ``pool_size``."""
    if max_size is None:
        return options
    warnings.warn(
        f"{owner}.from_conn_string(max_size=...) is deprecated; pass pool_size=... as every "
        "langmem_vault class takes it",
        DeprecationWarning,
        stacklevel=4,  # the caller's `with` line, past two contextmanager frames
    )
    return {**options, "pool_size": max_size}


class PooledComponent:
    """A component that runs its plans on one connection or pool in one schema (``JobQueue``,
    ``AuditLog``): its constructor, ``conn`` and ``from_conn_string`` in one place."""

    def __init__(self, conn: SyncConn, *, schema: str = DEFAULT_SCHEMA) -> None:
        self.schema = check_schema(schema)
        self.db = Database(conn)

    @property
    def conn(self) -> SyncConn:
        """The pool or connection it runs on (share it with a store or a saver)."""
        return self.db.conn

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str | None = None,
        *,
        schema: str = DEFAULT_SCHEMA,
        max_size: int | None = None,
        **pool_options: Unpack[PoolOptions],
    ) -> Iterator[Self]:
        """Open a pool on ``conn_string`` (or ``$LANGMEM_VAULT_DSN`` or the embedded server)
        with the pool options of this module; ``max_size`` is the deprecated ``pool_size``."""
        options = renamed_max_size(pool_options, max_size, cls.__name__)
        with pooled(conn_string, **options) as pool:
            yield cls(pool, schema=schema)


class AsyncPooledComponent:
    """Async twin of :class:`PooledComponent`."""

    def __init__(self, conn: AsyncConn, *, schema: str = DEFAULT_SCHEMA) -> None:
        self.schema = check_schema(schema)
        self.db = AsyncDatabase(conn)

    @property
    def conn(self) -> AsyncConn:
        """The pool or connection it runs on (share it with a store or a saver)."""
        return self.db.conn

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str | None = None,
        *,
        schema: str = DEFAULT_SCHEMA,
        max_size: int | None = None,
        **pool_options: Unpack[PoolOptions],
    ) -> AsyncIterator[Self]:
        """See :meth:`PooledComponent.from_conn_string`."""
        options = renamed_max_size(pool_options, max_size, cls.__name__)
        async with apooled(conn_string, **options) as pool:
            yield cls(pool, schema=schema)
