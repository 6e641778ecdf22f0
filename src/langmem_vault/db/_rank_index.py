"""store/0009: ``store_items_rank_idx``, the columns that rank a namespace search's candidates
(``(tenant, prefix, key) INCLUDE (updated_at, expires_at, search_tsv)``), so the search ranks
its 50 nearest candidates from this index's leaves (index-only: a user's entries lie together,
about 40 to a leaf) instead of reading each candidate's row, one random heap page each as
users' rows arrive interleaved, and reads the heap only for the page's rows
(store/_search_sql.py; bench/RESULTS.md, issue 28 session 13).

Built online (db/_online_index.py) and recorded once built: a store ranks from it only then
(store/_applied.py). An interrupted build is dropped and built again by the next setup().
An index-only scan reads the heap for rows on pages not yet marked all-visible, so, as
store_vectors/0004 does for the vectors, autovacuum is set to mark new rows after 2% of the
table is new rather than 20% (on each partition: a partitioned table takes no storage
parameters; setup(partitions=N) copies the table's to the partitions it makes)."""

from __future__ import annotations

from langmem_vault.db._online_index import LEAVES, build_index_plan, is_partitioned
from langmem_vault.db._runner import Plan, Query

__all__ = ["RANK_INDEX", "rank_index_plan"]

RANK_INDEX = "store_items_rank_idx"
_COLUMNS = "(tenant, prefix, key) INCLUDE (updated_at, expires_at, search_tsv)"


def rank_index_plan(schema: str, record: Query, *, concurrently: bool) -> Plan[None]:
    """Build the index, then note the migration (``record``). ``schema`` is checked by the
    caller (db/_online.py)."""
    table = f"{schema}.store_items"
    partitioned = yield from is_partitioned(table)
    for leaf in (yield Query(LEAVES, {"table": table})) or []:
        yield Query(
            f"ALTER TABLE {leaf['leaf']} SET (autovacuum_vacuum_insert_scale_factor = 0.02)"
        )
    yield from build_index_plan(
        schema, table, RANK_INDEX, _COLUMNS, concurrently=concurrently, partitioned=partitioned
    )
    yield record
    return None
