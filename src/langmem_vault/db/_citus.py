"""The statements that distribute a set-up schema on Citus (``langmem-vault citus-ddl``,
docs/citus.md): every table with a ``tenant`` column is distributed by it, co-located with
``store_items``, a table a foreign key points at before the table that holds the key; the
functions the tables' indexes and writes call are propagated to the workers first; the
tables with no tenant stay local on the coordinator, each with its reason.

The tables come from the live catalog when there is one (:data:`CATALOG`), else from
:data:`DECLARED` (tests/cli/test_citus_cli.py checks the two agree on a fresh schema).

>>> script = citus_statements("app", DECLARED)
>>> tables = [line for line in script if "create_distributed_table" in line]
>>> print(tables[0])
SELECT create_distributed_table('app.store_items', 'tenant');
>>> print(tables[1])
SELECT create_distributed_table('app.entities', 'tenant', colocate_with => 'app.store_items');
>>> print(script[-1].split(":")[0])
-- app.vault_migrations stays local on the coordinator
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from graphlib import TopologicalSorter
from typing import Any

from langmem_vault.db._migrations import check_schema

__all__ = [
    "CATALOG",
    "DECLARED",
    "FUNCTIONS",
    "FUNCTIONS_CATALOG",
    "LOCAL_REASONS",
    "Table",
    "catalog_tables",
    "citus_statements",
]

ROOT = "store_items"
#: the saver's tables (checkpointers/_base.py's TABLES; db is below checkpointers)
SAVER_TABLES = (
    "saver_threads",
    "saver_checkpoints",
    "saver_blobs",
    "saver_elements",
    "saver_pages",
    "saver_writes",
)


@dataclass(frozen=True)
class Table:
    """A table of the schema: whether it has a tenant column, which tables its foreign keys
    point at."""

    name: str
    tenant: bool
    references: tuple[str, ...] = ()


_QUEUE = (
    "no tenant column, by design: a worker claims the next ready job of any user (FOR UPDATE "
    "SKIP LOCKED, oldest first), which Citus runs only on a table of one shard; a reference "
    "table would replicate every enqueue, claim and finish to every node"
)
#: why each table with no tenant column stays local on the coordinator
LOCAL_REASONS: dict[str, str] = {
    "vault_migrations": "only setup() reads and writes it, on the coordinator",
    "vault_jobs": _QUEUE,
    "vault_job_watermarks": _QUEUE,
}

#: the tables setup() makes (every component, a store with an index), as the catalog says
DECLARED: tuple[Table, ...] = (
    Table("store_items", True),
    Table("entities", True),
    Table("entity_aliases", True, ("entities", "store_items")),
    Table("entity_mentions", True, ("entities", "store_items")),
    Table("entity_relations", True, ("entities", "store_items")),
    Table("store_vectors", True, ("store_items",)),
    Table("entity_vectors", True, ("entities",)),
    *(Table(name, True) for name in SAVER_TABLES),
    Table("vault_audit", True),
    *(Table(name, False) for name in LOCAL_REASONS),
)
#: the functions the tables' indexes and writes call (signatures as ``regprocedure`` prints)
FUNCTIONS: tuple[str, ...] = (
    "end_time(jsonb)",
    "fill_page_at()",
    "item_time(jsonb,timestamp with time zone)",
    "tenant_of(text[])",
)

#: the schema's tables (no partitions: a partitioned table is distributed as a whole), whether
#: each has a tenant column, the tables of the schema its foreign keys point at; and its
#: functions (``%(schema)s``)
CATALOG = """
SELECT c.relname::text AS name,
       EXISTS (SELECT 1 FROM pg_attribute AS a WHERE a.attrelid = c.oid
               AND a.attname = 'tenant' AND NOT a.attisdropped) AS tenant,
       ARRAY(SELECT DISTINCT f.confrelid::regclass::text FROM pg_constraint AS f
             WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) AS refs
FROM pg_class AS c
WHERE c.relnamespace = to_regnamespace(%(schema)s) AND c.relkind IN ('r', 'p')
  AND NOT c.relispartition
ORDER BY c.relname"""
FUNCTIONS_CATALOG = """
SELECT p.oid::regprocedure::text AS signature FROM pg_proc AS p
WHERE p.pronamespace = to_regnamespace(%(schema)s) ORDER BY 1"""


def catalog_tables(schema: str, rows: Iterable[Mapping[str, Any]]) -> list[Table]:
    """:data:`CATALOG`'s rows as tables (foreign key targets named without the schema)."""
    prefix = f"{schema}."
    return [
        Table(
            str(row["name"]),
            bool(row["tenant"]),
            tuple(str(r).removeprefix(prefix) for r in row["refs"]),
        )
        for row in rows
    ]


def citus_statements(
    schema: str, tables: Sequence[Table], functions: Sequence[str] | None = None
) -> list[str]:
    """The script for ``schema``: comments and statements, one a line.

    ``functions`` are signatures qualified by the schema (default :data:`FUNCTIONS`)."""
    s = check_schema(schema)
    keyed = {t.name: t for t in tables if t.tenant}
    lines = [
        f"-- Citus layout of schema {s}: run on the coordinator after setup() (docs/citus.md).",
        "-- functions the indexes and writes call, made on every worker",
    ]
    for signature in functions if functions is not None else [f"{s}.{f}" for f in FUNCTIONS]:
        lines.append(f"SELECT create_distributed_function('{signature}');")
    lines.append(
        f"-- tenant-keyed: distributed by tenant, co-located with {ROOT} "
        "(one user's rows on one shard)"
    )
    # A table a foreign key points at is distributed first (Citus refuses a key to a table
    # that is not distributed yet); store_items leads, the others follow it by name.
    order = TopologicalSorter(
        {n: [r for r in keyed[n].references if r in keyed] for n in sorted(keyed)}
    )
    order.prepare()
    done: list[str] = []
    while order.is_active():
        ready = sorted(order.get_ready(), key=lambda n: (n != ROOT, n))
        done += ready
        order.done(*ready)
    for name in done:
        colocate = "" if name == ROOT else f", colocate_with => '{s}.{ROOT}'"
        lines.append(f"SELECT create_distributed_table('{s}.{name}', 'tenant'{colocate});")
    for table in sorted(tables, key=lambda t: t.name):
        if not table.tenant:
            reason = LOCAL_REASONS.get(table.name, "no tenant column")
            lines.append(f"-- {s}.{table.name} stays local on the coordinator: {reason}")
    return lines
