"""The plans of a :class:`~langmem_vault.store._pages.PageOp` (one ordered index walk per
namespace, store/0005, and the count beside it in the same round trip) and of a
:class:`~langmem_vault.store._pages.CountOp`."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import Item

from langmem_vault._tenants import DEFAULT_RULE, TenantRule
from langmem_vault.db._runner import Pipelined, Plan, Query
from langmem_vault.store import _sql as q
from langmem_vault.store._filters import FilterBuilder
from langmem_vault.store._labels import label_sql
from langmem_vault.store._mirrors import mirror_of, mirror_params, mirrored_sql
from langmem_vault.store._pages import CountOp, Page, PageOp

__all__ = ["count_plan", "page_plan"]


def _page_sql(s: str, wheres: list[str], *, newest_first: bool) -> str:
    """One ordered walk of the index per namespace (its own ``wheres``), each cut at
    offset + limit + 1, merged and cut again (the shape of ``sql.search_recent_in``)."""
    at = item_time(s)
    order = f"{at} DESC, i.key DESC" if newest_first else f"{at}, i.key"
    walks = "\n    UNION ALL\n    ".join(
        f"""(SELECT {q.ITEM_COLUMNS}, i.prefix, {at} AS page_at FROM {s}.store_items AS i
    WHERE i.tenant = %(t{n})s AND i.prefix = %(p{n})s AND {where}
    ORDER BY {order} LIMIT %(cut)s)"""
        for n, where in enumerate(wheres)
    )
    return f"""
SELECT * FROM (
    {walks}
) AS i
ORDER BY {"i.page_at DESC, i.key DESC" if newest_first else "i.page_at, i.key"}, i.prefix
LIMIT %(limit)s OFFSET %(offset)s"""


def item_time(s: str) -> str:
    """An item's creation time for paging: the expression of store_items_prefix_created_idx
    (its value's ``created_at`` when a timestamp, else the time it was first stored)."""
    return f"{s}.item_time(i.value, i.created_at)"


def _count_sql(s: str, wheres: list[str]) -> str:
    """The matches, counted up to %(count_limit)s (NULL: LIMIT ALL)."""
    if len(set(wheres)) == 1:  # one condition for all: one scan of the namespaces
        return f"""SELECT count(*) AS n FROM (
    SELECT FROM {s}.store_items AS i
    WHERE {q.TENANTS} AND i.prefix = ANY(%(prefixes)s::text[]) AND {wheres[0]}
    LIMIT %(count_limit)s) AS m"""
    scans = "\n    UNION ALL\n    ".join(
        f"""SELECT FROM {s}.store_items AS i
    WHERE i.tenant = %(t{n})s AND i.prefix = %(p{n})s AND {where}"""
        for n, where in enumerate(wheres)
    )
    return f"SELECT count(*) AS n FROM (\n    {scans}\n    LIMIT %(count_limit)s) AS m"


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


def page_plan(op: PageOp, schema: str, rule: TenantRule = DEFAULT_RULE) -> Plan[Page]:
    """The page (and the count, pipelined with it): one round trip."""
    params: dict[str, Any] = {
        "cut": op.offset + op.limit + 1,
        "limit": op.limit + 1,
        "offset": op.offset,
        "count_limit": op.count_limit,
    }
    namespaces, wheres = _scope(op, rule, params)
    counted_where = wheres
    if op.after is not None:
        params["after_at"], params["after_key"] = op.after
        cmp = "<" if op.newest_first else ">"
        after = f" AND ({item_time(schema)}, i.key) {cmp} (%(after_at)s, %(after_key)s)"
        wheres = [w + after for w in wheres]
    sql = _page_sql(schema, wheres, newest_first=op.newest_first)
    if op.mirror is not None:
        mirror_tenants = [rule.tenant_of((*op.mirror, *ns)) for ns in namespaces]
        params.update(mirror_params(op.mirror, mirror_tenants))
        sql = mirrored_sql(schema, sql, params)
    page = Query(sql, params)
    if op.with_total:
        counted = Query(_count_sql(schema, counted_where), params)
        rows, totals = yield Pipelined((page, counted))
        total = int((totals or [{"n": 0}])[0]["n"])
    else:
        rows, total = (yield page), None
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


def count_plan(op: CountOp, schema: str, rule: TenantRule = DEFAULT_RULE) -> Plan[dict[Any, int]]:
    """Each label's count: one statement, one walk of each namespace's live items."""
    params: dict[str, Any] = {}
    namespaces, wheres = _scope(op, rule, params)
    labeling = dict(zip(op.namespaces, op.labels, strict=True))
    scans = "\n    UNION ALL\n    ".join(
        f"""SELECT {_labelled(labeling[ns], params)} AS label FROM {schema}.store_items AS i
    WHERE i.tenant = %(t{n})s AND i.prefix = %(p{n})s AND {where}"""
        for n, (ns, where) in enumerate(zip(namespaces, wheres, strict=True))
    )
    sql = f"SELECT label, count(*) AS n FROM (\n    {scans}\n) AS l GROUP BY label"
    rows = yield Query(sql, params)
    return {r["label"]: int(r["n"]) for r in rows or []}
