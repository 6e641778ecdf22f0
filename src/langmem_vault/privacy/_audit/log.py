"""The audit log: who (component, actor) read, injected, cited, edited or deleted which memory.

Rows live in ``{schema}.vault_audit`` (migration track ``audit``). SQL and row parsing are
sans-IO plans; :class:`AuditLog` and :class:`AsyncAuditLog` only run them, so the two drivers
cannot drift apart. ``record`` is one round trip and the events are durable when it returns.
For the chat turn, :mod:`langmem_vault.privacy._audit.buffer` batches events off the hot path.

Every query names a user: the log is read per user (optionally by memory key, action,
component and time range), which is also how a user's own access report is built. The user is
the row's tenant (:mod:`langmem_vault._tenants`), first in every key: with
``setup(partitions=N)`` (or on Citus, docs/citus.md) a user's reads and erase touch one
partition.

>>> with AuditLog.from_conn_string(None) as log:  # doctest: +SKIP
...     log.setup()
...     log.record(AuditEvent("u1", "inject", "inject", memory_key="k1"))
...     [r.action for r in log.query("u1")]
[<AuditAction.INJECT: 'inject'>]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from psycopg import sql

from langmem_vault._run_config import MAX_USER_ID
from langmem_vault.db._migrations import in_schema, migrate_plan
from langmem_vault.db._partitions import check_partitions, partition_plan
from langmem_vault.db._pools import AsyncPooledComponent, PooledComponent
from langmem_vault.db._runner import Plan, Query

__all__ = [
    "AUDIT_TRACK",
    "AsyncAuditLog",
    "AuditAction",
    "AuditEvent",
    "AuditLog",
    "AuditRecord",
]

AUDIT_TRACK = "audit"
MAX_NAME = 100
MAX_KEY = 1024
MAX_DETAIL_BYTES = 8192
MAX_QUERY_LIMIT = 1000


class AuditAction(StrEnum):
    """What was done to a memory (or to a user's data as a whole).

    Example:
        >>> AuditAction("cite") is AuditAction.CITE
        True
    """

    READ = "read"
    INJECT = "inject"
    CITE = "cite"
    CREATE = "create"
    EDIT = "edit"
    DELETE = "delete"
    EXPORT = "export"
    IMPORT = "import"
    ERASE = "erase"
    GATE = "gate"
    CONSENT = "consent"
    #: failed background jobs of the user put back to work (the dead-letter list)
    RETRY = "retry"


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _check_str(name: str, value: object, limit: int, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        raise ValueError(f"audit event: {name} must be a non-empty string, got {value!r}")
    if len(value) > limit:
        raise ValueError(f"audit event: {name} is longer than {limit} characters")
    if "\x00" in value:
        raise ValueError(f"audit event: {name} must not contain NUL characters")


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One thing that happened to a user's memory. Validated on construction.

    ``detail`` is a small JSON object (at most 8 KB): the query asked, the tier granted,
    counts removed. Never put memory text in it: the log must not become a second copy.

    Example:
        >>> AuditEvent("u1", "read", "api", actor="admin@ops", memory_key="k1").action
        <AuditAction.READ: 'read'>
    """

    user_id: str
    action: AuditAction | str
    component: str
    actor: str | None = None
    memory_key: str | None = None
    namespace: tuple[str, ...] | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    at: datetime = field(default_factory=_utcnow)

    def __post_init__(self) -> None:
        _check_str("user_id", self.user_id, MAX_USER_ID)
        try:
            object.__setattr__(self, "action", AuditAction(self.action))
        except ValueError:
            allowed = ", ".join(a.value for a in AuditAction)
            raise ValueError(
                f"audit event: action must be one of {allowed}; got {self.action!r}"
            ) from None
        _check_str("component", self.component, MAX_NAME)
        _check_str("actor", self.actor, MAX_USER_ID, optional=True)
        _check_str("memory_key", self.memory_key, MAX_KEY, optional=True)
        if self.namespace is not None and (
            not isinstance(self.namespace, tuple)
            or not all(isinstance(label, str) and label for label in self.namespace)
        ):
            raise ValueError(
                f"audit event: namespace must be a tuple of non-empty strings, "
                f"got {self.namespace!r}"
            )
        if not isinstance(self.detail, Mapping):
            raise ValueError(f"audit event: detail must be a mapping, got {self.detail!r}")
        try:
            size = len(json.dumps(dict(self.detail)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"audit event: detail is not JSON-serialisable: {exc}") from None
        if size > MAX_DETAIL_BYTES:
            raise ValueError(
                f"audit event: detail is {size} bytes of JSON, the limit is {MAX_DETAIL_BYTES}"
            )
        if not isinstance(self.at, datetime):
            raise ValueError(f"audit event: at must be a datetime, got {self.at!r}")
        if self.at.tzinfo is None:
            object.__setattr__(self, "at", self.at.replace(tzinfo=UTC))


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """A stored audit event, as :meth:`AuditLog.query` returns it."""

    id: int
    at: datetime
    recorded_at: datetime
    user_id: str
    action: AuditAction
    component: str
    actor: str | None
    namespace: tuple[str, ...] | None
    memory_key: str | None
    detail: dict[str, Any]


# --- plans -----------------------------------------------------------------------------------

# One statement for a whole batch: the columns travel as arrays and unnest zips them back
# into rows, so a batch of 500 events costs one round trip and one plan.
# The tenant is the user the event is about (audit/0002): the event's user_id.
_INSERT = """
INSERT INTO {schema}.vault_audit
    (tenant, at, user_id, action, component, actor, namespace, memory_key, detail)
SELECT e.user_id, e.at, e.user_id, e.action, e.component, e.actor, e.namespace, e.memory_key,
       e.detail::jsonb
FROM unnest(%s::timestamptz[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
            %s::text[], %s::text[])
     AS e(at, user_id, action, component, actor, namespace, memory_key, detail)
"""

_SELECT = """
SELECT id, at, recorded_at, user_id, action, component, actor, namespace, memory_key, detail
FROM {schema}.vault_audit WHERE tenant = %s"""

_DELETE_USER = """
WITH d AS (DELETE FROM {schema}.vault_audit WHERE tenant = %s RETURNING 1)
SELECT count(*) AS n FROM d"""

_PURGE = """
WITH d AS (DELETE FROM {schema}.vault_audit WHERE at < %s RETURNING 1)
SELECT count(*) AS n FROM d"""


def setup_plan(schema: str, partitions: int = 0) -> Plan[None]:
    """The audit track's migrations, then (``partitions`` > 0) the table in partitions."""
    check_partitions(partitions)
    yield from migrate_plan(schema, AUDIT_TRACK)
    yield from partition_plan(schema, ("vault_audit",), partitions)


def record_plan(schema: str, events: Sequence[AuditEvent]) -> Plan[int]:
    """Insert ``events`` in one statement; returns how many were written."""
    for event in events:
        if not isinstance(event, AuditEvent):
            raise TypeError(f"expected AuditEvent, got {type(event).__name__}")
    if not events:
        return 0
    columns: list[list[Any]] = [[] for _ in range(8)]
    for e in events:
        row = (
            e.at,
            e.user_id,
            str(e.action),
            e.component,
            e.actor,
            ".".join(e.namespace) if e.namespace else None,
            e.memory_key,
            json.dumps(dict(e.detail)),
        )
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    yield Query(in_schema(_INSERT, schema), columns)
    return len(events)


def _record(row: dict[str, Any]) -> AuditRecord:
    ns = row["namespace"]
    return AuditRecord(
        id=row["id"],
        at=row["at"],
        recorded_at=row["recorded_at"],
        user_id=row["user_id"],
        action=AuditAction(row["action"]),
        component=row["component"],
        actor=row["actor"],
        namespace=tuple(ns.split(".")) if ns else None,
        memory_key=row["memory_key"],
        detail=row["detail"],
    )


def query_plan(
    schema: str,
    user_id: str,
    *,
    memory_key: str | None = None,
    actions: Iterable[AuditAction | str] | None = None,
    component: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 100,
    before_id: int | None = None,
) -> Plan[list[AuditRecord]]:
    """A user's events, newest first. ``since`` is inclusive, ``until`` exclusive.

    Page with ``before_id=records[-1].id``.
    """
    _check_str("user_id", user_id, MAX_USER_ID)
    if not isinstance(limit, int) or not 1 <= limit <= MAX_QUERY_LIMIT:
        raise ValueError(f"limit must be an int in 1..{MAX_QUERY_LIMIT}, got {limit!r}")
    parts: list[sql.Composable] = [in_schema(_SELECT, schema)]
    params: list[Any] = [user_id]
    if memory_key is not None:
        parts.append(sql.SQL(" AND memory_key = %s"))
        params.append(memory_key)
    if actions is not None:
        wanted = [str(AuditAction(a)) for a in actions]
        parts.append(sql.SQL(" AND action = ANY(%s)"))
        params.append(wanted)
    if component is not None:
        parts.append(sql.SQL(" AND component = %s"))
        params.append(component)
    if since is not None:
        parts.append(sql.SQL(" AND at >= %s"))
        params.append(since)
    if until is not None:
        parts.append(sql.SQL(" AND at < %s"))
        params.append(until)
    if before_id is not None:
        parts.append(sql.SQL(" AND id < %s"))
        params.append(before_id)
    parts.append(sql.SQL(" ORDER BY at DESC, id DESC LIMIT %s"))
    params.append(limit)
    rows = yield Query(sql.Composed(parts), params)
    return [_record(r) for r in rows or []]


def delete_user_plan(schema: str, user_id: str) -> Plan[int]:
    """Delete every event of ``user_id`` (part of erase); returns how many."""
    _check_str("user_id", user_id, MAX_USER_ID)
    rows = yield Query(in_schema(_DELETE_USER, schema), (user_id,))
    return int(rows[0]["n"]) if rows else 0


def purge_plan(schema: str, older_than: timedelta) -> Plan[int]:
    """Delete events older than ``older_than`` (retention); returns how many."""
    if not isinstance(older_than, timedelta) or older_than < timedelta(0):
        raise ValueError(f"older_than must be a non-negative timedelta, got {older_than!r}")
    rows = yield Query(in_schema(_PURGE, schema), (_utcnow() - older_than,))
    return int(rows[0]["n"]) if rows else 0


def _events(events: AuditEvent | Iterable[AuditEvent]) -> list[AuditEvent]:
    return [events] if isinstance(events, AuditEvent) else list(events)


# --- drivers ---------------------------------------------------------------------------------
#
# Every plan here is one statement, atomic on its own. On a pool the drivers skip the explicit
# BEGIN/COMMIT that Database.run adds (two round trips of the three a one-event record costs);
# a caller's single connection still goes through Database (its lock and transaction).

T = TypeVar("T")


class AuditLog(PooledComponent):
    """Sync audit log on a psycopg connection or pool.

    >>> log = AuditLog(open_pool())  # doctest: +SKIP
    >>> log.setup()                                    # doctest: +SKIP
    >>> log.record(AuditEvent("u1", "delete", "api", actor="support"))  # doctest: +SKIP
    1
    """

    def setup(self, partitions: int = 0) -> None:
        """Create or migrate the audit table (idempotent); with ``partitions``, hash-partition
        it by tenant (as the store's and the saver's ``setup``)."""
        self.db.run(setup_plan(self.schema, partitions))

    def _one(self, make: Callable[[], Plan[T]]) -> T:
        # Every audit plan is one statement: no transaction block needed.
        return self.db.run_direct(make)

    def record(self, events: AuditEvent | Iterable[AuditEvent]) -> int:
        """Write one or many events in one statement; durable when this returns."""
        return self._one(lambda: record_plan(self.schema, _events(events)))

    def query(self, user_id: str, **filters: Any) -> list[AuditRecord]:
        """A user's events, newest first; filters as in :func:`query_plan`."""
        return self._one(lambda: query_plan(self.schema, user_id, **filters))

    def delete_user(self, user_id: str) -> int:
        """Delete the user's events; returns how many."""
        return self._one(lambda: delete_user_plan(self.schema, user_id))

    def purge(self, older_than: timedelta) -> int:
        """Delete events older than ``older_than``; returns how many."""
        return self._one(lambda: purge_plan(self.schema, older_than))


class AsyncAuditLog(AsyncPooledComponent):
    """Async twin of :class:`AuditLog`.

    >>> async with AsyncAuditLog.from_conn_string(None) as log:  # doctest: +SKIP
    ...     await log.setup()
    ...     await log.record(AuditEvent("u1", "cite", "respond", memory_key="k1"))
    1
    """

    async def setup(self, partitions: int = 0) -> None:
        """See :meth:`AuditLog.setup`."""
        await self.db.run(setup_plan(self.schema, partitions))

    async def _one(self, make: Callable[[], Plan[T]]) -> T:
        return await self.db.run_direct(make)

    async def record(self, events: AuditEvent | Iterable[AuditEvent]) -> int:
        """See :meth:`AuditLog.record`."""
        return await self._one(lambda: record_plan(self.schema, _events(events)))

    async def query(self, user_id: str, **filters: Any) -> list[AuditRecord]:
        """See :meth:`AuditLog.query`."""
        return await self._one(lambda: query_plan(self.schema, user_id, **filters))

    async def delete_user(self, user_id: str) -> int:
        """See :meth:`AuditLog.delete_user`."""
        return await self._one(lambda: delete_user_plan(self.schema, user_id))

    async def purge(self, older_than: timedelta) -> int:
        """See :meth:`AuditLog.purge`."""
        return await self._one(lambda: purge_plan(self.schema, older_than))
