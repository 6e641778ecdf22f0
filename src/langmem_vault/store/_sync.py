"""VaultStore: a synchronous langgraph ``BaseStore`` on Postgres + pgvector with hybrid search."""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, Unpack

import psycopg
from langgraph.store.base import BaseStore, IndexConfig, Op, Result, TTLConfig

from langmem_vault.db._connection import (
    Database,
    SyncConn,
)
from langmem_vault.db._migrations import DEFAULT_SCHEMA
from langmem_vault.db._pools import PoolOptions, late_configured, pooled_with_reads
from langmem_vault.db._steps import run_steps
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


class VaultStore(VaultStoreBase, BaseStore):
    """A ``BaseStore`` on Postgres + pgvector: hybrid (keyword + vector) search, JSON-typed
    filters, TTL, atomic batches. Switch from langgraph's PostgresStore by changing the import.

    With no connection string it uses ``$LANGMEM_VAULT_DSN`` or an embedded Postgres.

    >>> from langmem_vault import VaultStore
    >>> from langmem_vault.embeddings import local_embeddings
    >>> index = {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}
    >>> with VaultStore.from_conn_string(None, index=index) as store:  # doctest: +SKIP
    ...     store.setup()
    ...     store.put(("users", "u1"), "tea", {"text": "I drink green tea"})
    ...     hits = store.search(("users", "u1"), query="favourite drink")
    ...     hits[0].score > 0.3
    True

    ``SearchItem.score`` is documented in :mod:`langmem_vault.store._ranking`.
    """

    _db: Database

    def __init__(
        self,
        conn: SyncConn,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        schema: str = DEFAULT_SCHEMA,
        ranking: SearchRanking | None = None,
        max_value_bytes: int | None = None,
        read_conn: SyncConn | None = None,
    ) -> None:
        super().__init__(
            index=index, ttl=ttl, schema=schema, ranking=ranking, max_value_bytes=max_value_bytes
        )
        self._db = Database(conn)
        # Reads on a streaming replica, with read-your-writes (store/_replicas.py).
        self._routing = None if read_conn is None else ReadRouting(Database(read_conn))
        self._sweeper: threading.Thread | None = None
        self._stop_sweeper = threading.Event()
        self._closing: dict[weakref.WeakMethod[Callable[[VaultStore], None]], None] = {}

    @property
    def conn(self) -> SyncConn:
        """The pool or connection the store runs on (share it with a JobQueue or a saver)."""
        return self._db.conn

    @classmethod
    @contextmanager
    def from_conn_string(
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
    ) -> Iterator[VaultStore]:
        """Open a pooled store on ``conn_string`` (or the env DSN, or the embedded server).

        ``pool_size``, ``prepare_threshold`` (``None`` for PgBouncer), ``pipeline`` and
        ``pool_config`` (langgraph's ``PoolConfig``) are described in
        :mod:`langmem_vault.db._pools`; every Postgres class takes them.

        ``read_conn_string``: a streaming replica of that server; reads go there, a read
        after this store's write waits for nothing and goes to the primary until the replica
        has replayed it (see :mod:`langmem_vault.store._replicas`). Its pool takes the same
        options.

        Every connection the pools open has the hot reads' statements prepared and planned
        before a search takes it (:mod:`langmem_vault.store._warm`), one of each right away.
        """
        options, hook = late_configured(pool_options)
        with pooled_with_reads(conn_string, read_conn_string, **options) as (pool, reads):
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
            store._warm_pools()
            try:
                yield store
            finally:
                store.close()

    def _warm(self, conn: psycopg.Connection[Any]) -> None:
        """Prepare and plan the hot reads on ``conn`` (store/_warm.py), and learn the tables'
        partitions (store/_routes.py). Never raises: if they fail (a schema of an older
        version), the first searches plan them."""
        try:
            stats = StatsCache()
            Database(conn).run(warm_plan(self.settings, stats), pipeline=True)
            self._stats.routes.adopt(stats.routes)
        except psycopg.Error as exc:
            logger.debug("connection not warmed: %s", exc)

    def _warm_pools(self) -> None:
        """The connections each pool this store opened opens with it (``min_size``: opened
        before the store could give the pool's ``configure`` its work; a connection the pool
        opens later is warmed as it opens)."""
        for pool in self._own_pools:
            with ExitStack() as held:
                for conn in [held.enter_context(pool.connection()) for _ in range(pool.min_size)]:
                    self._warm(conn)

    def setup(self, partitions: int = 0) -> None:
        """Create or migrate the tables (idempotent, safe from several processes at once).

        ``partitions=N`` hash-partitions the items and vectors by tenant (the user a
        namespace belongs to) into N partitions, so one user's rows and vectors are read from
        one partition (docs/scaling.md); tables already partitioned keep their partitions.

        >>> store = VaultStore.from_conn_string(dsn)  # doctest: +SKIP
        >>> store.setup(partitions=8)                 # doctest: +SKIP
        """
        run_steps(self._setup(partitions))
        self._warm_pools()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        prepared = prepare_batch(ops, self.settings)
        with self._search_span(prepared):
            return run_steps(self._batch(prepared))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # A sync store used from async code: run in a thread. Use AsyncVaultStore for real async.
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    def increment(self, increments: Iterable[Increment]) -> int:
        """Add to counter records atomically: ``(namespace, key, {field: amount})`` each.

        Numbers are added to the stored ones (a missing record or field counts from 0),
        ISO timestamps keep the later of stored and given; nothing else of the value changes.
        Concurrent callers, in this process or another, never lose an update. Returns how
        many records were touched. See :mod:`langmem_vault.store._counters`.
        """
        rows = prepare_increments(increments)
        # One statement, autocommitted: no transaction stays open if the caller is cut off.
        n = self._db.run_direct(lambda: increment_plan(self.schema, rows, self.settings.tenants))
        run_steps(self._written())
        return n

    async def aincrement(self, increments: Iterable[Increment]) -> int:
        """:meth:`increment` from async code (in a thread; use AsyncVaultStore for real async)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.increment, list(increments))

    def analyze(self) -> None:
        """Refresh the statistics search uses to weigh keywords by rarity.

        Autovacuum does this on its own as the table changes; call it after a bulk load to
        have the weights at once.
        """
        self._db.run(analyze_plan(self.schema, self._stats))

    def reorder_vectors(self) -> bool:
        """Rebuild the index a user's namespace search reads its vectors from, online
        (``REINDEX INDEX CONCURRENTLY``: reads and writes go on), so each user's index pages
        lie in order on disk again: new memories split them and scatter the split halves, and a
        cold search then reads them one by one (docs/scaling.md, "Keeping the leaves in
        order"). Run it from a schedule. False when the store has no such index (keyword-only,
        or vectors too large for it). Needs a store made by ``from_conn_string`` (REINDEX
        CONCURRENTLY cannot run in a transaction, as a store on a single connection runs it).

        >>> from langmem_vault import VaultStore
        >>> index = {"dims": 4, "embed": lambda texts: [[1.0, 0.0, 0.0, 0.0] for _ in texts]}
        >>> with VaultStore.from_conn_string(None, index=index) as store:
        ...     _ = store.setup()
        ...     store.put(("memories", "u1"), "k1", {"text": "tea"})
        ...     store.reorder_vectors()
        True
        """
        return self._db.run_direct(lambda: reorder_plan(self.schema))

    def reembed(self, namespace_prefix: tuple[str, ...] = (), *, page: int = DEFAULT_PAGE) -> int:
        """Embed every indexed text again with the store's embeddings, in place: after a change
        of embedding model (same ``dims``). Items keep their values and ``updated_at``; a put
        racing with it wins. Runs a page (``page`` vectors) per transaction, and a re-run after
        a crash simply does it again. Returns how many vectors were written.

        >>> store.reembed(("memories",))  # doctest: +SKIP
        1042
        """
        return run_steps(self._reembedding(self._db, namespace_prefix, page))

    def purge_prefixes(self, prefixes: Sequence[tuple[str, ...]], *, analyze: bool = True) -> int:
        """Delete every item under each namespace prefix, expired ones included, with their
        vectors, in one transaction; returns how many items went.

        Searches skip expired items, so deleting what a search finds leaves them behind until
        the TTL sweep: an erase must not. ``analyze`` (default) then refreshes the tables'
        statistics, so ``pg_stats`` (most common words, keys and namespaces, sampled from the
        rows) no longer holds values of the deleted items.

        >>> store.purge_prefixes([("memories", "alice")])  # doctest: +SKIP
        4
        """
        n = self._db.run(lambda: purge_plan(self.schema, prefixes, self.settings.tenants))
        run_steps(self._written())
        if analyze:
            self._db.run(analyze_plan(self.schema, self._stats, vectors=self._vectors))
        return n

    def sweep_ttl(self) -> int:
        """Delete expired items now; returns how many. Expired items are never returned anyway."""
        return self._db.run(lambda: sweep_plan(self.schema))

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> threading.Thread:
        """Sweep expired items in a daemon thread every ``sweep_interval_minutes``."""
        interval = self._sweep_interval(sweep_interval_minutes)
        if self._sweeper is not None and self._sweeper.is_alive():
            return self._sweeper
        self._stop_sweeper.clear()

        def loop() -> None:
            while not self._stop_sweeper.wait(interval):
                try:
                    self.sweep_ttl()
                except Exception:  # a server restart must not end sweeping for good
                    logger.exception("TTL sweep failed; retrying at the next interval")

        self._sweeper = threading.Thread(target=loop, name="vault-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return self._sweeper

    def on_close(self, flush: Callable[[VaultStore], None]) -> None:
        """Have ``flush(store)`` run first when this store closes, once however often it is
        asked: the bookkeeping writers hand over the writes they still hold for it. A bound
        method, held weakly (a writer that is gone has nothing to write)."""
        self._closing[weakref.WeakMethod(flush)] = None

    def close(self) -> None:
        """Write what the bookkeeping writers hold for this store, then stop the TTL sweeper
        thread. A pool the caller passed in stays open (it is theirs); ``from_conn_string``
        closes its own pool on exit, after this."""
        for ref in list(self._closing):
            flush = ref()
            if flush is not None:
                flush(self)
        self._closing.clear()
        self.stop_ttl_sweeper()

    def __enter__(self) -> VaultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; returns True when it has stopped."""
        self._stop_sweeper.set()
        if self._sweeper is None:
            return True
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped
