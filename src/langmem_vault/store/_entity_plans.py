"""The SQL of the entity ops (:mod:`langmem_vault.store._entities`), as plans of the runtime.

A batch's :class:`LinkOp` s cost two statements whatever their number: one before the batch's
item writes clears the items' old links and deletes the entities left with no mention (it
runs before, so that it still sees the mentions of an item the batch deletes), one after
them upserts the entities, their name vectors (new entities only), and inserts the mentions,
aliases and relations (the rows reference the items, which must exist by then). An
:class:`ExpandOp` is one statement: a recursive walk from the entities the query names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.store.base import Item

from langmem_vault._tenants import TenantRule
from langmem_vault.db._runner import Pipelined, Plan, Query
from langmem_vault.db._vectors import QueryVector
from langmem_vault.store._entities import Expanded, ExpandOp, LinkOp, norm_name
from langmem_vault.store._plan_settings import NO_PARALLEL, plan_settings
from langmem_vault.store._sql import tenant_of

try:
    from pgvector import Vector
except ImportError:  # pgvector < 0.4
    from pgvector.utils import Vector

__all__ = ["clear_links_plan", "expand_plan", "insert_links_plan", "link_names"]

# The expansion runs on its generic plan, prepared at its first run on a connection (the
# pool's warm-up, store/_warm.py, runs it there first). Left to Postgres, a connection
# planned it at each of its first 11 runs (psycopg prepares a statement at its 6th run,
# Postgres custom-plans a prepared one's first 5: 0.4-1 ms each, in inject's turns, after
# the query's embedding); and warmed in the empty warm namespace, its custom plans cost
# so little there that no generic plan beat them, and it was planned at every other turn
# for good (bench/RESULTS.md, session 16 s27). Its generic plan is the one Postgres itself
# settled on for a user's expansions (the statement's texts do not vary by query: the
# terms, the vector and the scopes are parameters). No parallel workers: one user's rows,
# read by index.
EXPAND_PLAN_SETTINGS = (("plan_cache_mode", "force_generic_plan"), NO_PARALLEL)
EXPAND_SETTINGS, RESTORE_EXPAND_PLAN = plan_settings(EXPAND_PLAN_SETTINGS)


def _prefix(namespace: Sequence[str]) -> str:
    return ".".join(namespace)


def link_names(links: Sequence[LinkOp]) -> list[str]:
    """The entity names to embed for ``links``, first-seen order."""
    return list(dict.fromkeys(e.name for op in links for e in op.entities))


def _clear_sql(s: str) -> str:
    # The entities delete sees the statement's snapshot, in which the mentions the CTE deletes
    # are still there: mentions by the cleared items themselves do not keep an entity.
    # %(tenants)s: the items' tenants, so each table is read in their partitions only.
    return f"""
WITH items AS (
    SELECT * FROM unnest(%(prefixes)s::text[], %(keys)s::text[]) AS t(prefix, key)
), old AS (
    DELETE FROM {s}.entity_mentions AS m USING items AS t
    WHERE m.tenant = ANY(%(tenants)s::text[]) AND m.prefix = t.prefix AND m.key = t.key
    RETURNING m.tenant, m.entity_id
), aliases AS (
    DELETE FROM {s}.entity_aliases AS a USING items AS t
    WHERE a.tenant = ANY(%(tenants)s::text[]) AND a.prefix = t.prefix AND a.key = t.key
), relations AS (
    DELETE FROM {s}.entity_relations AS r USING items AS t
    WHERE r.tenant = ANY(%(tenants)s::text[]) AND r.prefix = t.prefix AND r.key = t.key
)
DELETE FROM {s}.entities AS e
WHERE e.tenant = ANY(%(tenants)s::text[])
  AND (e.tenant, e.id) IN (SELECT tenant, entity_id FROM old)
  AND NOT EXISTS (
    SELECT 1 FROM {s}.entity_mentions AS m
    WHERE m.tenant = e.tenant AND m.entity_id = e.id
      AND (m.prefix, m.key) NOT IN (SELECT prefix, key FROM items))"""


def clear_links_plan(schema: str, links: Sequence[LinkOp], rule: TenantRule) -> Plan[None]:
    """Remove the current links of the items ``links`` name, and entities left unmentioned."""
    items = list(dict.fromkeys((_prefix(op.namespace), op.key) for op in links))
    tenants = list(dict.fromkeys(rule.tenant_of(op.namespace) for op in links))
    yield Query(
        _clear_sql(schema),
        {"prefixes": [p for p, _ in items], "keys": [k for _, k in items], "tenants": tenants},
    )
    return None


def _insert_sql(s: str, *, vectors: bool) -> str:
    vector_cte = (
        f"""
), vec AS (
    INSERT INTO {s}.entity_vectors (tenant, entity_id, embedding)
    SELECT up.tenant, up.id, v.embedding::vector FROM up
    JOIN unnest(%(e_scopes)s::text[], %(e_norms)s::text[], %(e_vectors)s::text[])
        AS v(scope, norm, embedding) ON v.scope = up.scope AND v.norm = up.norm
    ON CONFLICT (tenant, entity_id) DO NOTHING"""
        if vectors
        else ""
    )
    # DO UPDATE (not DO NOTHING) so that RETURNING gives the id of an entity that exists,
    # also one another transaction committed since this statement's snapshot. A kind other
    # than 'thing' wins: "Mochi" named once as a pet stays a pet. Every row gets its
    # entity's tenant, made from its scope by the schema's tenant_of (store/0006).
    return f"""
WITH ent AS (
    SELECT DISTINCT ON (scope, norm) * FROM unnest(
        %(e_scopes)s::text[], %(e_norms)s::text[], %(e_names)s::text[], %(e_kinds)s::text[]
    ) AS t(scope, norm, name, kind) ORDER BY scope, norm, (kind = 'thing')
), up AS (
    INSERT INTO {s}.entities AS e (tenant, scope, norm, name, kind)
    SELECT {tenant_of(s, "scope")}, scope, norm, name, kind FROM ent ORDER BY scope, norm
    ON CONFLICT (tenant, scope, norm) DO UPDATE
        SET kind = CASE WHEN e.kind = 'thing' THEN EXCLUDED.kind ELSE e.kind END
    RETURNING e.tenant, e.id, e.scope, e.norm{vector_cte}
), mentions AS (
    INSERT INTO {s}.entity_mentions (tenant, entity_id, prefix, key)
    SELECT up.tenant, up.id, m.prefix, m.key FROM up
    JOIN unnest(%(m_scopes)s::text[], %(m_norms)s::text[], %(m_keys)s::text[])
        AS m(prefix, norm, key) ON m.prefix = up.scope AND m.norm = up.norm
    ON CONFLICT DO NOTHING
), aliases AS (
    INSERT INTO {s}.entity_aliases (tenant, scope, alias, entity_id, prefix, key)
    SELECT up.tenant, a.prefix, a.alias, up.id, a.prefix, a.key FROM up
    JOIN unnest(%(a_scopes)s::text[], %(a_norms)s::text[], %(a_aliases)s::text[],
                %(a_keys)s::text[])
        AS a(prefix, norm, alias, key) ON a.prefix = up.scope AND a.norm = up.norm
    ON CONFLICT DO NOTHING
)
INSERT INTO {s}.entity_relations
    (tenant, subject_id, predicate, object_id, valid_from, valid_to, prefix, key)
SELECT sub.tenant, sub.id, r.predicate, obj.id, r.valid_from, r.valid_to, r.prefix, r.key
FROM unnest(%(r_scopes)s::text[], %(r_subjects)s::text[], %(r_predicates)s::text[],
            %(r_objects)s::text[], %(r_froms)s::timestamptz[], %(r_tos)s::timestamptz[],
            %(r_keys)s::text[])
    AS r(prefix, subject, predicate, object, valid_from, valid_to, key)
JOIN up AS sub ON sub.scope = r.prefix AND sub.norm = r.subject
JOIN up AS obj ON obj.scope = r.prefix AND obj.norm = r.object
ON CONFLICT DO NOTHING"""


# Each a column of unnest(): entities (e_), mentions (m_), aliases (a_), relations (r_).
_LINK_PARAMS = (
    *("e_scopes", "e_norms", "e_names", "e_kinds", "e_vectors"),
    *("m_scopes", "m_norms", "m_keys"),
    *("a_scopes", "a_norms", "a_aliases", "a_keys"),
    *("r_scopes", "r_subjects", "r_predicates", "r_objects", "r_froms", "r_tos", "r_keys"),
)


def insert_links_plan(
    schema: str, links: Sequence[LinkOp], vectors: dict[str, list[float]] | None
) -> Plan[None]:
    """Write the entities, mentions, aliases and relations ``links`` carry (after their
    items); ``vectors`` (name -> embedding) when the store has an index."""
    params: dict[str, list[Any]] = {name: [] for name in _LINK_PARAMS}
    for op in links:
        scope = _prefix(op.namespace)
        for entity in op.entities:
            norm = norm_name(entity.name)
            params["e_scopes"].append(scope)
            params["e_norms"].append(norm)
            params["e_names"].append(" ".join(entity.name.split()))
            params["e_kinds"].append(entity.kind)
            if vectors is not None:
                params["e_vectors"].append(Vector(vectors[entity.name]).to_text())
            params["m_scopes"].append(scope)
            params["m_norms"].append(norm)
            params["m_keys"].append(op.key)
            for alias in dict.fromkeys(map(norm_name, entity.aliases)):
                params["a_scopes"].append(scope)
                params["a_norms"].append(norm)
                params["a_aliases"].append(alias)
                params["a_keys"].append(op.key)
        for rel in op.relations:
            params["r_scopes"].append(scope)
            params["r_subjects"].append(norm_name(rel.subject))
            params["r_predicates"].append(norm_name(rel.predicate))
            params["r_objects"].append(norm_name(rel.object))
            params["r_froms"].append(rel.valid_from)
            params["r_tos"].append(rel.valid_to)
            params["r_keys"].append(op.key)
    if not params["e_norms"]:
        return None
    yield Query(_insert_sql(schema, vectors=vectors is not None), params)
    return None


def _expand_sql(s: str, *, near: bool) -> str:
    near_seeds = (
        f"""
    UNION
    SELECT v.entity_id FROM {s}.entity_vectors AS v
    JOIN {s}.entities AS e ON e.tenant = v.tenant AND e.id = v.entity_id
    WHERE v.tenant = ANY (%(tenants)s::text[]) AND e.scope = ANY (%(scopes)s::text[])
      AND 1 - (v.embedding <=> %(qv)s::vector) >= %(near)s"""
        if near
        else ""
    )
    # UNION (not UNION ALL) in the walk drops repeated (entity, hop) pairs, and hop bounds it:
    # a cycle of relations cannot make it run away. %(tenants)s: the scopes' tenants, so
    # every table is read in their partitions only (entity ids are unique across tenants).
    return f"""
WITH RECURSIVE seeds AS (
    SELECT e.id FROM {s}.entities AS e
    WHERE e.tenant = ANY (%(tenants)s::text[]) AND e.scope = ANY (%(scopes)s::text[])
      AND e.norm = ANY (%(terms)s::text[])
    UNION
    SELECT a.entity_id FROM {s}.entity_aliases AS a
    WHERE a.tenant = ANY (%(tenants)s::text[]) AND a.scope = ANY (%(scopes)s::text[])
      AND a.alias = ANY (%(terms)s::text[]){near_seeds}
), walk (id, hop) AS (
    SELECT id, 0 FROM seeds
    UNION
    SELECT CASE WHEN r.subject_id = w.id THEN r.object_id ELSE r.subject_id END, w.hop + 1
    FROM walk AS w
    JOIN {s}.entity_relations AS r ON r.subject_id = w.id OR r.object_id = w.id
    WHERE r.tenant = ANY (%(tenants)s::text[]) AND w.hop < %(hops)s
      AND (%(as_of)s::timestamptz IS NULL
           OR ((r.valid_from IS NULL OR r.valid_from <= %(as_of)s::timestamptz)
               AND (r.valid_to IS NULL OR r.valid_to > %(as_of)s::timestamptz)))
), best AS (
    SELECT id, min(hop) AS hop FROM walk GROUP BY id
), hits AS (
    SELECT m.tenant, m.prefix, m.key, min(b.hop) AS hop, count(*) AS matched,
           array_agg(e.name ORDER BY b.hop, e.name) AS names
    FROM best AS b
    JOIN {s}.entity_mentions AS m ON m.tenant = ANY (%(tenants)s::text[]) AND m.entity_id = b.id
    JOIN {s}.entities AS e ON e.tenant = m.tenant AND e.id = b.id
    GROUP BY m.tenant, m.prefix, m.key
)
SELECT i.namespace, i.key, i.value, i.created_at, i.updated_at, h.hop, h.names
FROM hits AS h
JOIN {s}.store_items AS i ON i.tenant = h.tenant AND i.prefix = h.prefix AND i.key = h.key
WHERE i.tenant = ANY (%(tenants)s::text[]) AND (i.expires_at IS NULL OR i.expires_at > now())
ORDER BY h.hop, h.matched DESC, i.updated_at DESC, i.prefix, i.key
LIMIT %(limit)s"""


def expand_plan(
    schema: str, op: ExpandOp, query_vector: list[float] | None, rule: TenantRule
) -> Plan[list[Expanded]]:
    """The items linked to what ``op`` names, in one statement (see :class:`ExpandOp`)."""
    params: dict[str, Any] = {
        "scopes": [_prefix(ns) for ns in op.namespaces],
        "tenants": list(dict.fromkeys(rule.tenant_of(ns) for ns in op.namespaces)),
        "terms": list(dict.fromkeys(map(norm_name, op.terms))),
        "hops": op.hops,
        "limit": op.limit,
        "as_of": op.as_of,
    }
    near = query_vector is not None
    if query_vector is not None:
        params |= {"qv": QueryVector(query_vector), "near": float(op.near)}
    elif not params["terms"]:
        return []
    _, rows, _ = yield Pipelined(
        (
            Query(EXPAND_SETTINGS),
            Query(_expand_sql(schema, near=near), params, prepare=True),
            Query(RESTORE_EXPAND_PLAN),
        )
    )
    return [
        Expanded(
            Item(
                value=r["value"],
                key=r["key"],
                namespace=tuple(r["namespace"]),
                created_at=r["created_at"],
                updated_at=r["updated_at"],
            ),
            int(r["hop"]),
            tuple(dict.fromkeys(r["names"])),
        )
        for r in rows or []
    ]


def purge_entities_sql(s: str, *, routed: bool) -> str:
    """Delete the entities scoped under the namespace prefixes (their rows go by cascade);
    ``routed`` as in ``sql.purge_prefixes``."""
    tenants = "e.tenant = ANY (%(tenants)s::text[]) AND " if routed else ""
    return f"""
DELETE FROM {s}.entities AS e
WHERE {tenants}(e.scope = ANY (%(prefixes)s::text[]) OR e.scope LIKE ANY (%(likes)s::text[]))"""
