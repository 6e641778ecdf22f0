"""The plans of a :class:`~langmem_vault.store._pages.PageOp` (one ordered index walk per
namespace, store/0007, and the count beside it in the same round trip) and of a
:class:`~langmem_vault.store._pages.CountOp`.

A page at an offset first finds its first row by walking only the index's columns (page time,
key, namespace, expiry: an index-only scan, reading no row it skips), then walks from there
as a page by cursor does. A filter on the value (``filter``, ``labels``) reads each row it
skips, as before.

Until store/0008 has filled and indexed the column (db/_page_at.py: online, after setup()'s
transaction), the walks order by ``item_time(value, created_at)`` itself, on store/0006's
expression index: the same order, without the index-only skip. A store learns that the
column is ready from ``vault_migrations`` (store/_applied.py), asking again at each page until
it is."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import Item

from langmem_vault._tenants import DEFAULT_RULE, TenantRule
from langmem_vault.db._runner import Pipelined, Plan, Query
from langmem_vault.store import _sql as q
from langmem_vault.store._applied import Applied
from langmem_vault.store._filters import FilterBuilder
from langmem_vault.store._labels import (
    candidates_sql,
    default_label,
    fixed_sql,
    judged_sql,
    label_sql,
    past_sql,
)
from langmem_vault.store._mirrors import mirror_of, mirror_params, mirrored_sql
from langmem_vault.store._pages import CountOp, Page, PageOp
from langmem_vault.store._plan_settings import plan_settings

__all__ = ["FILTERED_PAGE_SETTINGS", "count_plan", "page_plan"]

#: A page with a filter on the value is planned with these: the planner expects a filter to
#: keep almost nothing, so it would rather read every row of the range through a bitmap and
#: sort them than walk the index in order (a plain column orders the index since store/0007,
#: and a bitmap no longer pays to compute the time of each row it rechecks).
FILTERED_PAGE_SETTINGS = (("enable_bitmapscan", "off"), ("enable_sort", "off"))
_FILTERED_ON, _FILTERED_OFF = plan_settings(FILTERED_PAGE_SETTINGS)


def _page_sql(s: str, wheres: list[str], *, newest_first: bool, skip: bool, at: str) -> str:
    """One ordered walk of the index per namespace (its own ``wheres``), each cut at the
    page's size + 1, merged and cut again (the shape of ``sql.search_recent_in``); with
    ``skip``, from the row at %(offset)s, found by a walk of the index's columns alone.
    ``at`` is an item's page time in the walks (the column, or the expression it holds)."""
    desc = " DESC" if newest_first else ""
    order = f"i.page_at{desc}, i.key{desc}"

    def walks(columns: str, cut: str, also: str = "") -> str:
        return "\n    UNION ALL\n    ".join(
            f"""(SELECT {columns} FROM {s}.store_items AS i
    WHERE i.tenant = %(t{n})s AND i.prefix = %(p{n})s AND {where}{also}
    ORDER BY {at}{desc}, i.key{desc} LIMIT {cut})"""
            for n, where in enumerate(wheres)
        )

    columns = f"{q.ITEM_COLUMNS}, i.prefix, {at} AS page_at"
    if not skip:
        return f"""
SELECT * FROM (
    {walks(columns, "%(cut)s")}
) AS i
ORDER BY {order}, i.prefix
LIMIT %(limit)s"""
    # Two scalar subqueries, not one row subquery: a row compared with parameters is an
    # index condition, a row subquery is not.
    cmp = "<=" if newest_first else ">="
    start = f" AND ({at}, i.key) {{}} ((SELECT page_at FROM start), (SELECT key FROM start))"
    return f"""
WITH start AS (
    SELECT * FROM (
    {walks(f"{at} AS page_at, i.key, i.prefix", "%(skip_cut)s")}
    ) AS i
    ORDER BY {order}, i.prefix OFFSET %(offset)s LIMIT 1)
SELECT i.* FROM (
    {walks(columns, "%(cut)s", start.format(cmp))}
) AS i, start
WHERE NOT (i.page_at = start.page_at AND i.key = start.key AND i.prefix < start.prefix)
ORDER BY {order}, i.prefix
LIMIT %(limit)s"""


def _count_sql(s: str, wheres: list[str], limit: str = "%(count_limit)s") -> str:
    """The matches, counted up to ``limit`` (NULL: LIMIT ALL)."""
    if len(set(wheres)) == 1:  # one condition for all: one scan of the namespaces
        return f"""SELECT count(*) AS n FROM (
    SELECT FROM {s}.store_items AS i
    WHERE {q.TENANTS} AND i.prefix = ANY(%(prefixes)s::text[]) AND {wheres[0]}
    LIMIT {limit}) AS m"""
    scans = "\n    UNION ALL\n    ".join(
        f"""SELECT FROM {s}.store_items AS i
    WHERE i.tenant = %(t{n})s AND i.prefix = %(p{n})s AND {where}"""
        for n, where in enumerate(wheres)
    )
    return f"SELECT count(*) AS n FROM (\n    {scans}\n    LIMIT {limit}) AS m"


def _scope(
    op: PageOp | CountOp, rule: TenantRule, params: dict[str, Any]
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The op's namespaces (each once) and, for each, the condition of its items: live,
    matching the filter and, with labels, one of the labels kept (the labels' parameters
    added to ``params``)."""
    builder = FilterBuilder("i.value", containment=False)
    builder.add(op.filter)
    params.update(builder.params)
    where = f"{q.NOT_EXPIRED} AND {builder.sql()}"
    namespaces = list(dict.fromkeys(op.namespaces))
    prefixes = [".".join(ns) for ns in namespaces]
    tenants = [rule.tenant_of(ns) for ns in namespaces]
    params.update({f"p{n}": p for n, p in enumerate(prefixes)})
    params.update({f"t{n}": t for n, t in enumerate(tenants)})
    params["prefixes"], params["tenants"] = prefixes, list(dict.fromkeys(tenants))
    params["label_now"] = op.now
    wheres = [where] * len(namespaces)
    keep = getattr(op, "keep", None)
    if op.labels is not None and keep is not None:
        params["keep"] = list(keep)
        labeling = dict(zip(op.namespaces, op.labels, strict=True))
        wheres = [
            f"{where} AND {_labelled(labeling[ns], params)} = ANY(%(keep)s::text[])"
            for ns in namespaces
        ]
    return namespaces, wheres


def _labelled(rules: Any, params: dict[str, Any]) -> str:
    return label_sql(rules, "i.value", params, now="coalesce(%(label_now)s, now())")


def page_plan(
    op: PageOp, schema: str, rule: TenantRule = DEFAULT_RULE, order: Applied | None = None
) -> Plan[Page]:
    """The page (and the count, pipelined with it): one round trip, and one more while
    ``order`` does not know the page time column ready (no ``order``: it is)."""
    ready = order is None or (yield from order.ask(schema))
    at = "i.page_at" if ready else f"{schema}.item_time(i.value, i.created_at)"
    params: dict[str, Any] = {
        # with an offset, a namespace's walk may start on rows that tie with the first row
        # in another namespace and belong before it: one more
        "cut": op.limit + (2 if op.offset else 1),
        "limit": op.limit + 1,
        "offset": op.offset,
        "skip_cut": op.offset + 1,
        "count_limit": op.count_limit,
    }
    namespaces, wheres = _scope(op, rule, params)
    counted_where = wheres
    if op.after is not None:
        params["after_at"], params["after_key"] = op.after
        cmp = "<" if op.newest_first else ">"
        after = f" AND ({at}, i.key) {cmp} (%(after_at)s, %(after_key)s)"
        wheres = [w + after for w in wheres]
    sql = _page_sql(schema, wheres, newest_first=op.newest_first, skip=op.offset > 0, at=at)
    if op.mirror is not None:
        mirror_tenants = [rule.tenant_of((*op.mirror, *ns)) for ns in namespaces]
        params.update(mirror_params(op.mirror, mirror_tenants))
        sql = mirrored_sql(schema, sql, params)
    page = Query(sql, params)
    counted = Query(_count_sql(schema, counted_where), params) if op.with_total else None
    if op.filter is not None or op.keep is not None:
        sent = (Query(_FILTERED_ON), page, *([counted] if counted else []), Query(_FILTERED_OFF))
        _, rows, *answers = yield Pipelined(sent)
        totals = answers[0] if counted else None
    elif counted is not None:
        rows, totals = yield Pipelined((page, counted))
    else:
        rows, totals = (yield page), None
    total = None if counted is None else int((totals or [{"n": 0}])[0]["n"])
    rows = rows or []
    items = [
        Item(
            value=r["value"],
            key=r["key"],
            namespace=tuple(r["namespace"]),
            created_at=r["created_at"],
            updated_at=r["updated_at"],
        )
        for r in rows[: op.limit]
    ]
    cursors = [(r["page_at"], r["key"]) for r in rows[: op.limit]]
    mirrors = None
    if op.mirror is not None:
        mirrors = tuple(mirror_of(r, op.mirror) for r in rows[: op.limit])
    following = cursors[-1] if len(rows) > op.limit else None
    return Page(items, following, total, tuple(cursors), mirrors)


def count_plan(
    op: CountOp,
    schema: str,
    rule: TenantRule = DEFAULT_RULE,
    index: Applied | None = None,
    fixed: Applied | None = None,
) -> Plan[dict[Any, int]]:
    """Each label's count, in one statement: a label no time changes (``fixed_sql``: on its
    own partial index of store/0011) is counted index-only; of the items whose label may
    depend on the time (``judged_sql``), those an end time alone labels (``past_sql``) are
    counted on store/0011's index of their end time, reading only those past it, and any
    other is read and labelled; the default label's count is every
    live item's (an index-only count of store/0008's index, up to the op's ``limit`` plus the
    others) less the others. Until ``fixed`` knows store/0011 applied, every item some rule
    but the default may label (``candidates_sql``: store/0010's index) is read and labelled,
    and until ``index`` knows store/0010 applied, one walk labels every item (no ``index`` or
    ``fixed``: applied)."""
    params: dict[str, Any] = {"count_limit": op.limit}
    namespaces, wheres = _scope(op, rule, params)
    labeling = dict(zip(op.namespaces, op.labels, strict=True))
    defaults = {default_label(labeling[ns]) for ns in namespaces}
    split = fixed is None or (yield from fixed.ask(schema))
    ready = split or index is None or (yield from index.ask(schema))
    # no one label for the rows left out, or no index of them yet: judge every row
    if len(defaults) > 1 or not ready:
        return (yield from _walk_counts(schema, namespaces, wheres, labeling, params))
    (default,) = defaults
    judge = judged_sql if split else candidates_sql
    scans, counts = [], []
    for n, (ns, where) in enumerate(zip(namespaces, wheres, strict=True)):
        counted = fixed_sql(labeling[ns], "i.value") if split else []
        judged = judge(labeling[ns], "i.value")
        if judged is not None and split and (past := past_sql(labeling[ns], "i.value")):
            # labelled by the end time alone: those past it counted on its index, not judged
            ended = f"{schema}.end_time{past[1]} <= coalesce(%(label_now)s, now())"
            counted.append((past[0], f"{judged} AND {ended}"))
        elif judged is not None:
            scans.append(_label_scan(schema, n, labeling[ns], f"{where} AND {judged}", params))
        for k, (label, holds) in enumerate(counted):
            params[f"fl{n}_{k}"] = label
            counts.append(f"""SELECT %(fl{n}_{k})s::text AS label, count(*) AS n
    FROM {schema}.store_items AS i
    WHERE i.tenant = %(t{n})s AND i.prefix = %(p{n})s AND {where} AND {holds}""")
    judged_rows = "\n    UNION ALL\n    ".join(scans) or "SELECT NULL::text AS label WHERE false"
    fixed_rows = "\n    UNION ALL\n    ".join(counts) or "SELECT NULL::text, 0::bigint"
    # Capped, the default count is at least limit: the others are at most all it lacks.
    limit = "%(count_limit)s + (SELECT count(*) FROM judged) + (SELECT sum(n) FROM fixed)::bigint"
    sql = f"""WITH judged AS MATERIALIZED (
    {judged_rows}
), fixed (label, n) AS MATERIALIZED (
    {fixed_rows}
)
SELECT label, count(*) AS n, false AS every FROM judged GROUP BY label
UNION ALL
SELECT label, n, false FROM fixed
UNION ALL
SELECT NULL, n, true FROM ({_count_sql(schema, wheres, limit)}) AS c"""
    rows = yield Query(sql, params)
    found: dict[Any, int] = {}
    for r in rows or []:
        if not r["every"]:
            found[r["label"]] = found.get(r["label"], 0) + int(r["n"])
    every = sum(int(r["n"]) for r in rows or [] if r["every"])
    found[default] = every - sum(n for label, n in found.items() if label != default)
    return {label: n for label, n in found.items() if n}


def _label_scan(schema: str, n: int, rules: Any, where: str, params: dict[str, Any]) -> str:
    """The label of each item of the op's ``n``-th namespace meeting ``where``."""
    return f"""SELECT {_labelled(rules, params)} AS label FROM {schema}.store_items AS i
    WHERE i.tenant = %(t{n})s AND i.prefix = %(p{n})s AND {where}"""


def _walk_counts(
    schema: str,
    namespaces: list[tuple[str, ...]],
    wheres: list[str],
    labeling: dict[tuple[str, ...], Any],
    params: dict[str, Any],
) -> Plan[dict[Any, int]]:
    """Each label's count by one walk of the namespaces' live items, every one labelled."""
    scans = "\n    UNION ALL\n    ".join(
        _label_scan(schema, n, labeling[ns], where, params)
        for n, (ns, where) in enumerate(zip(namespaces, wheres, strict=True))
    )
    sql = f"SELECT label, count(*) AS n FROM (\n    {scans}\n) AS l GROUP BY label"
    rows = yield Query(sql, params)
    return {r["label"]: int(r["n"]) for r in rows or []}
