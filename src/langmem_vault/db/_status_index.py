"""store/0010: ``store_items_status_idx``, a partial index of the items whose status may not
be plainly "active" at some time: a status of their own, a rule's switch, or an end time
(service/_records.py ``STATUS_RULES``, each rule's part that does not depend on the time, as
store/_labels.candidates_sql writes it: a count's statement uses this index only when its
condition implies this predicate; tests/store/test_status_counts.py checks that it does).
A count of a user's statuses (store/_page_plan.count_plan) reads these rows and judges their
status at the time asked; every other live row is "active" and is counted in store/0008's
index alone, without reading it (bench/RESULTS.md, issue 28 session 13).

Built online (db/_online_index.py: ``CONCURRENTLY``, one partition at a time; built in
setup()'s transaction it blocked writes 1.4 s at 1M rows) and recorded once built: a store
counts through it only then (store/_applied.py), and walks every row before. An interrupted
build is dropped and built again by the next setup()."""

from __future__ import annotations

from langmem_vault.db._online_index import build_index_plan, is_partitioned
from langmem_vault.db._runner import Plan, Query

__all__ = ["STATUS_INDEX", "status_index_plan"]

STATUS_INDEX = "store_items_status_idx"
_COLUMNS = """(tenant, prefix)
    WHERE (value -> 'status') = '"pending_confirmation"'::jsonb
       OR (value -> 'status') = '"superseded"'::jsonb
       OR jsonb_typeof(value -> 'valid_to') = 'string'
       OR (value -> 'active') = 'false'::jsonb
       OR jsonb_typeof(value -> 'expires_at') = 'string'"""


def status_index_plan(schema: str, record: Query, *, concurrently: bool) -> Plan[None]:
    """Build the index, then note the migration (``record``). ``schema`` is checked by the
    caller (db/_online.py)."""
    table = f"{schema}.store_items"
    partitioned = yield from is_partitioned(table)
    yield from build_index_plan(
        schema, table, STATUS_INDEX, _COLUMNS, concurrently=concurrently, partitioned=partitioned
    )
    yield record
    return None
