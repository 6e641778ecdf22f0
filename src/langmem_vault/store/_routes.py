"""A tenant's own partitions, named in its namespace search instead of the partitioned tables.

The namespace search runs on a cached generic plan (_plan_settings.py). On a store hash-partitioned
by tenant (``setup(partitions=N)``) that plan holds every partition, and PostgreSQL (18 still)
locks each partition a cached plan names before it prunes them: at 64 partitions 136 relation
locks at every search, most past the 16 fast-path slots (bench/RESULTS.md, issue 28 sessions
12 and 13). Naming the tenant's leaf tables in the statement (``bench.store_items_p17`` for
``bench.store_items``, the body as it is) gives a plan of that partition alone, which locks
what partitions off would (8).

What the store learns, each in the same round trip as a search that needs it (which names the
partitioned tables meanwhile), and keeps (:class:`PartitionRoutes`):

- once, the layout (:data:`LAYOUT`): each table's leaves and their hash bounds (modulus,
  remainder). Routed only when both tables are hash-partitioned on ``tenant`` alone into plain
  tables, at most :data:`MAX_ROUTED` of them (each leaf's statement is prepared and planned
  once per connection, at the first search of the partition there: more would overflow
  psycopg's 100 prepared statements per connection and be planned again and again); a
  store whose tables are not so partitioned never asks again.
- once per tenant, its hash as the server computes it for partitioning (:data:`TENANT_HASH`:
  ``hashtextextended`` with the partitioning seed); the leaf is the one whose bound takes it,
  computed here as PostgreSQL does (``compute_partition_hash_value``: one key, so the row's
  hash is the key's hash combined with 0). Asking the server to test each bound
  (``satisfies_hash_partition``) cost 8 ms a tenant at 64 partitions; the hash costs 0.1.

A connection's warm-up (store/_warm.py) learns the layout before the first search.
``setup()`` forgets what was learnt (it may partition the tables). Searches across tenants,
filtered ones and those with mirrors keep the partitioned tables (custom plans, pruned when
planned).
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

from langmem_vault.db._runner import Query, Rows

#: The tables a namespace search reads, by the names of their leaves.
ROUTED_TABLES = ("store_items", "store_vectors")
#: Most leaves per table routed to (see the module's docstring).
MAX_ROUTED = 64
#: Tenants whose leaves one store keeps; past it, forgotten all at once, and each learnt again
#: at its next search (its hash, in that search's round trip).
MAX_ROUTES = 100_000

# PostgreSQL's HASH_PARTITION_SEED and hash_combine64's constant (src/include/common/hashfn.h,
# partitioning/partbounds.c): fixed, as every hash-partitioned table on disk depends on them.
_SEED = 0x7A5B22367996DCFD
_COMBINE = 0x49A0F4DD15E5A8E3
_UINT64 = 1 << 64

#: Each routed table's leaves, their hash bounds, and whether the layout can be routed.
LAYOUT = """
SELECT p.relname::text AS parent, c.relname::text AS leaf,
       c.relkind = 'r' AND pt.partstrat = 'h' AND pt.partnatts = 1
           AND a.attname = 'tenant' AS hashed,
       b.m[1]::int AS modulus, b.m[2]::int AS remainder
FROM pg_inherits AS h
JOIN pg_class AS p ON p.oid = h.inhparent
JOIN pg_class AS c ON c.oid = h.inhrelid
JOIN pg_partitioned_table AS pt ON pt.partrelid = h.inhparent
LEFT JOIN pg_attribute AS a ON a.attrelid = h.inhparent AND a.attnum = pt.partattrs[0]
LEFT JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid),
    '\\(modulus (\\d+), remainder (\\d+)\\)$') AS b(m) ON true
WHERE h.inhparent IN (to_regclass(%(route_store_items)s), to_regclass(%(route_store_vectors)s))"""

#: A tenant's hash as hash partitioning computes it (the key column's collation is "C").
TENANT_HASH = f"""SELECT hashtextextended(%(route_tenant)s::text COLLATE "C", {_SEED}) AS hash"""

#: table -> [(modulus, remainder, leaf)]
Layout = dict[str, list[tuple[int, int, str]]]


def layout_of(rows: Rows) -> Layout | None:
    """The routed tables' leaves from :data:`LAYOUT`'s rows, or None when they cannot be routed.

    >>> rows = [{"parent": t, "leaf": f"{t}_p{r}", "hashed": True, "modulus": 2, "remainder": r}
    ...         for t in ROUTED_TABLES for r in (0, 1)]
    >>> layout_of(rows)["store_vectors"]
    [(2, 0, 'store_vectors_p0'), (2, 1, 'store_vectors_p1')]
    >>> layout_of(rows[:2]) is None  # the vectors are not partitioned
    True
    """
    layout: Layout = {table: [] for table in ROUTED_TABLES}
    for row in rows or []:
        if not row["hashed"] or row["modulus"] is None:
            return None
        layout[row["parent"]].append((row["modulus"], row["remainder"], row["leaf"]))
    if not all(0 < len(leaves) <= MAX_ROUTED for leaves in layout.values()):
        return None
    return layout


def leaf_for(leaves: list[tuple[int, int, str]], tenant_hash: int) -> str | None:
    """The leaf whose bound takes a tenant of ``tenant_hash`` (TENANT_HASH's), None if none.

    >>> leaf_for([(4, 0, "a"), (4, 1, "b"), (4, 2, "c"), (4, 3, "d")], -_COMBINE + 6)
    'c'
    """
    row_hash = (tenant_hash + _COMBINE) % _UINT64
    return next((leaf for modulus, rest, leaf in leaves if row_hash % modulus == rest), None)


@lru_cache(maxsize=256)
def _table_names(schema: str) -> re.Pattern[str]:
    tables = "|".join(ROUTED_TABLES)
    return re.compile(rf"\b{re.escape(schema)}\.({tables})\b")


@lru_cache(maxsize=256)
def routed(statement: str, schema: str, leaves: tuple[str, str]) -> str:
    """``statement`` reading ``leaves`` (the routed tables' leaves, in ROUTED_TABLES' order)
    instead of the partitioned tables of ``schema``; nothing else of it changes.

    >>> routed("SELECT 1 FROM s.store_items AS i, s.store_vectors AS v, s.store_items_x",
    ...        "s", ("store_items_p3", "store_vectors_p3"))
    'SELECT 1 FROM s.store_items_p3 AS i, s.store_vectors_p3 AS v, s.store_items_x'
    """
    leaf = dict(zip(ROUTED_TABLES, leaves, strict=True))
    return _table_names(schema).sub(lambda m: f"{schema}.{leaf[m.group(1)]}", statement)


class PartitionRoutes:
    """One store's layout and tenants' leaves, learnt from the server (see the module)."""

    def __init__(self, max_routes: int = MAX_ROUTES) -> None:
        self.max_routes = max_routes
        self._leaves: dict[str, tuple[str, str] | None] = {}
        self._layout: Layout | None = None
        self._known = False  # the layout was read (None then: not routed)
        self._lock = threading.Lock()

    def leaves(self, tenant: str) -> tuple[str, str] | None:
        """The tenant's leaves, when known."""
        with self._lock:
            return self._leaves.get(tenant)

    def lookups(self, schema: str, tenant: str) -> tuple[Query, ...]:
        """The statements that learn what is missing to route ``tenant`` (none when nothing is,
        or the store cannot be routed); their rows go to :meth:`learn`."""
        with self._lock:
            if (self._known and self._layout is None) or tenant in self._leaves:
                return ()
            known = self._known
        tenant_hash = Query(TENANT_HASH, {"route_tenant": tenant})
        if known:
            return (tenant_hash,)
        tables = {f"route_{t}": f"{schema}.{t}" for t in ROUTED_TABLES}
        return Query(LAYOUT, tables), tenant_hash

    def learn(self, tenant: str, answers: list[Rows]) -> None:
        """Keep what :meth:`lookups`' statements found (``answers``: their rows, in order)."""
        *layout_rows, hash_rows = answers
        with self._lock:
            if layout_rows:
                self._layout, self._known = layout_of(layout_rows[0]), True
            if self._layout is None or not hash_rows:
                return
            tenant_hash = int(hash_rows[0]["hash"])
            found = tuple(leaf_for(self._layout[t], tenant_hash) for t in ROUTED_TABLES)
            if len(self._leaves) >= self.max_routes:
                self._leaves.clear()
            self._leaves[tenant] = found if all(found) else None  # type: ignore[assignment]

    def adopt(self, other: PartitionRoutes) -> None:
        """Take the layout ``other`` learnt, unless this one knows it already: a connection's
        warm-up reads it (store/_warm.py), so the store's first search does not."""
        with other._lock:
            known, layout = other._known, other._layout
        with self._lock:
            if known and not self._known:
                self._layout, self._known = layout, True

    def forget(self) -> None:
        """Learn again from scratch (after ``setup()``, which may partition the tables)."""
        with self._lock:
            self._leaves.clear()
            self._layout, self._known = None, False
