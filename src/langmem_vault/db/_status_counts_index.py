"""store/0011: the status counts index-only, partial indexes whose conditions
(service/_records.py ``STATUS_RULES`` as store/_labels.fixed_sql and judged_sql write them;
tests/store/test_status_counts.py checks they are the same text) each hold:

- the items of one status that does not depend on the time (pending, superseded, forgotten,
  disabled): a count of it reads the index alone, never the heap;
- per kind, the items whose status may depend on the time (an end time, no status of their
  own before it), by their end time (db/_iso_time.py ``end_time``): a count reads only those
  whose end time has passed at the time asked (expired), the rest are active.

store/0010's index held both kinds together, so a count read and judged each of them (about
9.5 us a row; 11.7 ms p95 with 1,000 of 10,000 not active, bench/RESULTS.md session 13).
Each index is ``(tenant, prefix[, end time]) INCLUDE (expires_at)``: a count names the user's
namespace and skips the items past their TTL without reading them.

Built online as store/0010 is (db/_online_index.py: ``CONCURRENTLY``, one partition at a
time, again after an interrupted build) and recorded once all six are built: a store counts
through them only then (store/_applied.py), through store/0010's index before. Then
store/0010's index goes (every write paid for it, and the planner may still read the judged
items through it, fixed ones included): ``CONCURRENTLY``, or on a partitioned table in a
brief lock (:func:`~langmem_vault.db._online_index.briefly`: Postgres drops no partitioned
index concurrently)."""

from __future__ import annotations

from langmem_vault.db._iso_time import END_TIME_FUNCTION
from langmem_vault.db._online_index import briefly, build_index_plan, is_partitioned
from langmem_vault.db._runner import Plan, Query
from langmem_vault.db._status_index import STATUS_INDEX

__all__ = ["ENDS", "FIXED", "JUDGED", "status_counts_plan"]

_PENDING = """(value -> 'status') = '"pending_confirmation"'::jsonb"""
_SUPERSEDED = """(value -> 'status') = '"superseded"'::jsonb"""
_BY = "(value -> 'superseded_by')"
_TRUTHY_BY = (
    f"CASE jsonb_typeof{_BY} WHEN 'string' THEN {_BY} <> '\"\"'::jsonb "
    f"WHEN 'boolean' THEN {_BY} = 'true'::jsonb "
    f"WHEN 'number' THEN {_BY} <> '0'::jsonb "
    f"WHEN 'array' THEN {_BY} <> '[]'::jsonb "
    f"WHEN 'object' THEN {_BY} <> '{{}}'::jsonb ELSE false END"
)
_DISABLED = "(value -> 'active') = 'false'::jsonb"
_NOT_PENDING = f"({_PENDING}) IS NOT TRUE"
_NOT_REPLACED = f"({_SUPERSEDED} AND {_TRUTHY_BY}) IS NOT TRUE"
#: per kind of memory: each status counted from its own index (index suffix, condition)
FIXED: dict[str, list[tuple[str, str, str]]] = {
    "semantic": [
        ("pending", "pending_idx", f"({_PENDING})"),
        ("superseded", "superseded_idx", f"({_SUPERSEDED} AND {_TRUTHY_BY} AND {_NOT_PENDING})"),
        ("forgotten", "forgotten_idx", f"({_SUPERSEDED} AND {_NOT_PENDING} AND {_NOT_REPLACED})"),
    ],
    "instruction": [("disabled", "disabled_idx", f"({_DISABLED})")],
}
#: per kind: the items whose status may depend on the time
JUDGED: dict[str, str] = {
    "semantic": (
        f"(({_PENDING} OR {_SUPERSEDED} OR jsonb_typeof(value -> 'valid_to') = 'string') AND "
        f"{_NOT_PENDING} AND {_NOT_REPLACED} AND ({_SUPERSEDED}) IS NOT TRUE)"
    ),
    "instruction": (
        f"(({_DISABLED} OR jsonb_typeof(value -> 'expires_at') = 'string') AND "
        f"({_DISABLED}) IS NOT TRUE)"
    ),
}
#: per kind: the field whose end time judges the others (the index orders them by it)
ENDS: dict[str, str] = {"semantic": "valid_to", "instruction": "expires_at"}
_INDEX = "store_items_status_{}"
_COLUMNS = "(tenant, prefix{}) INCLUDE (expires_at) WHERE {}"


def status_counts_plan(schema: str, record: Query, *, concurrently: bool) -> Plan[None]:
    """Build the six indexes, then note the migration (``record``). ``schema`` is checked by
    the caller (db/_online.py)."""
    table = f"{schema}.store_items"
    partitioned = yield from is_partitioned(table)
    yield Query(END_TIME_FUNCTION.replace("{schema}", schema))  # the regex holds braces
    built = [(suffix, "", where) for kind in FIXED.values() for _, suffix, where in kind]
    built += [
        (f"{kind}_ends_idx", f", {schema}.end_time(value -> '{field}')", JUDGED[kind])
        for kind, field in ENDS.items()
    ]
    for suffix, key, where in built:
        yield from build_index_plan(
            schema,
            table,
            _INDEX.format(suffix),
            _COLUMNS.format(key, where),
            concurrently=concurrently,
            partitioned=partitioned,
        )
    old = f"DROP INDEX {{}} IF EXISTS {schema}.{STATUS_INDEX}"
    if not concurrently:
        yield Query(old.format(""))
    elif partitioned:
        yield from briefly(old.format(""))
    else:
        yield Query(old.format("CONCURRENTLY"))
    yield record
    return None
