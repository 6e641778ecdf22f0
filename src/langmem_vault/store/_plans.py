"""The store's sans-IO core: validate a batch of ops, then a plan of SQL that executes it.

``prepare_batch`` does every check and extracts the texts to embed before any I/O, so a bad
op fails the whole batch with nothing written. The driver embeds (documents in one call,
queries through an LRU cache) and runs ``batch_plan`` in one transaction. As in
InMemoryStore, the reads of a batch see the data as it was before the batch's writes, and the
last put to a key wins.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import (
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    tokenize_path,
)

try:  # re-exported (reembed.py)
    from pgvector import Vector as Vector
except ImportError:  # pgvector < 0.4 (langchain-postgres 0.0.x pins 0.3.6) has no top-level names
    from pgvector.utils import Vector as Vector

from langmem_vault.db._migrations import migrate_plan
from langmem_vault.db._runner import Pipelined, Plan, Query, Rows, gather
from langmem_vault.db._vectors import QueryVector
from langmem_vault.store import _sql as q
from langmem_vault.store._entities import ExpandOp, LinkOp, check_expand, check_link
from langmem_vault.store._entity_plans import (
    clear_links_plan,
    expand_plan,
    insert_links_plan,
    link_names,
    purge_entities_sql,
)
from langmem_vault.store._filters import FilterBuilder
from langmem_vault.store._lexemes import LexemeStats, StatsCache
from langmem_vault.store._mirrors import (
    Mirrored,
    MirrorSearchOp,
    check_mirror,
    mirror_of,
    mirror_params,
    mirrored_sql,
    score_parts_of,
)
from langmem_vault.store._page_plan import page_plan
from langmem_vault.store._pages import PageOp, check_page_op
from langmem_vault.store._ranking import MAX_EF_SEARCH, SearchRanking
from langmem_vault.store._validation import (
    InvalidValueError,
    check_field,
    check_key,
    check_minutes,
    check_namespace,
    check_page,
    check_query,
    encode_value,
)

Key = tuple[tuple[str, ...], str]


@dataclass(frozen=True)
class StoreSettings:
    """What the plans need to know about a store (no connections, no models)."""

    schema: str
    index: IndexConfig | None
    ranking: SearchRanking
    max_value_bytes: int

    @property
    def hybrid(self) -> bool:
        return self.index is not None

    @property
    def fields(self) -> list[str]:
        if self.index is None:
            return ["$"]
        return list(self.index.get("fields") or ["$"])


#: indexed when none of the configured ``fields`` is in a value (LangMem's value shape)
FALLBACK_FIELDS = ["content"]


@dataclass
class PreparedPut:
    prefix: str
    key: str
    value_json: str | None  # None deletes
    ttl: float | None
    text: str | None  # full-text document; None when not indexed
    embed: list[tuple[str, str]] = field(default_factory=list)  # (field name, text)
    # index=False: leave an existing item's index as it is (as InMemoryStore and PostgresStore
    # do), so value-only updates such as access counters cost no embedding.
    reindex: bool = True


#: what ``batch`` takes: langgraph's ops, and this store's own (store/_mirrors.py,
#: store/_entities.py, store/_pages.py)
StoreOp = Op | MirrorSearchOp | LinkOp | ExpandOp | PageOp


@dataclass
class PreparedBatch:
    ops: list[StoreOp]
    puts: dict[Key, PreparedPut]
    queries: list[str]  # distinct search queries, to embed
    links: list[LinkOp] = field(default_factory=list)

    @property
    def read_only(self) -> bool:
        """No puts: the batch needs no transaction block. Its reads each see the latest
        committed data, as in one at READ COMMITTED, and its only possible write, a TTL
        refresh of items it read, is one statement of its own (``sql.refresh_ttl``)."""
        return not self.puts and not self.links

    @property
    def doc_texts(self) -> list[str]:
        """Distinct texts to embed for this batch's puts and entity names, first-seen order."""
        texts = (t for p in self.puts.values() for _, t in p.embed)
        return list(dict.fromkeys([*texts, *link_names(self.links)]))


def prefix_of(namespace: tuple[str, ...]) -> str:
    return ".".join(namespace)


def _string_leaves(obj: Any) -> Iterable[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _string_leaves(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _string_leaves(v)


def index_texts(value: Mapping[str, Any], paths: Sequence[str]) -> list[tuple[str, str]]:
    """(field name, text) pairs to index, named as InMemoryStore names its vectors."""
    found: list[tuple[str, str]] = []
    for path in paths:
        texts = get_text_at_path(value, path if path == "$" else tokenize_path(path))
        if len(texts) == 1:
            found.append((path, texts[0]))
        else:
            found.extend((f"{path}.{i}", t) for i, t in enumerate(texts))
    return [(name, text) for name, text in found if text]


def _prepare_put(op: PutOp, settings: StoreSettings) -> PreparedPut:
    check_namespace(op.namespace)
    check_key(op.key)
    prefix = prefix_of(op.namespace)
    if op.value is None:
        return PreparedPut(prefix, op.key, None, None, None)
    value_json = encode_value(op.value, max_bytes=settings.max_value_bytes)
    if op.ttl is not None:
        check_minutes(op.ttl)
    if op.index is False:
        return PreparedPut(prefix, op.key, value_json, op.ttl, None, reindex=False)
    if op.index is not None:
        if not isinstance(op.index, list):
            raise InvalidValueError(f"index must be None, False or a list of paths: {op.index!r}")
        for path in op.index:
            check_field(path, "index path")
    paths = op.index if op.index is not None else settings.fields
    pairs = index_texts(op.value, paths)
    if not pairs and op.index is None and paths != ["$"]:
        # None of the store's index fields is in this value. LangMem's tools store
        # {"content": ...} where the memory nodes index ["text"]: index "content" too rather
        # than leave LangMem's memories unsearchable with a score of None.
        pairs = index_texts(op.value, FALLBACK_FIELDS)
    if not settings.hybrid and paths == ["$"]:
        # Keyword-only stores index the value's strings, not its JSON syntax.
        pairs = [("$", "\n".join(_string_leaves(op.value)))] if op.value else []
        pairs = [(n, t) for n, t in pairs if t]
    text = "\n".join(t for _, t in pairs) if pairs else None
    return PreparedPut(prefix, op.key, value_json, op.ttl, text, pairs if settings.hybrid else [])


def _check_read(op: StoreOp) -> None:
    if isinstance(op, LinkOp):
        check_link(op)
    elif isinstance(op, ExpandOp):
        check_expand(op)
    elif isinstance(op, MirrorSearchOp):
        check_mirror(op)
        _check_read(op.search)
    elif isinstance(op, PageOp):
        check_page_op(op)
    elif isinstance(op, GetOp):
        check_namespace(op.namespace)
        check_key(op.key)
    elif isinstance(op, SearchOp):
        check_namespace(op.namespace_prefix, allow_empty=True)
        if op.query is not None:
            check_query(op.query)
        check_page("limit", op.limit)
        check_page("offset", op.offset)
        FilterBuilder().add(op.filter)  # refuses a bad filter before any I/O
    elif isinstance(op, ListNamespacesOp):
        for cond in op.match_conditions or ():
            if cond.match_type not in ("prefix", "suffix"):
                raise InvalidValueError(f"unsupported match type {cond.match_type!r}")
            check_namespace(tuple(cond.path), allow_empty=True)
        check_page("limit", op.limit)
        check_page("offset", op.offset)
        if op.max_depth is not None:
            check_page("max_depth", op.max_depth)
            if op.max_depth < 1:
                raise InvalidValueError(f"max_depth must be >= 1, got {op.max_depth}")
    elif not isinstance(op, PutOp):
        raise ValueError(f"Unknown operation type: {type(op)}")


def prepare_batch(ops: Iterable[StoreOp], settings: StoreSettings) -> PreparedBatch:
    """Validate every op and collect the work; raises before any I/O on bad input."""
    ops = list(ops)
    puts: dict[Key, PreparedPut] = {}
    queries: dict[str, None] = {}
    links: list[LinkOp] = []
    for op in ops:
        _check_read(op)
        if isinstance(op, PutOp):
            puts[(op.namespace, op.key)] = _prepare_put(op, settings)
            continue
        if isinstance(op, LinkOp):
            links.append(op)
            continue
        if isinstance(op, ExpandOp):
            if op.query and settings.hybrid:
                queries[op.query] = None
            continue
        search = op.search if isinstance(op, MirrorSearchOp) else op
        if isinstance(search, SearchOp) and search.query and settings.hybrid:
            queries[search.query] = None
    return PreparedBatch(ops, puts, list(queries), links)


def check_vectors(vectors: Sequence[Sequence[float]], count: int, dims: int, what: str) -> None:
    """Embeddings must come back one per text, each of the configured dimension."""
    if len(vectors) != count:
        raise InvalidValueError(f"the embedder returned {len(vectors)} {what} for {count} texts")
    for vector in vectors:
        if len(vector) != dims:
            raise InvalidValueError(
                f"the embedder returned a {len(vector)}-dimensional {what[:-1]}; the store's "
                f"index is configured with dims={dims}"
            )


# ---------------------------------------------------------------------------------------------
# The plan


def _item(row: dict[str, Any]) -> Item:
    return Item(
        value=row["value"],
        key=row["key"],
        namespace=tuple(row["namespace"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _search_item(row: dict[str, Any], score: float | None) -> SearchItem:
    return SearchItem(
        namespace=tuple(row["namespace"]),
        key=row["key"],
        value=row["value"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        score=score,
    )


def _like_prefix(prefix: str) -> str:
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
    return {"ns": ns, "ns_like": _like_prefix(ns), "ns_end": ns + "/"}  # "/" follows "." in C


def _search_where(op: SearchOp, params: dict[str, Any]) -> str:
    where = _filter_where(op, params)
    if not op.namespace_prefix:
        return where
    params.update(namespace_params(op.namespace_prefix))
    return f"(i.prefix = %(ns)s OR i.prefix LIKE %(ns_like)s) AND {where}"


def _stats(rows: Rows) -> LexemeStats:
    freqs = {r["lexeme"]: float(r["freq"]) for r in rows or [] if r["lexeme"] is not None}
    return LexemeStats(freqs, float(rows[0]["rows"]) if rows else 0.0)


def _fresh_stats(schema: str, common_rows: int) -> Plan[LexemeStats]:
    """The keyword statistics; ANALYZE first when they are stale (``sql.lexeme_stats``).

    Without them every lexeme counts as rare, and a query of common words would have the GIN
    index read each word's whole posting list (a quarter of a 20k store per word, issue 26);
    autovacuum analyzes a fresh bulk load only a minute or more later. At most once a minute
    per store (the statistics are cached), and only when the table changed that much."""
    params = {"schema_name": schema, "common_rows": common_rows}
    rows = yield Query(q.lexeme_stats(schema), params)
    if rows and rows[0].get("stale"):
        yield Query(q.analyze_items(schema))
        rows = yield Query(q.lexeme_stats(schema), params)
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


def _mirrored(schema: str, sql: str, params: dict[str, Any], mirror: MirrorSearchOp | None) -> str:
    """``sql``, with each row's mirror when the search is a MirrorSearchOp's."""
    if mirror is None:
        return sql
    params.update(mirror_params(mirror))
    return mirrored_sql(schema, sql)


def _recent_plan(
    op: SearchOp, schema: str, mirror: MirrorSearchOp | None = None
) -> Plan[SearchPage]:
    """A search without a query: the newest matching items first. Within a namespace, an
    ordered walk of the namespace's own rows (``sql.search_recent_in``)."""
    params: dict[str, Any] = {"limit": op.limit, "offset": op.offset}
    where = _filter_where(op, params)
    if (op.filter or {}).get("private") is True:
        # Implied by the filter; lets a prepared (generic) plan use store_items_private_idx,
        # so inject's every-turn private read is not planned again each turn.
        where += f" AND {q.PRIVATE_PREDICATE}"
    if op.namespace_prefix:
        sql = q.search_recent_in(schema, where)
        params.update(namespace_params(op.namespace_prefix))
    else:
        sql = q.search_recent(schema, where)
    rows = yield Query(_mirrored(schema, sql, params, mirror), params)
    return _page([(r, _search_item(r, None)) for r in rows or []], mirror)


def _search_plan(
    op: SearchOp,
    settings: StoreSettings,
    query_vectors: dict[str, list[float]],
    stats_cache: StatsCache,
    mirror: MirrorSearchOp | None = None,
) -> Plan[SearchPage]:
    """A search in one round trip: the ranked statement (which finds the query's lexemes and,
    for a scoped search, counts the scope itself) with its HNSW settings. The keyword
    statistics are read first when the cache is stale (once a minute). :func:`batch_plan`
    runs a batch's searches side by side."""
    schema = settings.schema
    if not op.query:
        return (yield from _recent_plan(op, schema, mirror))
    params: dict[str, Any] = {"limit": op.limit, "offset": op.offset}
    where = _search_where(op, params)
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
    if settings.hybrid:
        params["qv"] = QueryVector(query_vectors[op.query])
    order = ranking.order_sql(params, hybrid=settings.hybrid)
    score = ranking.score_sql(hybrid=settings.hybrid)
    sql = q.search_ranked(
        schema, where, score, order, hybrid=settings.hybrid, scope=scope, small=small
    )
    sql = _mirrored(schema, sql, params, mirror)
    if settings.hybrid:
        ef = {"ef": str(min(params["k"], MAX_EF_SEARCH))}
        # A plain search, or one of a namespace known to be small: one statement for every
        # query (and namespace), run with its generic plan (no planning: 1.3-2 ms of a
        # namespace search's ~3 at 20k items).
        generic = not op.filter and (scope is None or small is not None)
        if generic and params["k"] == ranking.candidates:
            sql = q.literal_k(sql, params["k"])
            settings_query = Query(q.PLAIN_SEARCH_SETTINGS, ef)
            _, rows, _ = yield Pipelined(
                (settings_query, Query(sql, params), Query(q.RESTORE_PLAN_MODE))
            )
        else:
            _, rows = yield Pipelined((Query(q.HNSW_SETTINGS, ef), Query(sql, params)))
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
        exact = q.search_ranked(schema, where, score, order, hybrid=True, scope=scope, small=True)
        rows = yield Query(_mirrored(schema, exact, params, mirror), params)
    ranked = [(r, _search_item(r, float(r["score"]))) for r in rows or []]
    if len(ranked) < wanted:
        # Fewer candidates than the page needs: score the rest exactly, un-indexed items last
        # (as InMemoryStore appends them).
        params["fill"] = wanted - len(ranked)
        params["ranked_prefixes"] = [prefix_of(item.namespace) for _, item in ranked]
        params["ranked_keys"] = [item.key for _, item in ranked]
        fill = q.search_fill(schema, where, score, hybrid=settings.hybrid)
        rest = yield Query(_mirrored(schema, fill, params, mirror), params)
        ranked += [(r, _search_item(r, r["score"])) for r in rest or []]
    return _page(ranked[op.offset : wanted], mirror)


def _list_namespaces_plan(op: ListNamespacesOp, schema: str) -> Plan[list[tuple[str, ...]]]:
    params: dict[str, Any] = {"limit": op.limit, "offset": op.offset}
    clauses = [q.NOT_EXPIRED]
    for c, cond in enumerate(op.match_conditions or ()):
        path = tuple(cond.path)
        params[f"len{c}"] = len(path)
        clauses.append(f"cardinality(i.namespace) >= %(len{c})s")
        for j, label in enumerate(path):
            if label == "*":
                continue
            params[f"m{c}_{j}"] = label
            if cond.match_type == "prefix":
                clauses.append(f"i.namespace[{j + 1}] = %(m{c}_{j})s")
            else:
                clauses.append(
                    f"i.namespace[cardinality(i.namespace) - %(len{c})s + {j + 1}] = %(m{c}_{j})s"
                )
    column = "i.namespace"
    if op.max_depth is not None:
        params["depth"] = op.max_depth
        column = "i.namespace[1:%(depth)s]"
    rows = yield Query(q.list_namespaces(schema, column, " AND ".join(clauses)), params)
    return [tuple(r["ns"]) for r in rows or []]


def batch_plan(
    batch: PreparedBatch,
    settings: StoreSettings,
    doc_vectors: dict[str, list[float]],
    query_vectors: dict[str, list[float]],
    stats_cache: StatsCache,
    deferred: list[Key] | None = None,
) -> Plan[list[Result]]:
    """Execute a prepared batch: reads first (they see the state before the batch), then writes.

    ``deferred`` (a read-only batch on a read replica, which cannot write): the TTL refreshes
    its reads call for are added to it instead of written; :func:`refresh_plan` writes them
    on the primary."""
    schema = settings.schema
    results: list[Any] = [None] * len(batch.ops)
    refresh: dict[Key, None] = {}

    gets = {i: op for i, op in enumerate(batch.ops) if isinstance(op, GetOp)}
    reads: dict[int, Plan[Any]] = {}
    for i, read in enumerate(batch.ops):
        if isinstance(read, SearchOp):
            reads[i] = _search_plan(read, settings, query_vectors, stats_cache)
        elif isinstance(read, MirrorSearchOp):
            reads[i] = _search_plan(read.search, settings, query_vectors, stats_cache, read)
        elif isinstance(read, ListNamespacesOp):
            reads[i] = _list_namespaces_plan(read, schema)
        elif isinstance(read, ExpandOp):
            qv = query_vectors.get(read.query) if read.query and settings.hybrid else None
            reads[i] = expand_plan(schema, read, qv)
        elif isinstance(read, PageOp):
            reads[i] = page_plan(read, schema)
    keys = list(dict.fromkeys((op.namespace, op.key) for op in gets.values()))
    plans = [_get_plan(schema, keys), *reads.values()] if gets else list(reads.values())
    # Every read of the batch travels together: one round trip per step, not per op.
    answers = yield from gather(plans)
    if gets:
        found = answers.pop(0)
        for i, op in gets.items():
            row = found.get((op.namespace, op.key))
            results[i] = _item(row) if row else None
            if row and op.refresh_ttl and row["ttl_minutes"] is not None:
                refresh[(op.namespace, op.key)] = None
    for i, answer in zip(reads, answers, strict=True):
        read = batch.ops[i]
        search = read.search if isinstance(read, MirrorSearchOp) else read
        if isinstance(search, SearchOp):
            results[i] = answer.items
            if answer.mirrors is not None and answer.parts is not None:
                results[i] = [
                    Mirrored(item, mirror, *parts)
                    for item, mirror, parts in zip(
                        answer.items, answer.mirrors, answer.parts, strict=True
                    )
                ]
            if search.refresh_ttl:
                refresh.update(dict.fromkeys(answer.expiring))
        else:
            results[i] = answer

    # Keys the batch rewrites get their TTL from the put, not from the read.
    refresh_only = [key for key in refresh if key not in batch.puts]
    if deferred is not None and batch.read_only:
        deferred.extend(refresh_only)
        return results
    if batch.links:  # before the writes: it still sees the links of an item they delete
        yield from clear_links_plan(schema, batch.links)
    yield from _write_plan(batch, refresh_only, settings, doc_vectors)
    if batch.links:  # after them: the links reference their items
        yield from insert_links_plan(schema, batch.links, doc_vectors if settings.hybrid else None)
    return results


def refresh_plan(keys: Sequence[Key], settings: StoreSettings) -> Plan[None]:
    """The TTL refresh a read-only batch deferred (``batch_plan(deferred=...)``)."""
    yield from _write_plan(PreparedBatch([], {}, []), list(keys), settings, {})


def _get_plan(schema: str, keys: Sequence[Key]) -> Plan[dict[Key, dict[str, Any]]]:
    rows = yield Query(q.get_items(schema), _key_arrays(keys))
    return {(tuple(r["namespace"]), r["key"]): r for r in rows or []}


def _key_arrays(keys: Sequence[Key]) -> dict[str, list[str]]:
    return {"prefixes": [prefix_of(ns) for ns, _ in keys], "keys": [k for _, k in keys]}


def _write_plan(
    batch: PreparedBatch,
    refresh: list[Key],
    settings: StoreSettings,
    doc_vectors: dict[str, list[float]],
) -> Plan[None]:
    """The batch's writes. Every row they touch is first locked (or claimed, when absent) by
    one statement in (prefix, key) order: see ``sql.write_items``."""
    schema = settings.schema
    upserts = [p for p in batch.puts.values() if p.value_json is not None]
    deletes = [(p.prefix, p.key) for p in batch.puts.values() if p.value_json is None]
    refreshed = [(prefix_of(ns), key) for ns, key in refresh]
    # One key needs no ordering: a lone delete or refresh locks its row by itself, and so do
    # refreshes alone (sql.refresh_ttl locks in key order; a batch of reads runs without a
    # transaction block, so it must write in one statement).
    several = len(upserts) + len(deletes) + len(refreshed) > 1
    lock_only = deletes + refreshed if several and (upserts or deletes) else []
    if upserts or lock_only:
        yield Query(
            q.write_items(schema),
            {
                "prefixes": [p.prefix for p in upserts] + [k[0] for k in lock_only],
                "keys": [p.key for p in upserts] + [k[1] for k in lock_only],
                "values": [p.value_json for p in upserts] + [None] * len(lock_only),
                # floats: psycopg cannot send a list mixing int and float
                "ttls": [None if p.ttl is None else float(p.ttl) for p in upserts]
                + [None] * len(lock_only),
                "texts": [p.text for p in upserts] + [None] * len(lock_only),
                "keep_prefixes": [p.prefix for p in upserts if not p.reindex],
                "keep_keys": [p.key for p in upserts if not p.reindex],
                "text_config": settings.ranking.text_config,
            },
        )
    if refreshed:
        yield Query(
            q.refresh_ttl(schema),
            {"prefixes": [k[0] for k in refreshed], "keys": [k[1] for k in refreshed]},
        )
    if lock_only or deletes:
        dropped = deletes + (refreshed if lock_only else [])
        yield Query(
            q.delete_items(schema),
            {
                "prefixes": [k[0] for k in dropped],
                "keys": [k[1] for k in dropped],
                "drops": [True] * len(deletes) + [False] * (len(dropped) - len(deletes)),
            },
        )
    reindexed = [p for p in upserts if p.reindex]
    if not settings.hybrid or not reindexed:
        return None
    yield Query(
        q.delete_vectors(schema),
        {"prefixes": [p.prefix for p in reindexed], "keys": [p.key for p in reindexed]},
    )
    rows = [(p.prefix, p.key, name, text) for p in reindexed for name, text in p.embed]
    if rows:
        yield Query(
            q.insert_vectors(schema),
            {
                "prefixes": [r[0] for r in rows],
                "keys": [r[1] for r in rows],
                "fields": [r[2] for r in rows],
                "embeddings": [Vector(doc_vectors[r[3]]).to_text() for r in rows],
            },
        )
    return None


def setup_plan(settings: StoreSettings) -> Plan[list[int]]:
    """Apply the store's migrations (and the vector table's, for a hybrid store)."""
    applied = yield from migrate_plan(settings.schema, "store")
    if settings.index is None:
        return applied
    dims = settings.index["dims"]
    applied += yield from migrate_plan(settings.schema, "store_vectors", {"dims": dims})
    rows = yield Query(q.vector_type(settings.schema))
    found = rows[0]["type"] if rows else None
    if found != f"vector({dims})":
        raise InvalidValueError(
            f"schema {settings.schema!r} stores {found} embeddings but the index config says "
            f"dims={dims}; use another schema or re-create the store_vectors table"
        )
    return applied


def analyze_plan(schema: str, stats_cache: StatsCache, *, vectors: bool = False) -> Plan[None]:
    """Refresh the statistics that weigh keywords by rarity (autovacuum also does it)."""
    yield Query(q.analyze(schema, vectors=vectors))
    stats_cache.clear()


def purge_plan(schema: str, prefixes: Sequence[tuple[str, ...]]) -> Plan[int]:
    """Delete everything under the namespace prefixes, expired items included; how many."""
    for prefix in prefixes:
        check_namespace(tuple(prefix))
    joined = [prefix_of(tuple(p)) for p in prefixes]
    params = {"prefixes": joined, "likes": [_like_prefix(p) for p in joined]}
    rows = yield Query(q.purge_prefixes(schema), params)
    yield Query(purge_entities_sql(schema), params)
    return int(rows[0]["n"]) if rows else 0


def sweep_plan(schema: str) -> Plan[int]:
    """Delete expired items; returns how many were removed."""
    rows = yield Query(q.sweep_expired(schema))
    return int(rows[0]["n"]) if rows else 0
