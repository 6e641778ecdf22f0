"""The plan of a :class:`~langmem_vault.store._pages.PageOp`: one ordered index walk per
namespace (store/0005), and the count beside it in the same round trip."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import Item

from langmem_vault._tenants import DEFAULT_RULE, TenantRule
from langmem_vault.db._runner import Pipelined, Plan, Query
from langmem_vault.store import _sql as q
from langmem_vault.store._filters import FilterBuilder
from langmem_vault.store._mirrors import mirror_of, mirror_params, mirrored_sql
from langmem_vault.store._pages import Page, PageOp

__all__ = ["page_plan"]


def _page_sql(s: str, branches: int, where: str, *, newest_first: bool) -> str:
    """One ordered walk of the index per namespace, each cut at offset + limit + 1, merged and
    cut again (the shape of ``sql.search_recent_in``)."""
    at = item_time(s)
    order = f"{at} DESC, i.key DESC" if newest_first else f"{at}, i.key"
    walks = "\n    UNION ALL\n    ".join(
        f"""(SELECT {q.ITEM_COLUMNS}, i.prefix, {at} AS page_at FROM {s}.store_items AS i
    WHERE i.tenant = %(t{n})s AND i.prefix = %(p{n})s AND {where}
    ORDER BY {order} LIMIT %(cut)s)"""
        for n in range(branches)
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


def _count_sql(s: str, where: str) -> str:
    """The matches, counted up to %(count_limit)s (NULL: LIMIT ALL)."""
    return f"""SELECT count(*) AS n FROM (
    SELECT FROM {s}.store_items AS i
    WHERE {q.TENANTS} AND i.prefix = ANY(%(prefixes)s::text[]) AND {where}
    LIMIT %(count_limit)s) AS m"""


def page_plan(op: PageOp, schema: str, rule: TenantRule = DEFAULT_RULE) -> Plan[Page]:
    """The page (and the count, pipelined with it): one round trip."""
    builder = FilterBuilder("i.value", containment=False)
    builder.add(op.filter)
    params: dict[str, Any] = {
        **builder.params,
        "cut": op.offset + op.limit + 1,
        "limit": op.limit + 1,
        "offset": op.offset,
        "count_limit": op.count_limit,
    }
    where = f"{q.NOT_EXPIRED} AND {builder.sql()}"
    if op.after is not None:
        params["after_at"], params["after_key"] = op.after
        cmp = "<" if op.newest_first else ">"
        where += f" AND ({item_time(schema)}, i.key) {cmp} (%(after_at)s, %(after_key)s)"
    namespaces = list(dict.fromkeys(op.namespaces))
    prefixes = [".".join(ns) for ns in namespaces]
    tenants = [rule.tenant_of(ns) for ns in namespaces]
    params.update({f"p{n}": p for n, p in enumerate(prefixes)})
    params.update({f"t{n}": t for n, t in enumerate(tenants)})
    params["prefixes"], params["tenants"] = prefixes, list(dict.fromkeys(tenants))
    sql = _page_sql(schema, len(prefixes), where, newest_first=op.newest_first)
    if op.mirror is not None:
        mirror_tenants = [rule.tenant_of((*op.mirror, *ns)) for ns in namespaces]
        params.update(mirror_params(op.mirror, mirror_tenants))
        sql = mirrored_sql(schema, sql, params)
    page = Query(sql, params)
    if op.with_total:
        counted = Query(_count_sql(schema, f"{q.NOT_EXPIRED} AND {builder.sql()}"), params)
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
