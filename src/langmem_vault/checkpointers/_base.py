"""What VaultSaver and AsyncVaultSaver share: argument checks that turn calls into plans.

The two classes only differ in how they run a plan (``Database.run`` or
``await AsyncDatabase.run``), so every method here returns a plan and does no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    get_checkpoint_id,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langmem_vault.checkpointers import _delta as delta
from langmem_vault.checkpointers import _maintenance as maintenance
from langmem_vault.checkpointers import _put as put
from langmem_vault.checkpointers import _queries as queries
from langmem_vault.checkpointers._config import next_version, scope, target, user_id_of
from langmem_vault.checkpointers._decoded import DEFAULT_MAX_BYTES, DecodedCache
from langmem_vault.checkpointers._elements import ElementCache
from langmem_vault.checkpointers._owners import owned_plan, owned_read_plan
from langmem_vault.checkpointers._text import from_db, to_db
from langmem_vault.checkpointers._writes import put_writes_plan
from langmem_vault.db._connection import Transaction
from langmem_vault.db._migrations import DEFAULT_SCHEMA, check_schema, migrate_plan
from langmem_vault.db._runner import Plan
from langmem_vault.db._steps import Steps

MIGRATION_TRACK = "saver"
PRUNE_STRATEGIES = ("keep_latest", "delete")

T = TypeVar("T")


class VaultSaverBase(BaseCheckpointSaver[str]):
    """Plans for every saver operation; subclasses run them sync or async."""

    schema: str
    _db: Any  # Database in VaultSaver, AsyncDatabase in AsyncVaultSaver

    def __init__(
        self,
        *,
        schema: str = DEFAULT_SCHEMA,
        serde: SerializerProtocol | None = None,
        shared_threads: bool = False,
        read_cache_bytes: int = DEFAULT_MAX_BYTES,
    ):
        super().__init__(serde=serde)
        self.schema = check_schema(schema)
        # False: a thread's owner (its first user_id) alone may use it (see owners.py).
        self.shared_threads = shared_threads
        # Element ids this saver learnt per thread, so most puts skip one round trip.
        self._elements = ElementCache()
        # Decoded messages by content hash: a thread read turn after turn decodes each once.
        self._decoded = DecodedCache(read_cache_bytes)

    def get_next_version(self, current: str | None, channel: None = None) -> str:
        """A version string that sorts after ``current`` (see :func:`next_version`)."""
        return next_version(current)

    # -- plans ---------------------------------------------------------------------------

    def _setup_plan(self) -> Plan[list[int]]:
        return migrate_plan(self.schema, MIGRATION_TRACK)

    def _user(self, config: RunnableConfig | None) -> str | None:
        """The user whose ownership of the thread a call checks (None: no check)."""
        return None if self.shared_threads or config is None else user_id_of(config)

    def _owned(
        self, config: RunnableConfig | None, thread_id: str, plan: Plan[T], *, reads: bool = False
    ) -> Plan[T]:
        """``plan`` behind the owner check, unless threads are shared or no user is named.
        ``reads``: the plan has no side effects, so the check may travel with its first query."""
        user_id = self._user(config)
        if user_id is None:
            return plan
        wrap = owned_read_plan if reads else owned_plan
        return wrap(self.schema, thread_id, user_id, plan)

    def _get_tuple_plan(self, config: RunnableConfig) -> Plan[CheckpointTuple | None]:
        where = target(config, "get_tuple")
        # The owner check travels inside the read's one statement.
        return queries.get_tuple_plan(
            self.schema, self.serde, where, self.get_next_version, self._decoded, self._user(config)
        )

    def _list_plan(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> Plan[list[CheckpointTuple]]:
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise ValueError(f"list: limit must be a non-negative int or None, got {limit!r}")
        if filter is not None and not isinstance(filter, dict):
            raise TypeError("list: filter must be a dict of metadata keys and values")
        where = scope(config)
        return queries.list_plan(
            self.schema,
            self.serde,
            where,
            filter=filter,
            before=get_checkpoint_id(before) if before else None,
            limit=limit,
            get_next=self.get_next_version,
            cache=self._decoded,
            user_id=self._user(config),
        )

    def _put_plan(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Plan[RunnableConfig]:
        where = target(config, "put")
        if not isinstance(checkpoint, dict) or not checkpoint.get("id"):
            raise ValueError("put: checkpoint['id'] is required")
        plan = put.put_plan(
            self.schema,
            self.serde,
            config,
            where,
            checkpoint,
            metadata,
            new_versions,
            self._elements,
        )
        return self._owned(config, where.thread_id, plan)

    def _put_writes_plan(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Plan[None]:
        where = target(config, "put_writes")
        plan = put_writes_plan(self.schema, self.serde, where, writes, task_id, task_path)
        return self._owned(config, where.thread_id, plan)

    def _delete_threads_plan(self, thread_ids: Sequence[str]) -> Plan[maintenance.DeletedThreads]:
        if isinstance(thread_ids, str | bytes):
            raise TypeError("delete: thread_ids must be a list of thread ids, not one string")
        return maintenance.delete_threads_plan(self.schema, [to_db(str(t)) for t in thread_ids])

    def _delta_plan(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> Plan[dict[str, DeltaChannelHistory]]:
        where = target(config, "get_delta_channel_history")
        plan = delta.delta_history_plan(self.schema, self.serde, where, channels)
        return self._owned(config, where.thread_id, plan, reads=True)

    @staticmethod
    def _prune_ids(thread_ids: Sequence[str], strategy: str) -> list[str]:
        if strategy not in PRUNE_STRATEGIES:
            raise ValueError(
                f"prune: unknown strategy {strategy!r}; use one of {', '.join(PRUNE_STRATEGIES)}"
            )
        if isinstance(thread_ids, str | bytes):
            raise TypeError("prune: thread_ids must be a list of thread ids, not one string")
        return sorted({to_db(str(t)) for t in thread_ids})

    # -- operations over several transactions: steps the sync and async savers both run --

    def _prune_steps(self, thread_ids: Sequence[str], strategy: str) -> Steps[None]:
        ids = self._prune_ids(thread_ids, strategy)
        if not ids:
            return
        if strategy == "delete":
            yield Transaction(self._db, self._delete_threads_plan(ids))
            return
        for thread_id in ids:  # a transaction per thread: a long prune holds no lock for long
            yield Transaction(self._db, maintenance.trim_thread_plan(self.schema, thread_id, 1))

    def _retention_steps(
        self, keep_last: int | None, idle_longer_than: timedelta | None
    ) -> Steps[maintenance.RetentionReport]:
        maintenance.check_retention(keep_last, idle_longer_than)
        idle = maintenance.DeletedThreads()
        if idle_longer_than is not None:
            idle = yield Transaction(
                self._db, maintenance.idle_threads_plan(self.schema, idle_longer_than)
            )
        deleted, trimmed = idle.checkpoints, []
        if keep_last is not None:
            long_ids = yield Transaction(
                self._db, maintenance.long_threads_plan(self.schema, keep_last)
            )
            for thread_id in long_ids:
                n = yield Transaction(
                    self._db, maintenance.trim_thread_plan(self.schema, thread_id, keep_last)
                )
                if n:
                    trimmed.append(from_db(thread_id))
                    deleted += n
        return maintenance.RetentionReport(idle.thread_ids, deleted, trimmed)
