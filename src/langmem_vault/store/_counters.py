"""Atomic counter records: add to numbers and raise timestamps in one upsert per batch.

A read-modify-write of an item through ``batch`` (get, change, put) loses updates when two
processes do it at once. Counter records (memory usage: access counts, citations, the last
access) instead merge in the database, under the row lock of ``INSERT ... ON CONFLICT DO
UPDATE``: numbers in the increment are ADDED to the stored ones, strings are ISO timestamps
and the LATER one is kept. Other fields of the stored value are left as they are. The item is
an ordinary store item (namespace, key, JSON value, never indexed), so ``get`` and
``search`` read it like any other.

>>> stamp = "2026-01-01T00:00:00Z"
>>> increments = [(("usage", "u1"), "k1", {"access_count": 1, "last_accessed": stamp})]
>>> plan = increment_plan("langmem_vault", prepare_increments(increments), TenantRule())
>>> "ON CONFLICT" in next(plan).sql
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from langmem_vault._tenants import TenantRule
from langmem_vault.db._runner import Plan, Query
from langmem_vault.store._validation import InvalidValueError, check_key, check_namespace

__all__ = ["Increment", "increment_plan", "prepare_increments"]

#: (namespace, key, {field: number to add | ISO timestamp to raise to})
Increment = tuple[tuple[str, ...], str, Mapping[str, Any]]

# Rows go in (prefix, key) order, so two concurrent batches lock shared rows in the same
# order and cannot deadlock. A field whose stored value is not a number counts from 0; a
# stored timestamp that is not a string is replaced. Each row's tenant comes from the store's
# rule in Python, as the reads route by it: the schema's tenant_of, a CASE over the tenant
# templates evaluated row by row, cost inject's 29 access stamps 1.51 ms against 1.30
# (bench/RESULTS.md, issue 28 session 10).
_UPSERT = """
INSERT INTO {s}.store_items AS i (tenant, prefix, key, namespace, value)
SELECT u.tenant, u.prefix, u.key, string_to_array(u.prefix, '.'), u.value
FROM unnest(%(tenants)s::text[], %(prefixes)s::text[], %(keys)s::text[], %(values)s::jsonb[])
    AS u(tenant, prefix, key, value)
ORDER BY u.prefix COLLATE "C", u.key COLLATE "C"  -- as sql.write_items locks rows
ON CONFLICT (tenant, prefix, key) DO UPDATE SET
    value = i.value || (
        SELECT coalesce(jsonb_object_agg(e.key, CASE
            WHEN jsonb_typeof(e.value) = 'number' THEN to_jsonb(
                CASE WHEN jsonb_typeof(i.value -> e.key) = 'number'
                     THEN (i.value ->> e.key)::numeric ELSE 0 END
                + (e.value #>> '{{}}')::numeric)
            WHEN jsonb_typeof(i.value -> e.key) = 'string'
                 AND (i.value ->> e.key)::timestamptz >= (e.value #>> '{{}}')::timestamptz
            THEN i.value -> e.key
            ELSE e.value END), '{{}}'::jsonb)
        FROM jsonb_each(excluded.value) AS e),
    updated_at = now()
"""


def _check_field(key: str, name: Any, amount: Any) -> Any:
    if not isinstance(name, str) or not name:
        raise InvalidValueError(f"increment of {key!r}: field names must be strings, got {name!r}")
    if isinstance(amount, bool) or not isinstance(amount, int | float | str | datetime):
        raise InvalidValueError(
            f"increment of {key!r}: field {name!r} must be a number to add or a timestamp, "
            f"got {amount!r}"
        )
    if isinstance(amount, str):
        try:
            datetime.fromisoformat(amount)
        except ValueError:
            raise InvalidValueError(
                f"increment of {key!r}: field {name!r} must be an ISO timestamp, got {amount!r}"
            ) from None
    return amount.isoformat() if isinstance(amount, datetime) else amount


def prepare_increments(increments: Iterable[Increment]) -> dict[tuple[str, str], dict[str, Any]]:
    """Validate and merge increments per (prefix, key): numbers summed, latest timestamp kept.

    One statement cannot update a row twice, so repeats of a key are merged here first.
    """
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for namespace, key, fields in increments:
        check_namespace(tuple(namespace))
        check_key(key)
        row = merged.setdefault((".".join(namespace), key), {})
        for name, amount in fields.items():
            value = _check_field(key, name, amount)
            if name not in row:
                row[name] = value
            elif isinstance(value, str) != isinstance(row[name], str):
                raise InvalidValueError(f"increment of {key!r}: field {name!r} mixes kinds")
            elif isinstance(value, str):
                later = datetime.fromisoformat(value) > datetime.fromisoformat(row[name])
                row[name] = value if later else row[name]
            else:
                row[name] += value
    return merged


def increment_plan(
    schema: str, rows: Mapping[tuple[str, str], Mapping[str, Any]], rule: TenantRule
) -> Plan[int]:
    """Apply prepared increments in one statement, each record under its tenant by ``rule``
    (the store's); returns how many records were touched."""
    if not rows:
        return 0
    ordered = sorted(rows.items())
    yield Query(
        _UPSERT.format(s=schema),
        {
            # labels never hold ".", so the prefix splits back into its namespace
            "tenants": [rule.tenant_of(prefix.split(".")) for (prefix, _), _ in ordered],
            "prefixes": [prefix for (prefix, _), _ in ordered],
            "keys": [key for (_, key), _ in ordered],
            "values": [json.dumps(fields) for _, fields in ordered],
        },
    )
    return len(ordered)
