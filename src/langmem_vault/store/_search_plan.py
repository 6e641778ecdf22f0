"""A search's plan: the ranked statement (hybrid or keyword), the newest items for a search
without a query, and the keyword statistics they weigh words with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from langgraph.store.base import Item, SearchItem, SearchOp

from langmem_vault._tenants import TenantRule
from langmem_vault.db._runner import Pipelined, Plan, Query, Rows
from langmem_vault.db._vectors import QueryVector
from langmem_vault.store import _plan_settings as ps
from langmem_vault.store import _recent_sql as rq
from langmem_vault.store import _search_sql as sq
from langmem_vault.store import _sql as q
from langmem_vault.store import _vector_sql as vs
from langmem_vault.store._applied import Applied
from langmem_vault.store._filters import FilterBuilder
from langmem_vault.store._lexemes import LexemeStats, StatsCache
from langmem_vault.store._mirrors import (
    MirrorSearchOp,
    mirror_of,
    mirror_params,
    mirrored_sql,
    score_parts_of,
)
from langmem_vault.store._prepare import Key, StoreSettings, prefix_of
from langmem_vault.store._ranking import MAX_EF_SEARCH
from langmem_vault.store._routes import routed


def _search_item(row: dict[str, Any], score: float | None) -> SearchItem:
    return SearchItem(
        namespace=tuple(row["namespace"]),
        key=row["key"],
        value=row["value"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        score=score,
    )


def like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + ".%"


def _filter_where(op: SearchOp, params: dict[str, Any]) -> str:
    """A search's clauses besides its namespace: not expired, and its filter."""
    builder = FilterBuilder("i.value")
    builder.add(op.filter)
    params.update(builder.params)
    return f"{q.NOT_EXPIRED} AND {builder.sql()}"


def namespace_params(namespace_prefix: tuple[str, ...]) -> dict[str, str]:
    """A namespace-prefix clause's parameters: ``ns`` (the prefix), ``ns_like`` (its
    sub-namespaces, for LIKE) and ``ns_end`` (sorts after ``ns`` and every ``ns.*``)."""
    ns = prefix_of(namespace_prefix)
    return {"ns": ns, "ns_like": like_prefix(ns), "ns_end": ns + "/"}  # "/" follows "." in C


def _tenant_where(op: SearchOp, rule: TenantRule, params: dict[str, Any], where: str) -> str:
    """``where``, and the tenant of the search's namespace prefix when it names one (a search
    across users does not): the one partition (Citus shard) the search then reads."""
    tenant = rule.scope_tenant(op.namespace_prefix)
    if tenant is None:
        return where
    params["tenant"] = tenant
    return f"i.tenant = %(tenant)s AND {where}"


def _search_where(op: SearchOp, rule: TenantRule, params: dict[str, Any]) -> str:
    where = _tenant_where(op, rule, params, _filter_where(op, params))
    if not op.namespace_prefix:
        return where
    params.update(namespace_params(op.namespace_prefix))
    return f"(i.prefix = %(ns)s OR i.prefix LIKE %(ns_like)s) AND {where}"


def _stats(rows: Rows) -> LexemeStats:
    if not rows:
        return LexemeStats()
    row = rows[0]
    rarest = None if row["rarest"] is None else float(row["rarest"])
    stats = LexemeStats(row["freqs"], float(row["rows"]), rarest)
    if row.get("prefix_nulls") is None:
        return stats
    listed = sorted(zip(row["prefixes"] or [], row["prefix_freqs"] or [], strict=True))
    rest = max(0.0, 1.0 - float(row["prefix_nulls"]) - sum(f for _, f in listed))
    names, freqs = tuple(n for n, _ in listed), tuple(float(f) for _, f in listed)
    return replace(stats, prefixes=names, prefix_freqs=freqs, prefix_rest=rest)


def _fresh_stats(schema: str, common_rows: int) -> Plan[LexemeStats]:
    """The keyword statistics; ANALYZE first when they are stale (``sql.lexeme_stats``).

    Without them every lexeme counts as rare, and a query of common words would have the GIN
    index read each word's whole posting list (a quarter of a 20k store per word, issue 26);
    autovacuum analyzes a fresh bulk load only a minute or more later. At most once a minute
    per store (the statistics are cached), and only when the table changed that much."""
    read = Query(q.lexeme_stats(schema, common_rows), prepare=True)
    rows = yield read
    if rows and rows[0].get("stale"):
        yield Query(q.analyze_items(schema))
        rows = yield read
    return _stats(rows)


@dataclass
class SearchPage:
    """A search's results, and which of them have a TTL (the ones a read refreshes)."""

    items: list[SearchItem]
    expiring: list[Key]
    #: each item's mirror, for a MirrorSearchOp (store/_mirrors.py)
    mirrors: list[Item | None] | None = None
    #: each item's cosine and keyword coverage, for a MirrorSearchOp
    parts: list[tuple[float | None, float | None]] | None = None


def _page(
    rows: list[tuple[dict[str, Any], SearchItem]], mirror: MirrorSearchOp | None = None
) -> SearchPage:
    expiring = [(i.namespace, i.key) for r, i in rows if r["ttl_minutes"] is not None]
    if mirror is None:
        return SearchPage([i for _, i in rows], expiring)
    mirrors = [mirror_of(r, mirror.mirror) for r, _ in rows]
    parts = [score_parts_of(r) for r, _ in rows]
    return SearchPage([i for _, i in rows], expiring, mirrors, parts)


def _mirrored(
    settings: StoreSettings, sql: str, params: dict[str, Any], mirror: MirrorSearchOp | None
) -> str:
    """``sql``, with each row's mirror when the search is a MirrorSearchOp's (the mirrors'
    tenant is known when the one namespace prefix they all lie under names it)."""
    if mirror is None:
        return sql
    scope = (*mirror.mirror, *mirror.search.namespace_prefix)
    params.update(mirror_params(mirror.mirror, [settings.tenants.scope_tenant(scope)]))
    return mirrored_sql(settings.schema, sql, params)


def _recent_plan(
    op: SearchOp, settings: StoreSettings, mirror: MirrorSearchOp | None = None
) -> Plan[SearchPage]:
    """A search without a query: the newest matching items first. Within a namespace, an
    ordered walk of the namespace's own rows (``_recent_sql.search_recent_in``), on its generic plan
    (planned once per connection: ``ps.RECENT_PLAN_SETTINGS``); the private read walks the
    partial index of the private items instead."""
    sql, params, generic = recent_query(op, settings, mirror)
    rows = yield from run_recent(Query(sql, params, prepare=generic or None), generic)
    return _page([(r, _search_item(r, None)) for r in rows or []], mirror)


def run_recent(query: Query, generic: bool) -> Plan[Any]:
    """The rows of a :func:`recent_query`, under its generic plan's settings when it has one."""
    if generic:
        _, rows, _ = yield Pipelined(
            (Query(ps.RECENT_READ_SETTINGS), query, Query(ps.RESTORE_RECENT_PLAN))
        )
        return rows
    return (yield query)


def recent_query(
    op: SearchOp, settings: StoreSettings, mirror: MirrorSearchOp | None = None
) -> tuple[str, dict[str, Any], bool]:
    """The statement of a search without a query, its parameters, and whether it runs on its
    generic plan (:func:`run_recent`)."""
    schema = settings.schema
    params: dict[str, Any] = {"limit": op.limit, "offset": op.offset}
    where = _tenant_where(op, settings.tenants, params, _filter_where(op, params))
    private = (op.filter or {}).get("private") is True
    if private:
        # Implied by the filter; lets a prepared (generic) plan use store_items_private_idx,
        # so inject's every-turn private read settles on its generic plan by itself (the
        # plan settings below would rule that walk out: it sorts ties by key).
        where += f" AND {q.PRIVATE_PREDICATE}"
    if op.namespace_prefix:
        sql = rq.search_recent_in(schema, where)
        params.update(namespace_params(op.namespace_prefix))
    else:
        sql = rq.search_recent(schema, where)
    generic = bool(op.namespace_prefix) and not private
    return _mirrored(settings, sql, params, mirror), params, generic


def search_plan(
    op: SearchOp,
    settings: StoreSettings,
    query_vectors: dict[str, list[float]],
    stats_cache: StatsCache,
    mirror: MirrorSearchOp | None = None,
    *,
    rank_index: Applied | None = None,
) -> Plan[SearchPage]:
    """A search in one round trip: the ranked statement (which finds the query's lexemes and,
    for a scoped search, counts the scope itself) with its HNSW settings. The keyword
    statistics are read first when the cache is stale (once a minute). :func:`batch_plan`
    runs a batch's searches side by side. ``rank_index``: whether store/0009's index is
    built (None: it is); a namespace's search asks until it is, then ranks from it."""
    schema = settings.schema
    if not op.query:
        return (yield from _recent_plan(op, settings, mirror))
    params: dict[str, Any] = {"limit": op.limit, "offset": op.offset}
    where = _search_where(op, settings.tenants, params)
    wanted = op.offset + op.limit
    ranking = settings.ranking
    params |= {
        "k": ranking.candidate_count(wanted),
        "wanted": wanted,
        "text_weight": ranking.text_weight,
        "text_config": ranking.text_config,
        "query": op.query,
        "common_rows": ranking.common_rows,
    }
    stats = stats_cache.get()
    if stats is None:
        stats = yield from _fresh_stats(schema, ranking.common_rows)
        stats_cache.put(stats)
    params |= stats.params()
    scope = scope_key = small = None
    if settings.hybrid and (op.namespace_prefix or op.filter):
        scope = "items" if op.filter else "namespace"
        params["exact_rows"] = ranking.exact_scan_rows
        flt = json.dumps(op.filter, sort_keys=True, default=repr)
        scope_key = (scope, params.get("ns", ""), flt)
        small = stats_cache.scopes.get(scope_key)
        if small is None and scope == "namespace":
            # Known small from the statistics: no count (the first search of each namespace
            # counted its items, reading the namespace's primary-key range: 0.6 ms a search,
            # more on a server just started; bench/RESULTS.md, issue 26/28 session 11).
            small = stats.small_namespace(params["ns"], ranking.exact_scan_rows)
        params["known_small"] = sq.known_small(small)
    if settings.hybrid:
        params["qv"] = QueryVector(query_vectors[op.query])
    order = ranking.order_sql(params, hybrid=settings.hybrid)
    score = ranking.score_sql(hybrid=settings.hybrid)
    tenant = "tenant" in params
    # A namespace's verdict is a parameter of its one statement (search_ranked).
    shape = None if scope == "namespace" else small
    key_bytes = vs.namespace_key_bytes(settings.index["dims"]) if settings.index else 0
    # ranked from the index alone unless a boost reads the candidates' values
    covered = scope == "namespace" and not ranking.boosts
    if covered and rank_index is not None:
        covered = yield from rank_index.ask(schema)
    sql = sq.search_ranked(
        schema,
        where,
        score,
        order,
        hybrid=settings.hybrid,
        scope=scope,
        small=shape,
        tenant=tenant,
        key_bytes=key_bytes,
        covered=covered,
    )
    sql = _mirrored(settings, sql, params, mirror)
    if settings.hybrid:
        ef = min(params["k"], MAX_EF_SEARCH)
        hnsw = tuple(Query(q, prepare=False) for q in ps.hnsw_settings(ef))
        # Without a filter (plain, or a namespace: small, large or not counted yet, when its
        # first search of the minute counts it in the statement), one statement for every
        # query and namespace, run with its generic plan, prepared on its first run (no
        # planning: 1.3-2 ms of a namespace search's ~3 at 20k items, 3-11 ms for the
        # first run of the namespace's statement on a connection; issue 26). Two values of
        # k (a literal: one statement each): the store's own, and a page of ``candidates``
        # (k = 2 x limit: inject's 50), which was planned on its first 11 runs of every
        # pooled connection, the turns that made inject's p95 (bench/RESULTS.md, session 15).
        if not op.filter and params["k"] in (ranking.candidates, 2 * ranking.candidates):
            sql = ps.literal_k(sql, params["k"])
            # One user's search names its partitions, once the store knows them (_routes.py):
            # the tenant's first search learns them in the same round trip.
            routes = stats_cache.routes
            route = tenant and mirror is None
            leaves = routes.leaves(params["tenant"]) if route else None
            if leaves is not None:
                sql = routed(sql, schema, leaves)
            lookups = routes.lookups(schema, params["tenant"]) if route else ()
            answers = yield Pipelined(
                (
                    *hnsw,
                    Query(ps.PLAIN_SEARCH_SETTINGS),
                    Query(sql, params, prepare=True),
                    Query(ps.RESTORE_PLAN_MODE),
                    *lookups,
                )
            )
            *_, rows, _ = answers[: len(answers) - len(lookups)]
            if lookups:
                routes.learn(params["tenant"], answers[len(answers) - len(lookups) :])
        else:
            *_, rows = yield Pipelined((*hnsw, Query(sql, params)))
    else:
        rows = yield Query(sql, params)
    if scope_key is not None and small is None and rows:
        # The statement counted the scope: later searches of it skip the count (scopes.py).
        small = bool(rows[0]["small_scope"])
        stats_cache.scopes.put(scope_key, small=small)
    if scope == "items" and not small and (not rows or rows[0]["walked"] < params["k"]):
        # The filtered walk of the HNSW index ran out before it found k candidates (pgvector's
        # iterative scan stops at hnsw.max_scan_tuples, sometimes sooner): nearer matches may
        # lie past where it stopped. Score the filter's items exactly instead, as a small
        # scope's (a page may still be short: the fill step below then completes it). Not
        # remembered: whether a walk runs out depends on the query, and one far query must
        # not send a broad scope's next searches to the exact scan.
        exact = sq.search_ranked(
            schema, where, score, order, hybrid=True, scope=scope, small=True, tenant=tenant
        )
        rows = yield Query(_mirrored(settings, exact, params, mirror), params)
    ranked = [(r, _search_item(r, float(r["score"]))) for r in rows or []]
    if len(ranked) < wanted:
        # Fewer candidates than the page needs: score the rest exactly, un-indexed items last
        # (as InMemoryStore appends them).
        params["fill"] = wanted - len(ranked)
        params["ranked_prefixes"] = [prefix_of(item.namespace) for _, item in ranked]
        params["ranked_keys"] = [item.key for _, item in ranked]
        fill = sq.search_fill(schema, where, score, hybrid=settings.hybrid)
        rest = yield Query(_mirrored(settings, fill, params, mirror), params)
        ranked += [(r, _search_item(r, r["score"])) for r in rest or []]
    return _page(ranked[op.offset : wanted], mirror)
