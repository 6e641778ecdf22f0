"""Reads on a streaming replica, with read-your-writes: where a store batch runs.

A store opened with ``read_conn_string=`` (or given ``read_conn=``) sends its read-only
batches (gets, searches, namespace listings, pages: what inject, recall and the service's
searches read) to that replica, and every write to the primary. After each write the store
asks the primary for its WAL position (``pg_current_wal_lsn()``, one more round trip, only
when a replica is configured) and remembers it. A read that follows first asks the replica
whether it has replayed that far (``pg_last_wal_replay_lsn()``): if so it reads there (and
forgets the position), else it reads on the primary. So a turn that writes a memory and then
reads never misses it, whatever the replica's lag; reads that follow no write of this store
object never touch the primary. (Writes by other processes, or by other components of this
one, such as the saver, are seen as soon as the replica has replayed them.)

A read on the replica cannot write the TTL refresh it may call for: it is deferred and
written on the primary after the read (``batch_plan(deferred=...)``).

One sans-IO body (:func:`batch_steps`) for both stores: ``run_steps`` in VaultStore,
``arun_steps`` in AsyncVaultStore.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.store.base import Result

from langmem_vault.db._connection import AsyncDatabase, Database, Direct, Transaction
from langmem_vault.db._runner import Plan, Query
from langmem_vault.db._steps import Steps

__all__ = ["ReadRouting", "batch_steps", "mark_written"]

Db = Database | AsyncDatabase
#: builds the batch's plan; given a list, a read-only plan defers its TTL refreshes to it
MakePlan = Callable[[list[Any] | None], Plan[list[Result]]]


class ReadRouting:
    """The replica a store reads on, and the WAL position of its last write not yet known to
    be replayed there."""

    def __init__(self, replica: Db) -> None:
        self.replica = replica
        self.written: int | None = None

    def wrote(self, lsn: int) -> None:
        # Writes in other threads may report out of order: keep the latest position.
        self.written = lsn if self.written is None else max(self.written, lsn)


def _primary_lsn() -> Plan[int]:
    # pg_lsn minus '0/0' is the position as a number of bytes: comparable in Python.
    rows = yield Query("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS lsn")
    return int((rows or [{}])[0]["lsn"])


def _replayed(lsn: int) -> Plan[bool]:
    # NULL on a server that is not in recovery: not a replica, so it proves nothing.
    rows = yield Query(
        "SELECT coalesce(pg_last_wal_replay_lsn() - '0/0'::pg_lsn >= %(lsn)s, false) AS ok",
        {"lsn": lsn},
    )
    return bool((rows or [{}])[0]["ok"])


def batch_steps(
    primary: Db,
    routing: ReadRouting | None,
    read_only: bool,
    make: MakePlan,
    refresh: Callable[[list[Any]], Plan[None]],
) -> Steps[list[Result]]:
    """Run a store batch: a write on the primary (in a transaction), then note its WAL
    position; a read on the replica when it has replayed this store's last write, else on
    the primary."""
    if not read_only:
        results = yield Transaction(primary, lambda: make(None))
        yield from mark_written(primary, routing)
        return results  # type: ignore[no-any-return]
    if routing is not None:
        pending = routing.written
        if pending is not None:
            if not (yield Direct(routing.replica, lambda: _replayed(pending))):
                return (yield Direct(primary, lambda: make(None)))  # type: ignore[no-any-return]
            if routing.written == pending:  # no newer write meanwhile
                routing.written = None
        later: list[Any] = []

        def on_replica() -> Plan[list[Result]]:
            later.clear()  # a retry on a fresh connection starts again
            return make(later)

        results = yield Direct(routing.replica, on_replica)
        if later:
            yield Transaction(primary, lambda: refresh(later))
        return results  # type: ignore[no-any-return]
    # A read-only batch skips BEGIN and COMMIT: two round trips of the few it takes.
    return (yield Direct(primary, lambda: make(None)))  # type: ignore[no-any-return]


def mark_written(primary: Db, routing: ReadRouting | None) -> Steps[None]:
    """After a write outside ``batch`` (counters, purges): note the primary's position."""
    if routing is not None:
        routing.wrote((yield Direct(primary, _primary_lsn)))
