"""Hash partitions by tenant: ``setup(partitions=N)`` turns a component's tables into N hash
partitions of their ``tenant`` column (see :mod:`langmem_vault._tenants`), so one user's rows,
and their indexes (the HNSW graph too), live in one partition, and a statement that names one
tenant reads that partition only.

A table already partitioned is left as it is (asking for another count is refused: moving
every row again is an operator's decision, not a side effect of setup). A plain table is
rebuilt: a partitioned copy with the same columns, every row copied in, the old table
dropped, then its keys, indexes and foreign keys (its own and those that reference it) made
again by their old names (a serial column's sequence goes to the new table). That is a full
copy under an exclusive lock, inside setup's transaction: on a large table, do it in a
maintenance window (docs/scaling.md).

Runs after the component's migrations, in the same transaction. ``partitions=0`` changes
nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from langmem_vault.db._migrations import check_schema
from langmem_vault.db._runner import Plan, Query

__all__ = ["MAX_PARTITIONS", "check_partitions", "partition_plan"]

MAX_PARTITIONS = 1024

_PARTITIONS = """
SELECT c.relkind::text AS kind, array_to_string(c.reloptions, ', ') AS options,
       (SELECT count(*) FROM pg_inherits AS h WHERE h.inhparent = c.oid) AS partitions
FROM pg_class AS c WHERE c.oid = to_regclass(%(table)s)"""

# What the rebuilt table must get back, in the order it is made again: keys, other indexes,
# own foreign keys; then the foreign keys of other tables that reference it; its extended
# statistics; its triggers (store_items.page_at's). A foreign key to a
# partitioned table has a child constraint per partition (conparentid): those come with it.
_STORED_COLUMNS = """
SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) AS columns FROM pg_attribute
WHERE attrelid = to_regclass(%(table)s) AND attnum > 0 AND NOT attisdropped AND attgenerated = ''
"""
_DEFINITIONS = """
SELECT 'ALTER TABLE ' || %(table)s || ' ADD CONSTRAINT ' || quote_ident(conname) || ' '
       || pg_get_constraintdef(oid) AS ddl, 1 AS step, conname::text AS name
FROM pg_constraint WHERE conrelid = to_regclass(%(table)s) AND contype IN ('p', 'u')
UNION ALL
SELECT pg_get_indexdef(i.indexrelid), 2, c.relname::text
FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
WHERE i.indrelid = to_regclass(%(table)s)
  AND NOT EXISTS (SELECT 1 FROM pg_constraint AS k WHERE k.conindid = i.indexrelid)
UNION ALL
SELECT 'ALTER TABLE ' || conrelid::regclass::text || ' ADD CONSTRAINT ' || quote_ident(conname)
       || ' ' || pg_get_constraintdef(oid), 3 + (conrelid <> to_regclass(%(table)s))::int,
       conname::text
FROM pg_constraint WHERE contype = 'f' AND conparentid = 0
  AND (conrelid = to_regclass(%(table)s) OR confrelid = to_regclass(%(table)s))
UNION ALL
SELECT pg_get_statisticsobjdef(oid), 5, stxname::text
FROM pg_statistic_ext WHERE stxrelid = to_regclass(%(table)s)
UNION ALL
SELECT pg_get_triggerdef(oid), 6, tgname::text
FROM pg_trigger WHERE tgrelid = to_regclass(%(table)s) AND NOT tgisinternal
ORDER BY step, name"""

_REFERENCING = """
SELECT 'ALTER TABLE ' || conrelid::regclass::text || ' DROP CONSTRAINT ' || quote_ident(conname)
    AS ddl
FROM pg_constraint
WHERE contype = 'f' AND conparentid = 0 AND confrelid = to_regclass(%(table)s)
  AND conrelid <> confrelid"""


# A serial column's sequence belongs to its table and would go with the old one: it is handed
# to the new table's column first (the new table's default already calls it).
_SEQUENCES = """
SELECT 'ALTER SEQUENCE ' || d.objid::regclass::text || ' OWNED BY ' || %(new)s || '.'
       || quote_ident(a.attname) AS ddl
FROM pg_depend AS d
JOIN pg_attribute AS a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
WHERE d.classid = 'pg_class'::regclass AND d.refobjid = to_regclass(%(table)s)
  AND d.deptype = 'a' AND d.objid IN (SELECT oid FROM pg_class WHERE relkind = 'S')"""


def check_partitions(partitions: object) -> int:
    """``partitions`` when it is a count setup can use: an int from 0 (none) to 1024.

    >>> check_partitions(8)
    8
    >>> try:
    ...     check_partitions(-1)
    ... except ValueError as error:
    ...     print(error)
    partitions must be an int from 0 (no partitions) to 1024, got -1
    """
    if (
        isinstance(partitions, bool)
        or not isinstance(partitions, int)
        or not 0 <= partitions <= MAX_PARTITIONS
    ):
        raise ValueError(
            f"partitions must be an int from 0 (no partitions) to {MAX_PARTITIONS}, "
            f"got {partitions!r}"
        )
    return partitions


def partition_plan(schema: str, tables: Sequence[str], partitions: int) -> Plan[None]:
    """Hash-partition ``tables`` (of ``schema``, each with a ``tenant`` column leading its
    keys) into ``partitions`` partitions; tables a foreign key references come first."""
    if not check_partitions(partitions):
        return None
    s = check_schema(schema)
    for table in tables:
        name = f"{s}.{table}"
        rows = yield Query(_PARTITIONS, {"table": name})
        if not rows:
            raise ValueError(f"{name} does not exist: run the migrations first")
        found = rows[0]
        if found["kind"] == "p":
            if found["partitions"] != partitions:
                raise ValueError(
                    f"{name} is already in {found['partitions']} partitions, not "
                    f"{partitions}: changing the count moves every row; do it by hand "
                    "(docs/scaling.md) or keep the count it has"
                )
            continue
        yield from _rebuild(s, table, partitions, found["options"])
    return None


def _rebuild(s: str, table: str, partitions: int, options: str | None) -> Plan[None]:
    name = f"{s}.{table}"
    definitions = yield Query(_DEFINITIONS, {"table": name})
    for row in (yield Query(_REFERENCING, {"table": name})) or []:
        yield Query(row["ddl"])
    storage = f" WITH ({options})" if options else ""
    yield Query(
        f"CREATE TABLE {s}.{table}__new (LIKE {name} INCLUDING DEFAULTS INCLUDING STORAGE"
        " INCLUDING COMPRESSION INCLUDING CONSTRAINTS INCLUDING GENERATED)"
        " PARTITION BY HASH (tenant)"
    )
    for n in range(partitions):
        yield Query(
            f"CREATE TABLE {s}.{table}_p{n} PARTITION OF {s}.{table}__new"
            f" FOR VALUES WITH (MODULUS {partitions}, REMAINDER {n}){storage}"
        )
    # A generated column (store_items.page_at before store/0007 became online) is computed
    # again, not copied.
    (found,) = yield Query(_STORED_COLUMNS, {"table": name})
    columns = found["columns"]
    yield Query(f"INSERT INTO {s}.{table}__new ({columns}) SELECT {columns} FROM {name}")
    for row in (yield Query(_SEQUENCES, {"table": name, "new": f"{name}__new"})) or []:
        yield Query(row["ddl"])
    yield Query(f"DROP TABLE {name}")
    yield Query(f"ALTER TABLE {s}.{table}__new RENAME TO {table}")
    for row in definitions or []:
        yield Query(row["ddl"])
    yield Query(f"ANALYZE {name}")
    return None
