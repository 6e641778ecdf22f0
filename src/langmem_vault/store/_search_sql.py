"""The store's ranked search statement (candidates from each retriever, re-scored exactly, best
first) and the fill step after it; their keyword side is in _keyword_sql.py, their vector side
in _vector_sql.py, the settings they run under in _plan_settings.py, the newest-first reads in
_recent_sql.py. ``{s}`` is the (validated) schema name; every value travels as a query
parameter."""

from __future__ import annotations

from langmem_vault.store import _vector_sql as vs
from langmem_vault.store._keyword_sql import COVERAGE, keyword_candidates, terms
from langmem_vault.store._sql import ITEM_COLUMNS


def known_small(small: bool | None) -> str:
    """A scope's verdict as ``search_ranked``'s ``%(known_small)s``: text whatever it is
    ('' when unknown), as psycopg prepares a statement per parameter types (a bool and a
    None would make two).

    >>> [known_small(v) for v in (None, True, False)]
    ['', 'true', 'false']
    """
    return "" if small is None else str(small).lower()


def search_ranked(
    s: str,
    where: str,
    score: str,
    order: str,
    *,
    hybrid: bool,
    scope: str | None = None,
    small: bool | None = None,
    tenant: bool = False,
    key_bytes: int = 0,
    covered: bool = False,
) -> str:
    """The whole search in one statement: the query's terms, candidates from each retriever,
    re-scored exactly, best first.

    ``scope`` (hybrid stores) picks how vector candidates are found: None, by the HNSW index;
    ``"items"`` (a filter), exactly when at most ``%(exact_rows)s`` items match, else by a
    walk of the index that checks each candidate against the filter (column ``walked``: the
    candidates it found); ``"namespace"`` (a namespace prefix, no filter), exactly when the
    namespace holds at most ``%(exact_rows)s`` vectors, else by the index. The statement
    counts (no further than one past the bound), runs only the branch the count picks (the
    other is gated off by a one-time filter, so a scoped search is one round trip too) and
    returns the verdict in column ``small_scope``; unless the caller knows it
    (``scopes.ScopeSizes``) and passes it as ``%(known_small)s`` (``known_small``), when
    nothing is counted. A filter's known verdict (``small``) builds a statement of only the
    branch it picks instead; a namespace's is a parameter, so every search of a namespace,
    counted or not, small or large, runs one statement: one generic plan per connection, made
    once (a plan per verdict cost the second search of each connection 4-8 ms at 20k items,
    planning the large namespace's statement; issue 26).

    Each retriever returns whole rows, so candidates need no second visit to store_items, and
    ``scored`` is materialised so each candidate's cosine and coverage are computed once.
    ``tenant``: ``where`` names one tenant (``%(tenant)s``); the vector-only reads name it too.
    ``key_bytes``: the store's :func:`namespace_key_bytes` (0: no namespace index).
    ``covered`` (a namespace's search ranked by score alone, store/0009 applied): the
    candidates carry only what ranks them, from ``store_items_rank_idx``, and the page's rows
    alone are read from the heap (:func:`_page_rows`).
    """
    covered = covered and hybrid and scope == "namespace"
    columns = _RANK_COLUMNS if covered else f"i.tenant, i.prefix, {ITEM_COLUMNS}, i.search_tsv"
    alone = "v.tenant = %(tenant)s AND " if tenant else ""
    keyword = keyword_candidates(s, f"{columns}, NULL::float8 AS vcos", where, hybrid=hybrid)
    verdict = ""
    if hybrid:
        counted = ""
        if scope == "items" and small is False:
            vec = f"vec AS (\n    {vs.vectors_ann_filtered(s, columns, where)}\n)"
        elif scope is None:
            vec = f"vec AS (\n    {vs.vectors_ann(s, columns, where)}\n)"
        elif scope == "items" and small:
            vec = f"vec AS (\n    {vs.vectors_of_items(s, columns, where)}\n)"
        else:
            gated = f"{where} AND (SELECT yes FROM small)"
            if scope == "namespace":
                count = vs.NAMESPACE_ITEMS.format(s=s, tenant=alone.replace("v.", "i."))
                exact = vs.vectors_of_namespace(s, columns, gated)
            else:
                count = f"SELECT 1 FROM {s}.store_items AS i WHERE {where}"
                exact = vs.vectors_of_items(s, columns, gated)
            fewer = f"""(
        SELECT count(*) <= %(exact_rows)s FROM ({count} LIMIT %(exact_rows)s + 1) AS x)"""
            if scope == "namespace":
                # No more vectors than the bound: no more items with a vector either, so small
                # (items without one may make it large: scored exactly all the same, at what
                # its vectors cost); else its items are counted. OR stops at the first true.
                rows = vs.namespace_branches(
                    vs.NAMESPACE_VECTOR_ROWS, s, alone, key_bytes, vs.COVERED
                )
                fewer = f"""(
        SELECT count(*) <= %(exact_rows)s FROM ({rows}
        LIMIT %(exact_rows)s + 1) AS x)
        OR {fewer}"""
            counted = f"""
small AS MATERIALIZED (
    SELECT coalesce(nullif(%(known_small)s, '')::bool, {fewer}) AS yes
),"""
            if scope == "namespace":
                counted += vs.namespace_vectors(s, alone, key_bytes)
                ann = vs.vectors_ann(s, columns, f"{where} AND NOT (SELECT yes FROM small)")
            else:
                ann = vs.vectors_ann_filtered(s, columns, where, "NOT (SELECT yes FROM small)")
            vec = f"vec AS (\n    ({exact})\n    UNION ALL\n    ({ann})\n)"
            verdict = ", (SELECT yes FROM small) AS small_scope"
        if scope == "items" and small is not True:
            # How many candidates the index walk found: fewer than k means it ran out.
            verdict += ", (SELECT count(*) FROM vec) AS walked"
        candidates = f"""{keyword},{counted}
{vec},
cand AS (
    SELECT DISTINCT ON (prefix, key) * FROM (SELECT * FROM vec UNION ALL SELECT * FROM kw) AS u
    ORDER BY prefix, key, vcos DESC NULLS LAST
)"""
        # COALESCE runs the probe only for candidates no vector branch found. When the search
        # names one tenant the probe names it as the parameter alone (every candidate is the
        # tenant's), not through i.tenant too: the planner merges the two, and then neither a
        # custom plan (10.9 ms of planning against 4.1 at 1M items in 64 partitions, session
        # 11) nor the executor's start-up (all 64 partitions opened and locked at every
        # search, session 12) prunes the probe to the tenant's partition (bench/RESULTS.md).
        tenant_of_v = alone or "v.tenant = i.tenant AND "
        cos = f"""coalesce(i.vcos, (SELECT max(1 - ({vs.DISTANCE})) FROM {s}.store_vectors AS v
         WHERE {tenant_of_v}v.prefix = i.prefix AND v.key = i.key))"""
    else:
        candidates = f"{keyword},\ncand AS (SELECT * FROM kw)"
        cos = "NULL::float8"
    head = f"""
WITH {terms(hybrid=hybrid)},
{candidates},
scored AS MATERIALIZED (
    SELECT i.*, {cos} AS cos, {COVERAGE} AS coverage FROM cand AS i
)"""
    if covered:
        return head + _page_rows(s, score, order, verdict, tenant=tenant)
    return f"""{head}
SELECT namespace, key, value, created_at, updated_at, ttl_minutes, {score} AS score,
       cos, coverage{verdict}
FROM scored
ORDER BY {order} DESC, updated_at DESC LIMIT %(wanted)s"""


# What ranks a candidate (its key, its text's lexemes, its time, its expiry in the filter):
# all in store_items_rank_idx (store/0009), so a namespace's 50 nearest candidates are ranked
# from that index's leaves (index-only), where their rows lie one per heap page, and only the
# page's rows are then read from the heap (bench/RESULTS.md, issue 28 session 13).
_RANK_COLUMNS = "i.tenant, i.prefix, i.key, i.updated_at, i.search_tsv"


def _page_rows(s: str, score: str, order: str, verdict: str, *, tenant: bool) -> str:
    """The page: the best ``%(wanted)s`` candidates ranked, then each one's row (one
    primary-key probe each; the nested loop keeps the ranked order)."""
    of_r = "%(tenant)s" if tenant else "r.tenant"
    return f"""
SELECT i.namespace, i.key, i.value, i.created_at, i.updated_at, i.ttl_minutes, r.score,
       r.cos, r.coverage{verdict}
FROM (SELECT tenant, prefix, key, updated_at, {score} AS score, {order} AS rank, cos, coverage
      FROM scored ORDER BY {order} DESC, updated_at DESC LIMIT %(wanted)s) AS r
CROSS JOIN LATERAL (SELECT * FROM {s}.store_items AS i
                    WHERE i.tenant = {of_r} AND i.prefix = r.prefix AND i.key = r.key
                    LIMIT 1) AS i
ORDER BY r.rank DESC, r.updated_at DESC LIMIT %(wanted)s"""


def search_fill(s: str, where: str, score: str, *, hybrid: bool) -> str:
    """The rest of a page the candidates could not fill, after the ranked items.

    Every other matching item, scored exactly (the candidates can miss indexed items when
    items have several vectors each), and the un-indexed ones last with no score, as
    InMemoryStore appends them.
    """
    cos = (
        f"""(SELECT max(1 - ({vs.DISTANCE})) FROM {s}.store_vectors AS v
         WHERE v.tenant = i.tenant AND v.prefix = i.prefix AND v.key = i.key)"""
        if hybrid
        else "NULL::float8"
    )
    return f"""
WITH {terms(hybrid=hybrid)},
rest AS MATERIALIZED (
    SELECT {ITEM_COLUMNS}, i.indexed, {cos} AS cos, {COVERAGE} AS coverage
    FROM {s}.store_items AS i
    WHERE (i.prefix, i.key) NOT IN (
            SELECT * FROM unnest(%(ranked_prefixes)s::text[], %(ranked_keys)s::text[]))
      AND {where}
)
SELECT *, CASE WHEN indexed THEN {score} END AS score FROM rest
ORDER BY score DESC NULLS LAST, updated_at DESC, key LIMIT %(fill)s"""
