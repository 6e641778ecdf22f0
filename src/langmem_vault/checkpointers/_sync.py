"""VaultSaver: the synchronous Postgres checkpointer."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
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
from psycopg_pool import ConnectionPool

from langmem_vault.checkpointers import _maintenance as maintenance
from langmem_vault.checkpointers._base import VaultSaverBase
from langmem_vault.checkpointers._decoded import DEFAULT_MAX_BYTES
from langmem_vault.checkpointers._maintenance import DeletedThreads, RetentionReport, ThreadInfo
from langmem_vault.db._connection import (
    Database,
    SyncConn,
)
from langmem_vault.db._migrations import DEFAULT_SCHEMA, check_schema
from langmem_vault.db._pools import PoolOptions, pooled
from langmem_vault.db._runner import Plan
from langmem_vault.db._steps import run_steps

T = TypeVar("T")


class VaultSaver(VaultSaverBase):
    """A LangGraph checkpointer on Postgres that stores long threads compactly.

    Pass a psycopg ``Connection`` or ``ConnectionPool`` as it is (no ``autocommit`` or row
    factory needed; operations then join the caller's transaction if one is open), or use
    :meth:`from_conn_string`. Each operation takes its own pooled connection (no instance
    lock), so threads of one process run in parallel. ``read_cache_bytes`` bounds the cache of
    decoded messages that makes reading a thread again cheap (0 turns it off; see
    :mod:`~langmem_vault.checkpointers._decoded`).

    >>> from langgraph.graph import MessagesState, StateGraph  # doctest: +SKIP
    >>> with VaultSaver.from_conn_string(None) as saver:  # embedded Postgres  # doctest: +SKIP
    ...     saver.setup()
    ...     graph = builder.compile(checkpointer=saver)
    ...     graph.invoke({"messages": [("user", "hi")]},
    ...                  {"configurable": {"thread_id": "t1", "user_id": "u1"}})
    ...     saver.list_threads("u1")[0].title
    'hi'
    """

    _db: Database

    def __init__(
        self,
        conn: SyncConn,
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
        self._db = Database(conn)
        self.conn = conn
        # Set by from_conn_string, whose pool hands out autocommit connections: reads, puts
        # and writes (atomic statement by statement) then need no BEGIN/COMMIT round trips.
        self._autocommit_pool: ConnectionPool[Any] | None = None

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str | None = None,
        *,
        schema: str = DEFAULT_SCHEMA,
        serde: SerializerProtocol | None = None,
        shared_threads: bool = False,
        read_cache_bytes: int = DEFAULT_MAX_BYTES,
        **pool_options: Unpack[PoolOptions],
    ) -> Iterator[VaultSaver]:
        """A saver on its own pool; ``None`` means ``$LANGMEM_VAULT_DSN`` or the embedded server.

        ``prepare_threshold=None`` turns prepared statements off (PgBouncer in transaction mode);
        the pool options are described in :mod:`langmem_vault.db._pools`.
        """
        check_schema(schema)  # before connecting: a bad name should not cost a pool
        with pooled(conn_string, **pool_options) as pool:
            saver = cls(
                pool,
                schema=schema,
                serde=serde,
                shared_threads=shared_threads,
                read_cache_bytes=read_cache_bytes,
            )
            saver._autocommit_pool = pool
            yield saver

    def setup(self, partitions: int = 0) -> None:
        """Create or upgrade the saver's tables. Safe to call from several processes at once
        and inside a caller's transaction.

        ``partitions=N`` hash-partitions the tables by tenant (a thread's owner) into N
        partitions, so one user's threads are read from one partition (docs/scaling.md);
        tables already partitioned keep their partitions.

        >>> saver.setup(partitions=8)                 # doctest: +SKIP
        """
        self._db.run(self._setup_plan(partitions))

    def _direct(self, make: Callable[[], Plan[T]]) -> T:
        """Run a plan whose statements are each atomic and idempotent: on our own autocommit
        pool without a transaction block (and again if the connection was dead); otherwise in
        one transaction, joining the caller's."""
        if self._autocommit_pool is None:
            return self._db.run(make())
        # Binary results: element and write blobs arrive as bytes, not hex text to decode.
        return self._db.run_direct(make, binary=True)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``config``, or the latest of its thread and namespace."""
        return self._direct(lambda: self._get_tuple_plan(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first, filtered by thread, namespace, metadata and ``before``."""
        yield from self._direct(lambda: self._list_plan(config, filter, before, limit))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint; returns the config that points at it."""
        return self._direct(lambda: self._put_plan(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store the writes a task made against the checkpoint ``config`` names."""
        self._direct(lambda: self._put_writes_plan(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread: its checkpoints, writes, values and index row."""
        self._db.run(self._delete_threads_plan([thread_id]))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) created by the given runs."""
        self._db.run(maintenance.delete_for_runs_plan(self.schema, run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a whole thread (every namespace, checkpoint and write) to a new thread id."""
        self._db.run(
            maintenance.copy_thread_plan(self.schema, str(source_thread_id), str(target_thread_id))
        )

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest``: keep each namespace's latest checkpoint; ``delete``: drop threads.

        Each thread is pruned in its own transaction. A thread using a DeltaChannel also keeps
        the older checkpoints its latest value is rebuilt from (langgraph's saver refuses it).
        """
        run_steps(self._prune_steps(thread_ids, strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Writes and seed per DeltaChannel, read with three queries instead of one per step."""
        return self._direct(lambda: self._delta_plan(config, channels))

    # -- per-user index and retention ----------------------------------------------------

    def list_threads(self, user_id: str, *, limit: int = 100) -> builtins.list[ThreadInfo]:
        """The user's threads, most recently active first (title, message count, times)."""
        return self._db.run(maintenance.list_threads_plan(self.schema, user_id, limit))

    def delete_user_threads(self, user_id: str) -> DeletedThreads:
        """Delete every thread of ``user_id`` in one transaction; returns what was removed."""
        return self._db.run(self._delete_user_threads_plan(user_id))

    def apply_retention(
        self, *, keep_last: int | None = None, idle_longer_than: timedelta | None = None
    ) -> RetentionReport:
        """Drop threads idle longer than ``idle_longer_than``; keep the newest ``keep_last``
        checkpoints of each namespace of the others (plus what DeltaChannels rebuild from).
        """
        return run_steps(self._retention_steps(keep_last, idle_longer_than))
