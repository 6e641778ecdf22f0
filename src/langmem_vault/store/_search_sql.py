"""The store's search statements (recent, ranked, fill) and the settings they run under, as
named templates; the other statements are in _sql.py, the keyword branch's in _keyword_sql.py.
``{s}`` is the (validated) schema name; every value travels as a query parameter."""

from __future__ import annotations

from langmem_vault.store._keyword_sql import COVERAGE, keyword_candidates, terms
from langmem_vault.store._sql import ITEM_COLUMNS


def hnsw_settings(ef: int) -> tuple[str, str]:
    """pgvector 0.8's settings for a search with ``ef`` candidates: keep scanning the HNSW graph
    until enough rows pass the filters (without it, a filtered search returns fewer rows than
    asked for: pgvector #216), and widen the beam to the candidates we want.

    Sent as ``SET LOCAL`` commands before the search, in its transaction (a read-only batch's
    is the implicit one of its pipeline, which ends with it: nothing stays on the pooled
    connection), not as ``set_config()`` calls: Citus carries ``SET LOCAL`` to the workers
    that run the search (``citus.propagate_set_commands = 'local'``), never a function call
    (docs/citus.md). ``ef`` is a computed int, written as a constant (SET takes no
    parameters).

    >>> hnsw_settings(50)[1]
    'SET LOCAL hnsw.ef_search = 50'
    """
    return (
        "SET LOCAL hnsw.iterative_scan = relaxed_order",
        f"SET LOCAL hnsw.ef_search = {int(ef)}",
    )


# The settings of a plain search (no filter; no scope small enough to score exactly), whose
# statement is the same for every query: run it with its generic plan, as a prepared statement,
# so it is not planned again on every search (0.7-1 ms at 100k items, 40% of its database time).
# Postgres would not choose that plan itself: without the query it guesses that the namespace
# clause keeps 1.5% of the rows, and the generic plan costs more than the custom ones it saw.
# It needs the candidate LIMITs written as constants (``literal_k``): with LIMIT $n Postgres
# assumes a tenth of the rows and sorts every vector instead (about 300 ms per search). Only
# pages whose k is the store's default candidate count take this path (k is then one number,
# so there are two such statements per store: plain, and a namespace's, whose size the
# statement counts or is told: search_ranked), so a caller paging with many sizes does
# not fill each connection with cached generic plans (about 0.5 MB each).
# The generic plan is made once per connection, from whatever statistics the tables have then,
# and kept until they change: made on a small table, or with the 1.5% guess, the cheapest plan
# sorted every vector of the scope (20k items: 20,000 distances and a hash join of every item,
# 8x PostgresStore, issue 26) or scanned the table per keyword level. So it is planned with
# sorts, sequential scans, hash and merge joins disabled (PLAIN_PLAN_SETTINGS): the only plan
# left is the one the statement is written for at any size (HNSW walk with a primary-key
# probe per candidate, keyword levels from the GIN index, probes for the exact cosines); the
# sorts it cannot do without (the candidates' DISTINCT ON, the page's ORDER BY) stay.
# The settings are local to the transaction, which later statements may share (a batch's other
# searches, in the same pipeline): the current values are saved first (the subquery runs
# before the outer set_config) and RESTORE_PLAN_MODE, sent right after the search, puts them
# back.
# No parallel workers either (NO_PARALLEL, in both plan settings): a generic plan is costed for
# no value in particular, and at 1M items in 64 partitions without the HNSW index (the bench's
# databases) it put the large namespace's vector branch, gated off by the namespace's verdict,
# under a Gather. Gather starts its workers before the gate, inside them, finds nothing to do:
# 20 ms of a 27 ms search, at every search (bench/RESULTS.md, issue 28 session 12). These
# statements read one user's rows by index; starting a worker costs more than any of them.
NO_PARALLEL = ("max_parallel_workers_per_gather", "0")
PLAIN_PLAN_SETTINGS = (
    ("plan_cache_mode", "force_generic_plan"),
    NO_PARALLEL,
    ("enable_sort", "off"),
    ("enable_seqscan", "off"),
    ("enable_hashjoin", "off"),
    ("enable_mergejoin", "off"),
)


def plan_settings(settings: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    """The statement that sets the planner ``settings`` (name, value) for the rest of the
    transaction, saving the current values first (the subquery runs before the outer
    set_config), and the one that puts them back.

    >>> on, off = plan_settings((("enable_sort", "off"),))
    >>> off
    "SELECT set_config('enable_sort', current_setting('langmem_vault.enable_sort'), true)"
    """
    saved = ", ".join(
        f"set_config('langmem_vault.{name}', current_setting('{name}'), true)"
        for name, _ in settings
    )
    values = ", ".join(f"set_config('{name}', '{value}', true)" for name, value in settings)
    restore = ", ".join(
        f"set_config('{name}', current_setting('langmem_vault.{name}'), true)"
        for name, _ in settings
    )
    return f"SELECT {values} FROM (SELECT {saved}) AS saved", f"SELECT {restore}"


PLAIN_SEARCH_SETTINGS, RESTORE_PLAN_MODE = plan_settings(PLAIN_PLAN_SETTINGS)


def literal_k(statement: str, k: int) -> str:
    """``statement`` with its candidate count ``%(k)s`` written as a constant (see
    PLAIN_SEARCH_SETTINGS); k is a computed int, never user text.

    >>> literal_k("LIMIT %(k)s OFFSET %(wanted)s", 50)
    'LIMIT 50 OFFSET %(wanted)s'
    """
    return statement.replace("%(k)s", str(int(k)))


# A namespace's newest-first read (search_recent_in) runs on its generic plan, prepared: inject
# sends two or three every turn (instructions, episodes; the newest facts without a message),
# and Postgres custom-planned the instructions' and episodes' on every call (0.2-0.6 ms
# each, more than the read; dearer with the tenant conditions: bench/RESULTS.md, issue 28
# session 10): the generic plan's guesses cost more than the custom plans it saw. (The
# private read, on store_items_private_idx, settles on its generic plan by itself and is
# not run under these settings: that index's ties need a sort by key.)
# The plan wanted holds at any size: walk the namespace's rows in
# store_items_prefix_updated_idx, in the page's order, and stop at the page; the
# sub-namespaces' range is read from the prefix indexes and sorted. A generic plan is made
# once per connection from whatever statistics the table has then, and its guesses (a filter
# on an unknown value keeps almost nothing) made it walk the global updated_at index through
# every user's rows (120 buffers for 10 instructions at 12k items, 12 walking the
# namespace), AND the whole table's jsonb GIN postings with the namespace's rows, or, on a
# small table, scan it and sort. With sorts, bitmap scans (the only way to a GIN index) and
# sequential scans disabled, the ordered walk is the plan left. With partitions, the tenant
# is pruned at run time (the plan holds every partition; only the tenant's is read), and a
# connection's first run plans every partition (80 ms at 64: bench/RESULTS.md).
RECENT_PLAN_SETTINGS = (
    ("plan_cache_mode", "force_generic_plan"),
    NO_PARALLEL,
    ("enable_sort", "off"),
    ("enable_incremental_sort", "off"),
    ("enable_bitmapscan", "off"),
    ("enable_seqscan", "off"),
)
RECENT_READ_SETTINGS, RESTORE_RECENT_PLAN = plan_settings(RECENT_PLAN_SETTINGS)


def search_recent(s: str, where: str) -> str:
    """Every namespace's matching items, newest first (a search without a namespace)."""
    return f"""
SELECT {ITEM_COLUMNS} FROM {s}.store_items AS i
WHERE {where}
ORDER BY i.updated_at DESC, i.prefix, i.key
LIMIT %(limit)s OFFSET %(offset)s"""


def search_recent_in(s: str, where: str) -> str:
    """A namespace's matching items (``%(ns)s`` and the namespaces under it), newest first.

    Two branches, each an ordered walk of ``store_items_prefix_updated_idx`` cut at
    offset + limit: the namespace itself (``prefix = ns``: the index's order is the search's
    order) and its sub-namespaces (a range of prefixes, merged and cut). One ``prefix = ns OR
    prefix LIKE ...`` clause could use neither walk: it read the global ``updated_at`` index
    and skipped every newer row of other namespaces (store/0003)."""

    def branch(scope: str) -> str:
        return f"""(SELECT {ITEM_COLUMNS}, i.prefix FROM {s}.store_items AS i
    WHERE {scope} AND {where}
    ORDER BY i.updated_at DESC, i.prefix, i.key
    LIMIT %(limit)s + %(offset)s)"""

    below = "i.prefix > %(ns)s AND i.prefix < %(ns_end)s AND i.prefix LIKE %(ns_like)s"
    return f"""
SELECT * FROM (
    {branch("i.prefix = %(ns)s")}
    UNION ALL
    {branch(below)}
) AS i
ORDER BY i.updated_at DESC, i.prefix, i.key
LIMIT %(limit)s OFFSET %(offset)s"""


# Each vector branch returns its rows' cosine (column ``vcos``), computed from the vector it
# read: the scoring step then probes store_vectors again only for keyword candidates (3 buffer
# hits and a subplan per candidate, 150 of a namespace search's 505 buffers at 20k items).
# An item with several vectors keeps its best one (``cand``); the exact branches see all of
# an item's vectors nearer than its farthest candidate, so that is the item's best; a walk of
# the HNSW index may miss a nearer field of an item it found, as it may miss an item.
_DISTANCE = "v.embedding <=> %(qv)s::vector"


def _with_cos(columns: str, distance: str) -> str:
    return f"{columns}, 1 - ({distance}) AS vcos"


def _vectors_ann(s: str, columns: str, where: str) -> str:
    # The ORDER BY repeats the parameter so the planner can use the HNSW index.
    return f"""SELECT {_with_cos(columns, _DISTANCE)} FROM {s}.store_vectors AS v
    JOIN {s}.store_items AS i ON i.tenant = v.tenant AND i.prefix = v.prefix AND i.key = v.key
    WHERE {where}
    ORDER BY v.embedding <=> %(qv)s::vector
    LIMIT %(k)s"""


# How many nearest vectors a filtered HNSW scan may walk: pgvector's default
# hnsw.max_scan_tuples, where its iterative scan stops anyway. A walk that finds fewer than k
# matches is redone exactly (_search_plan.search_plan).
FILTERED_SCAN_ROWS = 20000


def _vectors_ann_filtered(s: str, columns: str, where: str, gate: str = "TRUE") -> str:
    # A large filtered scope: the nearest vectors from the HNSW index (iterative scan), each
    # checked against the filter by one primary-key probe of its item, until k match. Written
    # as a lateral probe under a LIMIT so the planner cannot turn it into the exact plan: for
    # a filter it misjudges the matches (tens for ~5,000 at 100k) and scored every match,
    # one vector probe each (36 ms at 100k, 5%; bench/RESULTS.md, issue 14 search).
    # ``gate`` is a one-time filter that keeps the index scan from starting at all. Naming the
    # tenant here made the planner sort all its vectors (3x the CPU, bench/RESULTS.md issue 28).
    return f"""SELECT {_with_cos(columns, "v.d")} FROM (
        SELECT v.tenant, v.prefix, v.key, {_DISTANCE} AS d FROM {s}.store_vectors AS v
        WHERE {gate}
        ORDER BY v.embedding <=> %(qv)s::vector
        LIMIT {FILTERED_SCAN_ROWS}
    ) AS v
    JOIN LATERAL (SELECT * FROM {s}.store_items AS i
                  WHERE i.tenant = v.tenant AND i.prefix = v.prefix AND i.key = v.key
                    AND {where} LIMIT 1) AS i ON true
    LIMIT %(k)s"""


def _vectors_of_items(s: str, columns: str, where: str) -> str:
    # Exact: the matching items first, then their vectors. "+ 0" keeps the planner off the
    # HNSW index (an HNSW scan would walk past most of the graph to find a few items).
    return f"""SELECT {_with_cos(columns, _DISTANCE)} FROM {s}.store_vectors AS v
    JOIN {s}.store_items AS i ON i.tenant = v.tenant AND i.prefix = v.prefix AND i.key = v.key
    WHERE {where}
    ORDER BY ({_DISTANCE}) + 0
    LIMIT %(k)s"""


def _vectors_of_namespace(s: str, columns: str, where: str) -> str:
    # Exact, for a small namespace: its vectors' distances first (the CTE ``nv``: one
    # index-only scan of store_vectors_namespace_idx, (tenant, prefix, key, field) carrying the
    # embedding: a user's vectors lie together in its leaves, about four to a page, where the
    # heap holds them one per page as users' items arrive interleaved; store_vectors/0004. A
    # namespace names its tenant, or the scan walks each tenant's range; narrow rows, sorted),
    # then the items of the nearest, in that order, until k match. Same rows and order as
    # _vectors_of_items.
    # LIMIT 1 (one item per key anyway) keeps the planner from flattening the lateral into a
    # hash join of every item of the namespace (4.5 ms at 1,000 items): one primary-key probe
    # per nearest vector, stopping at k.
    return f"""SELECT {_with_cos(columns, "nv.d")} FROM nv
    JOIN LATERAL (SELECT * FROM {s}.store_items AS i
                  WHERE i.tenant = nv.tenant AND i.prefix = nv.prefix AND i.key = nv.key
                    AND {where} LIMIT 1) AS i ON true
    ORDER BY nv.d
    LIMIT %(k)s"""


# Written for a generic plan too (_search_plan.search_plan): the range of prefixes is spelled out
# (LIKE with a parameter cannot bound an index scan), and the distances are sorted outside an
# unflattened subquery (OFFSET 0), so the sort cannot be served by the HNSW index: with sorts
# disabled that plan walked the store's whole graph for the namespace's vectors (29,470
# buffers at 20k items instead of 205).
# Gated by the namespace's verdict (``small``), so a large namespace's vectors are not all
# read and sorted for the exact branch it gates off (20,000 vectors, 930 buffers for
# ("mem",) at 20k items, at every first search of the minute; issue 26).
# Two branches when the store has store_vectors_namespace_idx (namespace_key_bytes): the rows
# whose key fits beside the vector in a B-tree entry, from that index (index-only), and the
# rest, from the small index of long keys (store_vectors/0004); their conditions are the
# indexes' own predicates, written out, so the planner can use each.
_NAMESPACE_VECTORS = """
nv AS MATERIALIZED (
    SELECT * FROM ({branches}
        OFFSET 0) AS v
    ORDER BY d
),"""
_NAMESPACE_BRANCH = """
        SELECT v.tenant, v.prefix, v.key, v.embedding <=> %(qv)s::vector AS d
        FROM {s}.store_vectors AS v
        WHERE (SELECT yes FROM small) AND {tenant}v.prefix >= %(ns)s AND v.prefix < %(ns_end)s
          AND (v.prefix = %(ns)s OR v.prefix LIKE %(ns_like)s){fits}"""

# A B-tree entry holds at most 2,704 bytes (BTMaxItemSize, 8 kB pages): the vector (4 bytes a
# dimension and 8 of header), the four key columns' headers, the entry's header and alignment
# (48 bytes, rounded up) leave this many for the key columns' text. Below 256 bytes (vectors of
# about 600 dimensions and more) the store has no namespace index. The bound is written into
# the indexes' predicates by store_vectors/0004: a new bound needs a migration that remakes
# them (with another, the search stays right, its branches cover every row, but slow).
_BTREE_MAX_ENTRY = 2704
_ENTRY_OVERHEAD = 48
_MIN_KEY_BYTES = 256
_KEY_LENGTH = (
    "octet_length(v.tenant) + octet_length(v.prefix) + octet_length(v.key) + octet_length(v.field)"
)


def namespace_key_bytes(dims: int) -> int:
    """Bytes of key text (tenant, prefix, key, field together) a vector of ``dims`` leaves in
    an entry of store_vectors_namespace_idx; 0 when too few to have the index (store_vectors/0004
    is rendered with it: rows with longer keys go to the index of long keys instead).

    >>> namespace_key_bytes(384), namespace_key_bytes(1536)
    (1112, 0)
    """
    room = _BTREE_MAX_ENTRY - _ENTRY_OVERHEAD - 4 * dims - 8
    return room if room >= _MIN_KEY_BYTES else 0


def _namespace_branches(branch: str, s: str, tenant: str, key_bytes: int, covered: str = "") -> str:
    """``branch`` once per index holding the namespace's vectors (see _NAMESPACE_BRANCH);
    ``covered``: a condition more on the rows of store_vectors_namespace_idx."""
    if not key_bytes:
        return branch.format(s=s, tenant=tenant, fits="")
    fits = f"\n          AND {_KEY_LENGTH} <= {int(key_bytes)}{covered}"
    long = f"\n          AND {_KEY_LENGTH} > {int(key_bytes)}"
    return (
        branch.format(s=s, tenant=tenant, fits=fits)
        + "\n        UNION ALL"
        + branch.format(s=s, tenant=tenant, fits=long)
    )


def _namespace_vectors(s: str, tenant: str, key_bytes: int) -> str:
    return _NAMESPACE_VECTORS.format(
        branches=_namespace_branches(_NAMESPACE_BRANCH, s, tenant, key_bytes)
    )


# A namespace's vectors, counted for its verdict before its items (search_ranked): from the
# leaves the exact branch then reads (a cold search reads them once), so a namespace with
# few enough vectors is known small without store_items. Counting its items alone (as
# before) read the primary key's range, 11-25 scattered leaves at 1M items, and a heap page
# per item on pages not marked all-visible (every page of store_items after store/0007
# rewrote it, or beside an erased user's rows: up to 1,000 blocks, 20-33 ms of a cold
# search; bench/RESULTS.md, issue 28 session 12). The embedding named keeps the count
# on the index that holds it (the primary key is narrower, and the planner took it).
_NAMESPACE_VECTOR_ROWS = """
        SELECT 1 FROM {s}.store_vectors AS v
        WHERE {tenant}v.prefix >= %(ns)s AND v.prefix < %(ns_end)s
          AND (v.prefix = %(ns)s OR v.prefix LIKE %(ns_like)s){fits}"""
_COVERED = "\n          AND vector_dims(v.embedding) > 0"


# Items in a namespace, by a range of the primary key (tenant, prefix, key) when the namespace
# names its tenant (index-only once vacuumed).
_NAMESPACE_ITEMS = """SELECT 1 FROM {s}.store_items AS i
    WHERE {tenant}i.prefix >= %(ns)s AND i.prefix < %(ns_end)s
      AND (i.prefix = %(ns)s OR i.prefix LIKE %(ns_like)s)"""


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
            vec = f"vec AS (\n    {_vectors_ann_filtered(s, columns, where)}\n)"
        elif scope is None:
            vec = f"vec AS (\n    {_vectors_ann(s, columns, where)}\n)"
        elif scope == "items" and small:
            vec = f"vec AS (\n    {_vectors_of_items(s, columns, where)}\n)"
        else:
            gated = f"{where} AND (SELECT yes FROM small)"
            if scope == "namespace":
                count = _NAMESPACE_ITEMS.format(s=s, tenant=alone.replace("v.", "i."))
                exact = _vectors_of_namespace(s, columns, gated)
            else:
                count = f"SELECT 1 FROM {s}.store_items AS i WHERE {where}"
                exact = _vectors_of_items(s, columns, gated)
            fewer = f"""(
        SELECT count(*) <= %(exact_rows)s FROM ({count} LIMIT %(exact_rows)s + 1) AS x)"""
            if scope == "namespace":
                # No more vectors than the bound: no more items with a vector either, so small
                # (items without one may make it large: scored exactly all the same, at what
                # its vectors cost); else its items are counted. OR stops at the first true.
                rows = _namespace_branches(_NAMESPACE_VECTOR_ROWS, s, alone, key_bytes, _COVERED)
                fewer = f"""(
        SELECT count(*) <= %(exact_rows)s FROM ({rows}
        LIMIT %(exact_rows)s + 1) AS x)
        OR {fewer}"""
            counted = f"""
small AS MATERIALIZED (
    SELECT coalesce(nullif(%(known_small)s, '')::bool, {fewer}) AS yes
),"""
            if scope == "namespace":
                counted += _namespace_vectors(s, alone, key_bytes)
                ann = _vectors_ann(s, columns, f"{where} AND NOT (SELECT yes FROM small)")
            else:
                ann = _vectors_ann_filtered(s, columns, where, "NOT (SELECT yes FROM small)")
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
        cos = f"""coalesce(i.vcos, (SELECT max(1 - ({_DISTANCE})) FROM {s}.store_vectors AS v
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
        f"""(SELECT max(1 - ({_DISTANCE})) FROM {s}.store_vectors AS v
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
