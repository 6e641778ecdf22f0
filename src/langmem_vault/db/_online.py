"""Online migrations: the steps of a track that must not hold a large table's lock for long
(a batched fill, ``CREATE INDEX CONCURRENTLY``), run after the track's other migrations and
outside their transaction (db/_migrations.py: a file whose first line is ``-- online``).

Run on a pool connection of its own (``Database.run_direct(..., session=True)``) with
``concurrently=True``: each step commits on its own, and a session advisory lock keeps a
second process from running the same steps at once (it skips them: the first one finishes
them). Each step records its migration itself, in the transaction that makes its result
visible. On a caller's single connection, or when the table is empty, they run inside
setup()'s transaction instead (``concurrently=False``), under its transaction lock.
"""

from __future__ import annotations

from collections.abc import Callable

from langmem_vault.db._migrations import (
    ADVISORY_LOCK_KEY,
    applied_plan,
    check_schema,
    load_migrations,
    record_query,
)
from langmem_vault.db._page_at import page_at_plan
from langmem_vault.db._rank_index import rank_index_plan
from langmem_vault.db._runner import Plan, Query
from langmem_vault.db._status_counts_index import status_counts_plan
from langmem_vault.db._status_index import status_index_plan

__all__ = ["online_plan"]

#: not setup()'s lock: another process's setup() goes on (it skips the steps) while one
#: process runs them for minutes
ONLINE_LOCK_KEY = ADVISORY_LOCK_KEY + 1
#: each online migration's step, by file name: (schema, its record, concurrently)
STEPS: dict[str, Callable[..., Plan[None]]] = {
    "0008_page_at_index.sql": page_at_plan,
    "0009_rank_index.sql": rank_index_plan,
    "0010_status_candidates_idx.sql": status_index_plan,
    "0011_status_counts_idx.sql": status_counts_plan,
}


def online_plan(schema: str, track: str, *, concurrently: bool) -> Plan[list[int]]:
    """Run the pending online migrations of ``track``; returns the versions applied (none
    when another process holds the lock: it is running them)."""
    s = check_schema(schema)
    pending = [m for m in load_migrations(track) if m.online]
    done = yield from applied_plan(s, track)
    pending = [m for m in pending if m.version not in done]
    if not pending:
        return []
    if concurrently:
        (row,) = yield Query("SELECT pg_try_advisory_lock(%s) AS mine", (ONLINE_LOCK_KEY,))
        if not row["mine"]:
            return []
        # another process may have finished them between the read and the lock
        done = yield from applied_plan(s, track)
    applied = []
    for migration in pending:
        if migration.version not in done:
            yield from STEPS[migration.name](
                s, record_query(s, migration), concurrently=concurrently
            )
            applied.append(migration.version)
    if concurrently:
        yield Query("SELECT pg_advisory_unlock(%s)", (ONLINE_LOCK_KEY,))
    return applied
