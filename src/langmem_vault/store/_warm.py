"""A new pooled connection's first plans, made when the pool opens it, not in a user's search.

The store runs its hot reads (a search in one user's namespace, the newest items of one:
inject's every-turn reads) as prepared statements on their generic plans (_plan_settings.py),
made once per connection, at its first run of each. On a partitioned store that first run
plans every partition and loads each one's catalog entries into the new server process: a
fresh connection's first namespace search cost 210-310 ms at 1M items in 64 partitions
against 5-8 ms warm, and 35-65 ms with partitions off (bench/RESULTS.md, issue 28 session 12).
A pool opens connections as load grows, so some user's turn paid it each time. inject's own
reads of the facts (the candidate search with its usage records joined, and the same without
a query: :func:`inject_ops`) and its entity expansion (:func:`inject_expansion`) are
statements of their own, planned at each connection's first inject turns until they were
warmed too.

:func:`warm_plan` runs those statements once, as a search would send them (the same texts,
parameter types and plan settings, so psycopg reuses the prepared statements and Postgres
the plans), in a namespace no item can lie in (its user label empty: :data:`WARM_USER`), so
the reads find no row. The store runs it from the pool's ``configure`` callback on every
connection the pool opens (``db._pools.LateConfigure``), and on one pooled connection when
it is built. It reads nothing that a search would not, and writes nothing.
"""

from __future__ import annotations

from typing import Any

from langgraph.store.base import SearchOp

from langmem_vault._tenants import USER_LABEL
from langmem_vault.db._runner import Plan, Query, gather
from langmem_vault.store._entities import ExpandOp
from langmem_vault.store._entity_plans import expand_plan
from langmem_vault.store._lexemes import StatsCache
from langmem_vault.store._mirrors import MirrorSearchOp
from langmem_vault.store._prepare import StoreSettings
from langmem_vault.store._search_plan import search_plan

#: The user label the warm-up reads: empty, which no namespace label and no user id can be
#: (its tenant is then the shared one, whose partition it probes for a prefix none has).
WARM_USER = ""
WARM_QUERY = "warm"
# inject's every-turn reads of the facts, as memory/_recall builds them (recall_ops with
# joined usage, inject's 50 candidates: k = 100, the generic path of _search_plan.py): the
# store cannot import them (dependencies point down), so tests/store/test_warm_inject.py
# checks these against them.
INJECT_CANDIDATES = 50
USAGE_MIRROR = ("langmem_vault", "usage")
# inject's entity expansion as memory/_recall's EntityBranch sends it for a query (its
# defaults: 20 items, one hop, names within cosine 0.75 of the query): the same statement
# text and parameter types. It runs on a forced generic plan (store/_entity_plans.py), so
# this one run plans it for the connection; left to Postgres' choice, warmed here it kept
# custom plans (bench/RESULTS.md, session 16 s27).
EXPANSION_LIMIT = 20
EXPANSION_HOPS = 1
EXPANSION_NEAR = 0.75


def warm_ops(settings: StoreSettings) -> list[SearchOp]:
    """The searches whose statements a warm-up prepares: a query in a user's namespace, and
    the newest items of one (the store's first tenant template, filled with WARM_USER).

    >>> from langmem_vault.store._ranking import SearchRanking
    >>> ops = warm_ops(StoreSettings("s", None, SearchRanking(), 1000))
    >>> [(op.namespace_prefix, op.query) for op in ops]
    [(('memories', ''), 'warm'), (('memories', ''), None)]
    """
    namespace = _warm_namespace(settings)
    return [SearchOp(namespace, query=WARM_QUERY), SearchOp(namespace)]


def _warm_namespace(settings: StoreSettings) -> tuple[str, ...]:
    template = settings.tenants.templates[0]
    return tuple(WARM_USER if label == USER_LABEL else label for label in template)


def inject_ops(settings: StoreSettings) -> list[MirrorSearchOp]:
    """inject's reads of the facts, in the warm namespace: the candidate search with its usage
    records (a turn with a message), and the same without a query (a turn without).

    >>> from langmem_vault.store._ranking import SearchRanking
    >>> ops = inject_ops(StoreSettings("s", None, SearchRanking(), 1000))
    >>> [type(op).__name__ for op in ops]
    ['MirrorSearchOp', 'MirrorSearchOp']
    """
    namespace = _warm_namespace(settings)
    return [
        MirrorSearchOp(
            SearchOp(namespace, limit=INJECT_CANDIDATES, query=query, refresh_ttl=False),
            USAGE_MIRROR,
        )
        for query in (WARM_QUERY, None)
    ]


def inject_expansion(settings: StoreSettings) -> ExpandOp:
    """inject's entity expansion for a message, in the warm namespace (no entity lies there).

    >>> from langmem_vault.store._ranking import SearchRanking
    >>> op = inject_expansion(StoreSettings("s", None, SearchRanking(), 1000))
    >>> op.namespaces, op.terms, op.query
    ((('memories', ''),), ('warm',), 'warm')
    """
    namespace = _warm_namespace(settings)
    return ExpandOp(
        (namespace,),
        (WARM_QUERY,),
        WARM_QUERY,
        EXPANSION_NEAR,
        EXPANSION_HOPS,
        EXPANSION_LIMIT,
    )


def warm_plan(settings: StoreSettings, stats: StatsCache) -> Plan[None]:
    """Run :func:`warm_ops`' and :func:`inject_ops`' searches and :func:`inject_expansion`
    side by side (one round trip each step); results are dropped. The query vector is a unit
    vector: no model runs, and no row is scored.

    ``stats`` is a new cache (the warm namespace's verdict is not the store's to keep): its
    search names the partitioned tables, as a user's first search in a store does, and learns
    their layout (store/_routes.py). On a partitioned store a user's later searches name the
    user's partition, a statement each partition's first search on a connection plans (5-7 ms
    at 1M items in 64 partitions): planning all 64 here took a connection's warm-up from
    180 ms to 1-1.2 s (bench/RESULTS.md, issue 28 session 13)."""
    # Before setup() the tables are missing: nothing to warm (and no error in the server's log).
    table = f"{settings.schema}.store_items"
    rows = yield Query("SELECT to_regclass(%(table)s) IS NOT NULL AS ready", {"table": table})
    if not (rows and rows[0]["ready"]):
        return
    dims = settings.index["dims"] if settings.index else 0
    vectors = {WARM_QUERY: [1.0] + [0.0] * (dims - 1)} if dims else {}
    plans: list[Plan[Any]] = [
        search_plan(op, settings, vectors, stats) for op in warm_ops(settings)
    ]
    plans += [search_plan(op.search, settings, vectors, stats, op) for op in inject_ops(settings)]
    # the vector a hybrid store's batch gives an expansion (store/_plans.py), else none
    expansion = inject_expansion(settings)
    qv = vectors.get(WARM_QUERY) if settings.hybrid else None
    plans.append(expand_plan(settings.schema, expansion, qv, settings.tenants))
    yield from gather(plans)
