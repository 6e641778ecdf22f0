"""The store's sans-IO core: the plan of SQL that executes a checked batch.

The driver checks the batch first (store/_prepare.py), embeds (documents in one call, queries
through an LRU cache) and runs ``batch_plan`` in one transaction. As in InMemoryStore, the
reads of a batch see the data as it was before the batch's writes, and the last put to a key
wins. The searches' plans are in store/_search_plan.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    Result,
    SearchOp,
)

try:  # re-exported (reembed.py)
    from pgvector import Vector as Vector
except ImportError:  # pgvector < 0.4 (langchain-postgres 0.0.x pins 0.3.6) has no top-level names
    from pgvector.utils import Vector as Vector

from langmem_vault._tenants import DEFAULT_RULE, TenantRule
from langmem_vault.db._migrations import check_schema, migrate_plan
from langmem_vault.db._online import online_plan
from langmem_vault.db._partitions import check_partitions, partition_plan
from langmem_vault.db._runner import Plan, Query, gather
from langmem_vault.store import _sql as q
from langmem_vault.store._applied import OnlineState
from langmem_vault.store._entities import ExpandOp
from langmem_vault.store._entity_plans import (
    clear_links_plan,
    expand_plan,
    insert_links_plan,
    purge_entities_sql,
)
from langmem_vault.store._lexemes import StatsCache
from langmem_vault.store._mirrors import Mirrored, MirrorSearchOp
from langmem_vault.store._page_plan import count_plan, page_plan
from langmem_vault.store._pages import CountOp, PageOp
from langmem_vault.store._prepare import Key, PreparedBatch, StoreSettings, prefix_of
from langmem_vault.store._search_plan import like_prefix, search_plan
from langmem_vault.store._tallies import TallyOp
from langmem_vault.store._tally_plan import tally_plan
from langmem_vault.store._validation import InvalidValueError, check_namespace
from langmem_vault.store._vector_sql import namespace_key_bytes

#: the tables ``setup(partitions=N)`` partitions by tenant: the items, then their vectors
#: (the entity tables hold a few rows per user; keyed by tenant, they stay whole)
PARTITIONED = ("store_items", "store_vectors")


def _item(row: dict[str, Any]) -> Item:
    return Item(
        value=row["value"],
        key=row["key"],
        namespace=tuple(row["namespace"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


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
    online: OnlineState | None = None,
) -> Plan[list[Result]]:
    """Execute a prepared batch: reads first (they see the state before the batch), then writes.

    ``deferred`` (a read-only batch on a read replica, which cannot write): the TTL refreshes
    its reads call for are added to it instead of written; :func:`refresh_plan` writes them
    on the primary. ``online``: what the store knows of its online migrations (None: they
    are applied)."""
    schema = settings.schema
    page_at, rank_index, status_index, status_counts = (
        (online.page_at, online.rank_index, online.status_index, online.status_counts)
        if online
        else (None,) * 4
    )
    results: list[Any] = [None] * len(batch.ops)
    refresh: dict[Key, None] = {}

    gets = {i: op for i, op in enumerate(batch.ops) if isinstance(op, GetOp)}
    reads: dict[int, Plan[Any]] = {}
    for i, read in enumerate(batch.ops):
        if isinstance(read, SearchOp):
            reads[i] = search_plan(
                read, settings, query_vectors, stats_cache, rank_index=rank_index
            )
        elif isinstance(read, MirrorSearchOp):
            reads[i] = search_plan(
                read.search, settings, query_vectors, stats_cache, read, rank_index=rank_index
            )
        elif isinstance(read, ListNamespacesOp):
            reads[i] = _list_namespaces_plan(read, schema)
        elif isinstance(read, ExpandOp):
            qv = query_vectors.get(read.query) if read.query and settings.hybrid else None
            reads[i] = expand_plan(schema, read, qv, settings.tenants)
        elif isinstance(read, PageOp):
            reads[i] = page_plan(read, schema, settings.tenants, page_at)
        elif isinstance(read, CountOp):
            reads[i] = count_plan(read, schema, settings.tenants, status_index, status_counts)
        elif isinstance(read, TallyOp):
            reads[i] = tally_plan(read, settings)
    keys = list(dict.fromkeys((op.namespace, op.key) for op in gets.values()))
    plans = [_get_plan(settings, keys), *reads.values()] if gets else list(reads.values())
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
        yield from clear_links_plan(schema, batch.links, settings.tenants)
    yield from _write_plan(batch, refresh_only, settings, doc_vectors)
    if batch.links:  # after them: the links reference their items
        yield from insert_links_plan(schema, batch.links, doc_vectors if settings.hybrid else None)
    return results


def refresh_plan(keys: Sequence[Key], settings: StoreSettings) -> Plan[None]:
    """The TTL refresh a read-only batch deferred (``batch_plan(deferred=...)``)."""
    yield from _write_plan(PreparedBatch([], {}, []), list(keys), settings, {})


def _get_plan(settings: StoreSettings, keys: Sequence[Key]) -> Plan[dict[Key, dict[str, Any]]]:
    rows = yield Query(q.get_items(settings.schema), key_arrays(keys, settings.tenants))
    return {(tuple(r["namespace"]), r["key"]): r for r in rows or []}


def key_arrays(keys: Sequence[Key], rule: TenantRule) -> dict[str, list[str]]:
    """The parameters of a statement by keys: their prefixes and keys, and the distinct
    tenants they belong to (``sql.TENANTS``)."""
    return {
        "prefixes": [prefix_of(ns) for ns, _ in keys],
        "keys": [k for _, k in keys],
        "tenants": list(dict.fromkeys(rule.tenant_of(ns) for ns, _ in keys)),
    }


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
    rule = settings.tenants
    tenants = list(dict.fromkeys(rule.tenant_of(ns) for ns, _ in [*batch.puts, *refresh]))
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
            {
                "prefixes": [k[0] for k in refreshed],
                "keys": [k[1] for k in refreshed],
                "tenants": tenants,
            },
        )
    if lock_only or deletes:
        dropped = deletes + (refreshed if lock_only else [])
        yield Query(
            q.delete_items(schema),
            {
                "prefixes": [k[0] for k in dropped],
                "keys": [k[1] for k in dropped],
                "drops": [True] * len(deletes) + [False] * (len(dropped) - len(deletes)),
                "tenants": tenants,
            },
        )
    reindexed = [p for p in upserts if p.reindex]
    if not settings.hybrid or not reindexed:
        return None
    yield Query(
        q.delete_vectors(schema),
        {
            "prefixes": [p.prefix for p in reindexed],
            "keys": [p.key for p in reindexed],
            "tenants": tenants,
        },
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


def setup_plan(
    settings: StoreSettings, partitions: int = 0, *, online: bool = True
) -> Plan[list[int]]:
    """Apply the store's migrations (and the vector table's, for a hybrid store); with
    ``partitions``, hash-partition the items and vectors by tenant (db/_partitions.py).
    ``online=False`` leaves the online migrations (db/_online.py) to run after this
    transaction, concurrently, unless ``store_items`` is empty (a new store: nothing to wait
    for)."""
    check_partitions(partitions)
    rule = settings.tenants.tenant_sql("namespace").as_string(None)
    applied = yield from migrate_plan(settings.schema, "store", {"tenant_rule": rule})
    if not online:
        (row,) = yield Query(f"SELECT NOT EXISTS (SELECT FROM {settings.schema}.store_items) AS e")
        online = row["e"]
    if online:
        applied += yield from online_plan(settings.schema, "store", concurrently=False)
    if settings.index is None:
        yield from partition_plan(settings.schema, PARTITIONED[:1], partitions)
        return applied
    dims = settings.index["dims"]
    params: dict[str, object] = {"dims": dims, "key_bytes": namespace_key_bytes(dims)}
    applied += yield from migrate_plan(settings.schema, "store_vectors", params)
    rows = yield Query(q.vector_type(settings.schema))
    found = rows[0]["type"] if rows else None
    if found != f"vector({dims})":
        raise InvalidValueError(
            f"schema {settings.schema!r} stores {found} embeddings but the index config says "
            f"dims={dims}; use another schema or re-create the store_vectors table"
        )
    yield from partition_plan(settings.schema, PARTITIONED[:2], partitions)
    return applied


# store_vectors/0004's index, whose leaves a cold namespace search reads in key order; left
# behind by a REINDEX CONCURRENTLY that was interrupted: its new copy (_ccnew, invalid) or
# the old one (_ccold).
NAMESPACE_INDEX = "store_vectors_namespace_idx"
_LEFTOVERS = """
SELECT format('DROP INDEX CONCURRENTLY IF EXISTS %%s', i.indexrelid::regclass) AS ddl
FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
WHERE NOT i.indisvalid AND c.relname ~ '_cc(new|old)[0-9]*$'
  AND i.indrelid IN (SELECT %(table)s::regclass UNION ALL
                     SELECT inhrelid FROM pg_inherits WHERE inhparent = %(table)s::regclass)"""


def reorder_plan(schema: str) -> Plan[bool]:
    """Rebuild the namespace index online (``REINDEX INDEX CONCURRENTLY``: reads and writes go
    on; a partitioned index one partition at a time), so each user's leaves lie in key order
    on disk again (docs/scaling.md, "Keeping the leaves in order"); first drop what an
    interrupted run left. False when the store has no such index. Must run outside a
    transaction block (``Database.run_direct`` on a pool)."""
    s = check_schema(schema)
    rows = yield Query(
        "SELECT to_regclass(%(name)s) IS NOT NULL AS found", {"name": f"{s}.{NAMESPACE_INDEX}"}
    )
    if not rows[0]["found"]:
        return False
    for row in (yield Query(_LEFTOVERS, {"table": f"{s}.store_vectors"})) or []:
        yield Query(row["ddl"])
    yield Query(f"REINDEX INDEX CONCURRENTLY {s}.{NAMESPACE_INDEX}")
    return True


def analyze_plan(schema: str, stats_cache: StatsCache, *, vectors: bool = False) -> Plan[None]:
    """Refresh the statistics that weigh keywords by rarity (autovacuum also does it)."""
    yield Query(q.analyze(schema, vectors=vectors))
    stats_cache.clear()


def purge_plan(
    schema: str, prefixes: Sequence[tuple[str, ...]], rule: TenantRule = DEFAULT_RULE
) -> Plan[int]:
    """Delete everything under the namespace prefixes, expired items included; how many.
    When ``rule`` names the tenant of each prefix (a user's erase), only their partitions are
    read."""
    for prefix in prefixes:
        check_namespace(tuple(prefix))
    joined = [prefix_of(tuple(p)) for p in prefixes]
    tenants = [rule.scope_tenant(tuple(p)) for p in prefixes]
    routed = None not in tenants
    params = {"prefixes": joined, "likes": [like_prefix(p) for p in joined], "tenants": tenants}
    rows = yield Query(q.purge_prefixes(schema, routed=routed), params)
    yield Query(purge_entities_sql(schema, routed=routed), params)
    return int(rows[0]["n"]) if rows else 0


def sweep_plan(schema: str) -> Plan[int]:
    """Delete expired items; returns how many were removed."""
    rows = yield Query(q.sweep_expired(schema))
    return int(rows[0]["n"]) if rows else 0
