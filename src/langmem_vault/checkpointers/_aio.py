"""AsyncVaultSaver: the asyncio Postgres checkpointer (psycopg's async driver, no threads)."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, TypeVar, Unpack

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg_pool import AsyncConnectionPool

from langmem_vault.checkpointers import _maintenance as maintenance
from langmem_vault.checkpointers._base import VaultSaverBase
from langmem_vault.checkpointers._decoded import DEFAULT_MAX_BYTES
from langmem_vault.checkpointers._maintenance import DeletedThreads, RetentionReport, ThreadInfo
from langmem_vault.db._connection import (
    AsyncConn,
    AsyncDatabase,
)
from langmem_vault.db._migrations import DEFAULT_SCHEMA, check_schema
from langmem_vault.db._pools import PoolOptions, apooled
from langmem_vault.db._runner import Plan
from langmem_vault.db._steps import arun_steps

T = TypeVar("T")


class AsyncVaultSaver(VaultSaverBase):
    """The async twin of :class:`~langmem_vault.checkpointers.VaultSaver`.

    Same tables, same SQL, same behaviour; every ``a…`` method awaits psycopg directly.
    The sync methods work from other threads (as langgraph's ``get_state`` in a worker
    thread needs) by scheduling on the saver's event loop.

    >>> async with AsyncVaultSaver.from_conn_string(None) as saver:  # doctest: +SKIP
    ...     await saver.setup()
    ...     graph = builder.compile(checkpointer=saver)
    ...     await graph.ainvoke({"messages": [("user", "hi")]},
    ...                         {"configurable": {"thread_id": "t1", "user_id": "u1"}})
    """

    _db: AsyncDatabase

    def __init__(
        self,
        conn: AsyncConn,
        *,
        schema: str = DEFAULT_SCHEMA,
        serde: SerializerProtocol | None = None,
        shared_threads: bool = False,
        read_cache_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        super().__init__(
            schema=schema,
            serde=serde,
            shared_threads=shared_threads,
            read_cache_bytes=read_cache_bytes,
        )
        self._db = AsyncDatabase(conn)
        self.conn = conn
        # See VaultSaver: reads on our own autocommit pool skip BEGIN/COMMIT.
        self._autocommit_pool: AsyncConnectionPool[Any] | None = None
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str | None = None,
        *,
        schema: str = DEFAULT_SCHEMA,
        serde: SerializerProtocol | None = None,
        shared_threads: bool = False,
        read_cache_bytes: int = DEFAULT_MAX_BYTES,
        **pool_options: Unpack[PoolOptions],
    ) -> AsyncIterator[AsyncVaultSaver]:
        """A saver on its own async pool; ``None`` means ``$LANGMEM_VAULT_DSN`` or embedded.
        Options as in :meth:`VaultSaver.from_conn_string`."""
        check_schema(schema)
        async with apooled(conn_string, **pool_options) as pool:
            saver = cls(
                pool,
                schema=schema,
                serde=serde,
                shared_threads=shared_threads,
                read_cache_bytes=read_cache_bytes,
            )
            saver._autocommit_pool = pool
            yield saver

    async def setup(self, partitions: int = 0) -> None:
        """Create or upgrade the saver's tables (concurrency- and transaction-safe);
        ``partitions`` as in :meth:`VaultSaver.setup`."""
        await self._db.run(self._setup_plan(partitions))

    async def _direct(self, make: Callable[[], Plan[T]]) -> T:
        """See :meth:`VaultSaver._direct`."""
        if self._autocommit_pool is None:
            return await self._db.run(make())
        return await self._db.run_direct(make, binary=True)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``config``, or the latest of its thread and namespace."""
        return await self._direct(lambda: self._get_tuple_plan(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, filtered by thread, namespace, metadata and ``before``."""
        for item in await self._direct(lambda: self._list_plan(config, filter, before, limit)):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint; returns the config that points at it."""
        return await self._direct(
            lambda: self._put_plan(config, checkpoint, metadata, new_versions)
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store the writes a task made against the checkpoint ``config`` names."""
        await self._direct(lambda: self._put_writes_plan(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread: its checkpoints, writes, values and index row."""
        await self._db.run(self._delete_threads_plan([thread_id]))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) created by the given runs."""
        await self._db.run(maintenance.delete_for_runs_plan(self.schema, run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a whole thread (every namespace, checkpoint and write) to a new thread id."""
        await self._db.run(
            maintenance.copy_thread_plan(self.schema, str(source_thread_id), str(target_thread_id))
        )

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """See :meth:`VaultSaver.prune`."""
        await arun_steps(self._prune_steps(thread_ids, strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Writes and seed per DeltaChannel, read with three queries instead of one per step."""
        return await self._direct(lambda: self._delta_plan(config, channels))

    # -- per-user index and retention ----------------------------------------------------

    async def alist_threads(self, user_id: str, *, limit: int = 100) -> builtins.list[ThreadInfo]:
        """The user's threads, most recently active first."""
        return await self._db.run(maintenance.list_threads_plan(self.schema, user_id, limit))

    async def adelete_user_threads(self, user_id: str) -> DeletedThreads:
        """Delete every thread of ``user_id`` in one transaction; returns what was removed."""
        return await self._db.run(self._delete_user_threads_plan(user_id))

    async def aapply_retention(
        self, *, keep_last: int | None = None, idle_longer_than: timedelta | None = None
    ) -> RetentionReport:
        """See :meth:`VaultSaver.apply_retention`."""
        return await arun_steps(self._retention_steps(keep_last, idle_longer_than))

    # -- sync bridges, for sync callers in other threads (e.g. graph.get_state) ----------

    def _bridge(self, coro: Coroutine[Any, Any, T], name: str) -> T:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self.loop is None:
            coro.close()
            raise asyncio.InvalidStateError(
                f"AsyncVaultSaver.{name}() needs the event loop the saver was created in; "
                "create it inside a running loop (async with from_conn_string(...))"
            )
        if running is self.loop:
            coro.close()
            raise asyncio.InvalidStateError(
                f"AsyncVaultSaver.{name}() was called synchronously from its event loop; "
                f"await a{name}() instead, or use VaultSaver for synchronous code"
            )
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._bridge(self.aget_tuple(config), "get_tuple")

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        found = self._direct(lambda: self._list_plan(config, filter, before, limit))
        yield from self._bridge(found, "list")

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._bridge(self.aput(config, checkpoint, metadata, new_versions), "put")

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._bridge(self.aput_writes(config, writes, task_id, task_path), "put_writes")

    def delete_thread(self, thread_id: str) -> None:
        self._bridge(self.adelete_thread(thread_id), "delete_thread")

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return self._bridge(
            self.aget_delta_channel_history(config=config, channels=channels),
            "get_delta_channel_history",
        )

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._bridge(self.adelete_for_runs(run_ids), "delete_for_runs")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._bridge(self.acopy_thread(source_thread_id, target_thread_id), "copy_thread")

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._bridge(self.aprune(thread_ids, strategy=strategy), "prune")
