"""AsyncVaultStore: the async twin of VaultStore, on an async pool (no thread hop per call)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from typing import Any, TypeVar, Unpack

import psycopg
from langgraph.store.base import BaseStore, IndexConfig, Op, Result, TTLConfig

from langmem_vault.db._connection import (
    AsyncConn,
    AsyncDatabase,
)
from langmem_vault.db._migrations import DEFAULT_SCHEMA
from langmem_vault.db._pools import (
    AsyncLateConfigure,
    PoolOptions,
    apooled_with_reads,
    late_configured,
)
from langmem_vault.db._steps import arun_steps
from langmem_vault.store._base import VaultStoreBase
from langmem_vault.store._counters import Increment, increment_plan, prepare_increments
from langmem_vault.store._lexemes import StatsCache
from langmem_vault.store._plans import (
    analyze_plan,
    purge_plan,
    reorder_plan,
    sweep_plan,
)
from langmem_vault.store._prepare import prepare_batch
from langmem_vault.store._ranking import SearchRanking
from langmem_vault.store._reembed import DEFAULT_PAGE
from langmem_vault.store._replicas import ReadRouting
from langmem_vault.store._warm import warm_plan

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: how long :meth:`AsyncVaultStore.close` waits for background writes before cancelling them
CLOSE_WAIT_SECONDS = 10.0


class AsyncVaultStore(VaultStoreBase, BaseStore):
    """Async ``BaseStore`` on Postgres + pgvector; same behaviour as :class:`VaultStore`.

    >>> from langmem_vault import AsyncVaultStore
    >>> async def main():  # doctest: +SKIP
    ...     async with AsyncVaultStore.from_conn_string(None) as store:
    ...         await store.setup()
    ...         await store.aput(("users", "u1"), "tea", {"text": "I drink green tea"})
    ...         return await store.asearch(("users", "u1"), query="green tea")
    """

    _db: AsyncDatabase

    def __init__(
        self,
        conn: AsyncConn,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        schema: str = DEFAULT_SCHEMA,
        ranking: SearchRanking | None = None,
        max_value_bytes: int | None = None,
        read_conn: AsyncConn | None = None,
    ) -> None:
        super().__init__(
            index=index, ttl=ttl, schema=schema, ranking=ranking, max_value_bytes=max_value_bytes
        )
        self._db = AsyncDatabase(conn)
        # Reads on a streaming replica, with read-your-writes (store/_replicas.py).
        self._routing = None if read_conn is None else ReadRouting(AsyncDatabase(read_conn))
        self._sweeper: asyncio.Task[None] | None = None
        self._writes: set[asyncio.Task[Any]] = set()
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    @property
    def conn(self) -> AsyncConn:
        """The pool or connection the store runs on (share it with a JobQueue or a saver)."""
        return self._db.conn

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str | None = None,
        *,
        schema: str = DEFAULT_SCHEMA,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        ranking: SearchRanking | None = None,
        max_value_bytes: int | None = None,
        read_conn_string: str | None = None,
        **pool_options: Unpack[PoolOptions],
    ) -> AsyncIterator[AsyncVaultStore]:
        """Open a pooled async store on ``conn_string`` (or the env DSN, or embedded);
        the options are those of :meth:`VaultStore.from_conn_string` (``read_conn_string``
        too)."""
        options, hook = late_configured(pool_options, AsyncLateConfigure)
        pools = apooled_with_reads(conn_string, read_conn_string, **options)
        async with pools as (pool, reads):
            store = cls(
                pool,
                read_conn=reads,
                index=index,
                ttl=ttl,
                schema=schema,
                ranking=ranking,
                max_value_bytes=max_value_bytes,
            )
            hook.then = store._warm
            store._own_pools = (pool,) if reads is None else (pool, reads)
            await store._warm_pools()
            try:
                yield store
            finally:
                await store.close()

    async def _warm(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """See :meth:`VaultStore._warm`."""
        try:
            stats = StatsCache()
            await AsyncDatabase(conn).run(warm_plan(self.settings, stats), pipeline=True)
            self._stats.routes.adopt(stats.routes)
        except psycopg.Error as exc:
            logger.debug("connection not warmed: %s", exc)

    async def _warm_pools(self) -> None:
        """See :meth:`VaultStore._warm_pools`."""
        for pool in self._own_pools:
            async with AsyncExitStack() as held:
                conns = [
                    await held.enter_async_context(pool.connection()) for _ in range(pool.min_size)
                ]
                for conn in conns:
                    await self._warm(conn)

    async def setup(self, partitions: int = 0) -> None:
        """Create or migrate the tables (idempotent, safe from several processes at once).

        ``partitions=N`` hash-partitions the items and vectors by tenant (the user a
        namespace belongs to) into N partitions, so one user's rows and vectors are read from
        one partition (docs/scaling.md); tables already partitioned keep their partitions.

        >>> await store.setup(partitions=8)  # doctest: +SKIP
        """
        await arun_steps(self._setup(partitions))
        await self._warm_pools()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        prepared = prepare_batch(ops, self.settings)
        with self._search_span(prepared):
            return await arun_steps(self._batch(prepared))

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Sync access from another thread (e.g. a sync graph node), run on the store's loop."""
        return self._on_loop(self.abatch(list(ops)))

    async def aincrement(self, increments: Iterable[Increment]) -> int:
        """Add to counter records atomically (see :meth:`VaultStore.increment`)."""
        rows = prepare_increments(increments)
        # One statement, autocommitted: no transaction stays open if the caller is cut off.
        n = await self._db.run_direct(
            lambda: increment_plan(self.schema, rows, self.settings.tenants)
        )
        await arun_steps(self._written())
        return n

    def increment(self, increments: Iterable[Increment]) -> int:
        """Sync :meth:`aincrement` from another thread, run on the store's loop."""
        return self._on_loop(self.aincrement(list(increments)))

    def _on_loop(self, work: Coroutine[Any, Any, T]) -> T:
        loop = self._loop
        try:
            if loop is None:
                raise RuntimeError(
                    "sync calls to AsyncVaultStore run on the event loop the store was created "
                    "or first used in, and there is none yet; from sync code use VaultStore"
                )
            try:
                running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                raise RuntimeError(
                    "synchronous calls to AsyncVaultStore from its own event loop would "
                    "deadlock; use the a-prefixed methods (aget, asearch, aput...)"
                )
        except RuntimeError:
            work.close()  # never awaited: close it so Python does not warn
            raise
        return asyncio.run_coroutine_threadsafe(work, loop).result()

    async def analyze(self) -> None:
        """Refresh the statistics search uses to weigh keywords by rarity (see VaultStore)."""
        await self._db.run(analyze_plan(self.schema, self._stats))

    async def reorder_vectors(self) -> bool:
        """Async twin of :meth:`VaultStore.reorder_vectors`."""
        return await self._db.run_direct(lambda: reorder_plan(self.schema))

    async def reembed(
        self, namespace_prefix: tuple[str, ...] = (), *, page: int = DEFAULT_PAGE
    ) -> int:
        """Async twin of :meth:`VaultStore.reembed`."""
        return await arun_steps(self._reembedding(self._db, namespace_prefix, page))

    async def purge_prefixes(
        self, prefixes: Sequence[tuple[str, ...]], *, analyze: bool = True
    ) -> int:
        """Async twin of :meth:`VaultStore.purge_prefixes`."""
        n = await self._db.run(lambda: purge_plan(self.schema, prefixes, self.settings.tenants))
        await arun_steps(self._written())
        if analyze:
            await self._db.run(analyze_plan(self.schema, self._stats, vectors=self._vectors))
        return n

    async def sweep_ttl(self) -> int:
        """Delete expired items now; returns how many."""
        return await self._db.run(lambda: sweep_plan(self.schema))

    async def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Sweep expired items in a background task every ``sweep_interval_minutes``."""
        interval = self._sweep_interval(sweep_interval_minutes)
        if self._sweeper is not None and not self._sweeper.done():
            return self._sweeper

        async def loop() -> None:
            while True:
                await asyncio.sleep(interval)
                try:
                    await self.sweep_ttl()
                except Exception:  # a server restart must not end sweeping for good
                    logger.exception("TTL sweep failed; retrying at the next interval")

        self._sweeper = asyncio.create_task(loop(), name="vault-ttl-sweeper")
        return self._sweeper

    def spawn_write(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work``, a write off the caller's path (e.g. accounting), as a task that
        :meth:`close` waits for: it never outlives the store, nor runs on a closed pool."""
        task = asyncio.get_running_loop().create_task(work)
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    async def close(self, timeout: float = CLOSE_WAIT_SECONDS) -> None:
        """Finish the writes of :meth:`spawn_write` (cancelling, with a warning, those still
        running after ``timeout`` seconds) and stop the TTL sweeper (see
        :meth:`VaultStore.close`)."""
        if writes := set(self._writes):
            _, late = await asyncio.wait(writes, timeout=timeout)
            for task in late:
                task.cancel()
            if late:
                logger.warning("store closed: cancelled %d background writes", len(late))
                await asyncio.wait(late)
        await self.stop_ttl_sweeper()

    async def __aenter__(self) -> AsyncVaultStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        if self._sweeper is None:
            return True
        self._sweeper.cancel()
        with suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._sweeper), timeout)
        stopped = self._sweeper.done()
        if stopped:
            self._sweeper = None
        return stopped
