"""The statement of a :class:`~langmem_vault.store._tallies.TallyOp`: the search's own
statement (its rows and their mirrors) wrapped in the grouping, so the items stay on the
server."""

from __future__ import annotations

from typing import Any

from langmem_vault.db._runner import Plan, Query
from langmem_vault.store._labels import time_sql
from langmem_vault.store._mirrors import MirrorSearchOp
from langmem_vault.store._prepare import StoreSettings
from langmem_vault.store._search_plan import recent_query, run_recent
from langmem_vault.store._tallies import Tallies, Tally, TallyOp

__all__ = ["tally_plan"]


def tally_plan(op: TallyOp, settings: StoreSettings) -> Plan[Tallies]:
    """Each group's :class:`Tally` and the search's item count, in one statement around the
    search's own (the count: the one row named NULL)."""
    sql, params, generic = recent_query(op.search, settings, MirrorSearchOp(op.search, op.mirror))

    def param(v: Any) -> str:
        name = f"y{len(params)}"
        params[name] = v
        return f"%({name})s"

    field, tags = param(op.field), param(op.tags)
    stamps = [
        f"(r.value -> {param(op.stamp)}::text)",
        f"(r.mirror_value -> {param(op.mirror_stamp)}::text)",
    ]
    read = [time_sql(at, param) for at in stamps]
    newest = ", ".join(f"CASE WHEN {valid} THEN {cast} END" for valid, cast in read)
    odd = [
        f"CASE WHEN jsonb_typeof{at} = 'string' AND {at} <> '\"\"'::jsonb AND NOT ({valid}) "
        f"THEN {at} #>> '{{}}' END"
        for at, (valid, _) in zip(stamps, read, strict=True)
    ]
    tally = f"""WITH r AS MATERIALIZED ({sql})
SELECT g.name, count(*) AS n, max(GREATEST({newest})) AS newest,
       array_remove(array_agg({odd[0]}) || array_agg({odd[1]}), NULL) AS odd
FROM r CROSS JOIN LATERAL (
    SELECT CASE WHEN NOT r.value ? {field}::text THEN {param(op.default)}::text
                WHEN jsonb_typeof(r.value -> {field}::text) = 'string'
                THEN r.value ->> {field}::text END AS name
    UNION
    SELECT t.v #>> '{{}}' FROM jsonb_array_elements(
        CASE WHEN jsonb_typeof(r.value -> {tags}::text) = 'array'
        THEN r.value -> {tags}::text ELSE '[]'::jsonb END) AS t(v)
    WHERE jsonb_typeof(t.v) = 'string' AND t.v #>> '{{}}' = ANY({param(list(op.tag_names))}::text[])
) AS g
WHERE g.name IS NOT NULL
GROUP BY g.name
UNION ALL
SELECT NULL, count(*), NULL, NULL FROM r"""
    rows = yield from run_recent(Query(tally, params, prepare=generic or None), generic)
    groups = {
        r["name"]: Tally(int(r["n"]), r["newest"], tuple(r["odd"] or ()))
        for r in rows or []
        if r["name"] is not None
    }
    items = sum(int(r["n"]) for r in rows or [] if r["name"] is None)
    return Tallies(groups, items)
