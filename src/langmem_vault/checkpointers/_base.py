"""What VaultSaver and AsyncVaultSaver share: argument checks that turn calls into plans.

The two classes only differ in how they run a plan (``Database.run`` or
``await AsyncDatabase.run``), so every method here returns a plan and does no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from langmem_vault.checkpointers._tenancy import TenantCache, new_tenant, read_plan, resolve_plan
from langmem_vault.checkpointers._text import from_db, to_db
from langmem_vault.checkpointers._writes import put_writes_plan
from langmem_vault.db._citus import SAVER_TABLES
from langmem_vault.db._connection import Transaction
from langmem_vault.db._migrations import DEFAULT_SCHEMA, check_schema, migrate_plan
from langmem_vault.db._partitions import check_partitions, partition_plan
from langmem_vault.db._runner import Plan
from langmem_vault.db._steps import Steps

MIGRATION_TRACK = "saver"
#: the saver's tables, each with a tenant column leading its keys (``setup(partitions=N)``)
TABLES = SAVER_TABLES
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
        # Each thread's tenant, once learnt (see _tenancy.py).
        self._tenants = TenantCache()

    def get_next_version(self, current: str | None, channel: None = None) -> str:
        """A version string that sorts after ``current`` (see :func:`next_version`)."""
        return next_version(current)

    # -- plans ---------------------------------------------------------------------------

    def _setup_plan(self, partitions: int = 0) -> Plan[list[int]]:
        check_partitions(partitions)
        applied = yield from migrate_plan(self.schema, MIGRATION_TRACK)
        yield from partition_plan(self.schema, TABLES, partitions)
        return applied

    def _user(self, config: RunnableConfig | None) -> str | None:
        """The user whose ownership of the thread a call checks (None: no check)."""
        return None if self.shared_threads or config is None else user_id_of(config)

    def _owned(
        self,
        config: RunnableConfig | None,
        thread_id: str,
        make: Callable[[str], Plan[T]],
        *,
        reads: bool = False,
    ) -> Plan[T]:
        """``make(tenant)``'s plan under the thread's tenant (known: a write names it), behind
        the owner check unless threads are shared or no user is named. ``reads``: the plan has
        no side effects, so the check may travel with its first query."""
        user_id = self._user(config)
        tenant = yield from resolve_plan(
            self.schema, self._tenants, thread_id, new_tenant(self._creator(config))
        )
        if user_id is None:
            return (yield from make(tenant))
        wrap = owned_read_plan if reads else owned_plan
        return (yield from wrap(self.schema, tenant, thread_id, user_id, make(tenant)))

    def _creator(self, config: RunnableConfig | None) -> str | None:
        """The user a thread that ``config`` creates belongs to (its tenant)."""
        return None if config is None else user_id_of(config)

    def _get_tuple_plan(self, config: RunnableConfig) -> Plan[CheckpointTuple | None]:
        where = target(config, "get_tuple")
        user_id = self._user(config)

        def read(tenant: str) -> Plan[CheckpointTuple | None]:
            # The owner check travels inside the read's one statement.
            return queries.get_tuple_plan(
                self.schema,
                self.serde,
                tenant,
                where,
                self.get_next_version,
                self._decoded,
                user_id,
            )

        default = new_tenant(self._creator(config))
        return read_plan(
            self.schema, self._tenants, where.thread_id, default, read, lambda t: t is not None
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

        def read(tenant: str | None) -> Plan[list[CheckpointTuple]]:
            return queries.list_plan(
                self.schema,
                self.serde,
                tenant,
                where,
                filter=filter,
                before=get_checkpoint_id(before) if before else None,
                limit=limit,
                get_next=self.get_next_version,
                cache=self._decoded,
                user_id=self._user(config),
            )

        if where is None:  # every thread: no tenant to name
            return read(None)
        default = new_tenant(self._creator(config))
        return read_plan(self.schema, self._tenants, where.thread_id, default, read, bool)

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
        return self._owned(
            config,
            where.thread_id,
            lambda tenant: put.put_plan(
                self.schema,
                self.serde,
                tenant,
                config,
                where,
                checkpoint,
                metadata,
                new_versions,
                self._elements,
            ),
        )

    def _put_writes_plan(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Plan[None]:
        where = target(config, "put_writes")
        return self._owned(
            config,
            where.thread_id,
            lambda tenant: put_writes_plan(
                self.schema, self.serde, tenant, where, writes, task_id, task_path
            ),
        )

    def _delete_threads_plan(self, thread_ids: Sequence[str]) -> Plan[maintenance.DeletedThreads]:
        if isinstance(thread_ids, str | bytes):
            raise TypeError("delete: thread_ids must be a list of thread ids, not one string")
        ids = [to_db(str(t)) for t in thread_ids]
        known = [self._tenants.get(t) for t in ids]
        tenants = None if None in known else [t for t in known if t is not None]
        deleted = yield from maintenance.delete_threads_plan(self.schema, ids, tenants)
        for thread_id in ids:
            self._tenants.drop(thread_id)
        return deleted

    def _delete_user_threads_plan(self, user_id: str) -> Plan[maintenance.DeletedThreads]:
        deleted = yield from maintenance.delete_user_threads_plan(self.schema, user_id)
        # Forget every learnt tenant: a deleted thread's id may be made again by another
        # user, whose rows must then go under their own tenant, not the old owner's.
        self._tenants.clear()
        return deleted

    def _delta_plan(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> Plan[dict[str, DeltaChannelHistory]]:
        where = target(config, "get_delta_channel_history")
        return self._owned(
            config,
            where.thread_id,
            lambda tenant: delta.delta_history_plan(
                self.schema, self.serde, tenant, where, channels
            ),
            reads=True,
        )

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
        if idle.thread_ids:
            self._tenants.clear()  # as in _delete_user_threads_plan
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
