"""An online migration's index on a large table, built without blocking its writers: ``CREATE
INDEX CONCURRENTLY`` (outside any transaction), one partition at a time on a partitioned
table (Postgres builds no partitioned index concurrently: the parent's is made ``ON ONLY``,
invalid until each partition's is attached: both take the table's lock for a moment, and
give up after :data:`BRIEF_LOCK` rather than queue every writer behind an open transaction;
setup() then raises, and its next run goes on from there). Every step can run again: an
interrupted build's invalid index is dropped and built again, a finished one is kept. On a
single connection (``concurrently=False``, inside setup()'s transaction) it is one plain
``CREATE INDEX``."""

from __future__ import annotations

from langmem_vault.db._runner import Plan, Query

__all__ = ["BRIEF_LOCK", "LEAVES", "briefly", "build_index_plan", "is_partitioned"]

#: how long a statement that takes a large table's lock for a moment may wait for the open
#: transactions before it: while it waits, every new reader or writer queues behind it
BRIEF_LOCK = "2s"

# the table, or its partitions (pg_partition_tree names no table that is not partitioned)
LEAVES = """
SELECT c.oid::regclass::text AS leaf, c.relname::text AS name,
       pg_relation_size(c.oid) / current_setting('block_size')::int AS blocks
FROM pg_class AS c
WHERE c.relkind = 'r' AND (c.oid = to_regclass(%(table)s)
                           OR c.oid IN (SELECT relid FROM pg_partition_tree(%(table)s)))
ORDER BY 1"""
# what an interrupted CREATE INDEX CONCURRENTLY left: an invalid index named like %(like)s
_LEFTOVERS = """
SELECT format('DROP INDEX CONCURRENTLY IF EXISTS %%s', i.indexrelid::regclass) AS ddl
FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
WHERE NOT i.indisvalid AND c.relkind = 'i' AND c.relname LIKE %(like)s
  AND (i.indrelid = to_regclass(%(table)s)
       OR i.indrelid IN (SELECT relid FROM pg_partition_tree(%(table)s)))"""
_PARTITIONED = "SELECT (SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(%s)) AS p"


def briefly(*statements: str) -> Plan[None]:
    """``statements`` in one transaction that waits at most :data:`BRIEF_LOCK` for a lock
    (then fails, and rolls back)."""
    yield Query("BEGIN")
    yield Query(f"SET LOCAL lock_timeout = '{BRIEF_LOCK}'")
    for statement in statements:
        yield Query(statement)
    yield Query("COMMIT")
    return None


def is_partitioned(table: str) -> Plan[bool]:
    (row,) = yield Query(_PARTITIONED, (table,))
    return bool(row["p"])


def build_index_plan(
    schema: str, table: str, name: str, columns: str, *, concurrently: bool, partitioned: bool
) -> Plan[None]:
    """Index ``name`` on ``table`` (``schema.table``) by ``columns`` (its column list and
    clauses); each partition's is ``<partition>_<suffix>``, the suffix being ``name``'s part
    after ``<table's name>_``."""
    if not concurrently:
        yield Query(f"CREATE INDEX IF NOT EXISTS {name} ON {table} {columns}")
        return None
    suffix = name.removeprefix(table.split(".")[-1] + "_")
    leftovers = yield Query(_LEFTOVERS, {"table": table, "like": f"%{suffix}"})
    for row in leftovers or []:
        yield Query(row["ddl"])
    if not partitioned:
        yield Query(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} {columns}")
        return None
    yield from briefly(f"CREATE INDEX IF NOT EXISTS {name} ON ONLY {table} {columns}")
    for leaf in (yield Query(LEAVES, {"table": table})) or []:
        own = f"{leaf['name']}_{suffix}"
        yield Query(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {own} ON {leaf['leaf']} {columns}")
        yield from briefly(f"ALTER INDEX {schema}.{name} ATTACH PARTITION {schema}.{own}")
    return None
