"""store/0008, the online half of store/0007's page time column (docs/upgrading.md): fill
``store_items.page_at`` for the rows written before the column's trigger existed, build its
index, and swap it in for the expression index of store/0006.

Run on a pool (``concurrently=True``), each step is short and commits on its own: the fill
walks each table (or partition) by ranges of heap pages (a TID range scan: each batch reads
its pages once, however far the walk has gone), so a writer waits at most for one batch's row
locks, and only when it updates a row of that batch; the index is built ``CONCURRENTLY``, one
partition at a time on a partitioned table (Postgres builds no partitioned index
concurrently), then attached; the old index is dropped (``CONCURRENTLY`` when the table is not
partitioned), and in one short transaction the new one takes its name and the migration is
recorded, which is when pages start to order by the column (store/_page_plan.py). On a
single connection (``concurrently=False``) the same steps run inside setup()'s transaction.

Every step can run again: an interrupted run leaves rows already filled (skipped), an invalid
index (dropped and built again) or a built index not yet swapped in (kept).
"""

from __future__ import annotations

from langmem_vault.db._online_index import BRIEF_LOCK, LEAVES, build_index_plan
from langmem_vault.db._runner import Plan, Query

__all__ = ["FILL_BLOCKS", "page_at_plan"]

#: heap pages a fill batch updates (about 8 rows each at 1 kB a row): a batch holds its rows'
#: locks for about 0.1 s on the build machine (bench/page_at_online.py: each row's update
#: goes into every index of the table, the two GIN ones too)
FILL_BLOCKS = 64
_COLUMNS = "(tenant, prefix, page_at, key) INCLUDE (expires_at)"
_NEW, _OLD, _KEPT = (
    "store_items_page_at_idx",
    "store_items_item_time_idx",
    ("store_items_prefix_created_idx"),
)

_STATE = """
SELECT coalesce(pg_get_indexdef(to_regclass(%(kept)s)) LIKE '%%page_at%%', false) AS done,
       (SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(%(table)s)) AS partitioned"""


def page_at_plan(schema: str, record: Query, *, concurrently: bool) -> Plan[None]:
    """Fill, index and swap (see the module); ``record`` notes the migration as applied, in
    the swap's transaction. ``schema`` is checked by the caller (db/_online.py)."""
    table = f"{schema}.store_items"
    (state,) = yield Query(_STATE, {"kept": f"{schema}.{_KEPT}", "table": table})
    if state["done"]:  # the first form of store/0007 (a generated column)
        yield record
        return None
    yield from _fill(schema, table, concurrently)
    yield from build_index_plan(
        schema, table, _NEW, _COLUMNS, concurrently=concurrently, partitioned=state["partitioned"]
    )
    # a row no batch reached (none should: see _fill) is filled before pages rely on it
    yield Query(
        f"UPDATE {table} SET page_at = {schema}.item_time(value, created_at) WHERE page_at IS NULL"
    )
    yield from _swap(schema, record, concurrently, state["partitioned"])
    return None


def _fill(schema: str, table: str, concurrently: bool) -> Plan[None]:
    """Rows written before the trigger. A row written since has its time from the trigger,
    and a row updated since too (wherever the update moved it), so the pages each table had
    when the walk began hold every row left to fill."""
    fill = f"SET page_at = {schema}.item_time(value, created_at) WHERE page_at IS NULL"
    if not concurrently:
        yield Query(f"UPDATE {table} {fill}")
        return None
    for leaf in (yield Query(LEAVES, {"table": table})) or []:
        for first in range(0, leaf["blocks"], FILL_BLOCKS):
            yield Query(
                f"UPDATE {leaf['leaf']} {fill} AND ctid >= %(first)s::tid AND ctid < %(end)s::tid",
                {"first": f"({first},0)", "end": f"({first + FILL_BLOCKS},0)"},
            )
    return None


def _swap(schema: str, record: Query, concurrently: bool, partitioned: bool) -> Plan[None]:
    """The old index goes, the new one takes its name, and the migration is recorded. The
    old one goes first, so a run stopped at any point leaves no index behind; a store still
    paging by the expression (until it sees the record) walks without it for that moment."""
    if concurrently and not partitioned:
        yield Query(f"DROP INDEX CONCURRENTLY IF EXISTS {schema}.{_KEPT}")
    if concurrently:
        yield Query("BEGIN")
    # Postgres drops no partitioned index concurrently: this takes the table's lock for a
    # moment, and gives up after BRIEF_LOCK (setup() raises; its next run does the swap)
    # rather than queue every reader and writer behind a long transaction
    yield Query(f"SET LOCAL lock_timeout = '{BRIEF_LOCK}'")
    yield Query(f"DROP INDEX IF EXISTS {schema}.{_KEPT}")
    yield Query(f"ALTER INDEX {schema}.{_NEW} RENAME TO {_KEPT}")
    yield record
    if concurrently:
        yield Query("COMMIT")
    return None
