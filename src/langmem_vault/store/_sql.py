"""The store's SQL, as named templates. ``{s}`` is the (validated) schema name; every value
travels as a query parameter. Table alias ``i`` is always store_items."""

from __future__ import annotations

from langmem_vault.store._keyword_sql import COVERAGE, keyword_candidates, terms

ITEM_COLUMNS = "i.namespace, i.key, i.value, i.created_at, i.updated_at, i.ttl_minutes"
NOT_EXPIRED = "(i.expires_at IS NULL OR i.expires_at > now())"
# The predicate of store_items_private_idx (store/0002), written as that index's constant: a
# prepared statement's generic plan can match a partial index only against a constant, never
# against the filter's parameters (a filter value stays a parameter; this is the store's own).
PRIVATE_PREDICATE = """i.value @> '{"private": true}'::jsonb"""

# pgvector 0.8: keep scanning the HNSW graph until enough rows pass the filters (without it,
# a filtered search returns fewer rows than asked for: pgvector #216), and widen the beam to
# the number of candidates we want.
HNSW_SETTINGS = (
    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
    " set_config('hnsw.ef_search', %(ef)s, true)"
)

# The settings of a plain search (no filter; no scope small enough to score exactly), whose
# statement is the same for every query: run it with its generic plan, as a prepared statement,
# so it is not planned again on every search (0.7-1 ms at 100k items, 40% of its database time).
# Postgres would not choose that plan itself: without the query it guesses that the namespace
# clause keeps 1.5% of the rows, and the generic plan costs more than the custom ones it saw.
# It needs the candidate LIMITs written as constants (``literal_k``): with LIMIT $n Postgres
# assumes a tenth of the rows and sorts every vector instead (about 300 ms per search). Only
# pages whose k is the store's default candidate count take this path (k is then one number,
# so there are four such statements per store: plain; a namespace's first search of the
# minute, its later ones when small, when large), so a caller paging with many sizes does
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
PLAIN_PLAN_SETTINGS = (
    ("plan_cache_mode", "force_generic_plan"),
    ("enable_sort", "off"),
    ("enable_seqscan", "off"),
    ("enable_hashjoin", "off"),
    ("enable_mergejoin", "off"),
)
PLAIN_SEARCH_SETTINGS = (
    HNSW_SETTINGS
    + "".join(f", set_config('{name}', '{value}', true)" for name, value in PLAIN_PLAN_SETTINGS)
    + " FROM (SELECT "
    + ", ".join(
        f"set_config('langmem_vault.{name}', current_setting('{name}'), true)"
        for name, _ in PLAIN_PLAN_SETTINGS
    )
    + ") AS saved"
)
RESTORE_PLAN_MODE = "SELECT " + ", ".join(
    f"set_config('{name}', current_setting('langmem_vault.{name}'), true)"
    for name, _ in PLAIN_PLAN_SETTINGS
)


def literal_k(statement: str, k: int) -> str:
    """``statement`` with its candidate count ``%(k)s`` written as a constant (see
    PLAIN_SEARCH_SETTINGS); k is a computed int, never user text.

    >>> literal_k("LIMIT %(k)s OFFSET %(wanted)s", 50)
    'LIMIT 50 OFFSET %(wanted)s'
    """
    return statement.replace("%(k)s", str(int(k)))


_KEYS = "unnest(%(prefixes)s::text[], %(keys)s::text[]) AS u(prefix, key)"
# The keys' tenants (plans.key_arrays): a constant to prune partitions (route on Citus) by.
TENANTS = "i.tenant = ANY(%(tenants)s::text[])"


def tenant_of(s: str, prefix: str) -> str:
    """The tenant of ``prefix`` (SQL text), by the schema's tenant_of (store/0006)."""
    return f"{s}.tenant_of(string_to_array({prefix}, '.'))"


def lexeme_stats(s: str) -> str:
    """The common lexemes of the full-text column and their frequencies (see lexemes.py), on
    rows that also give the table's size and whether its statistics are ``stale``; one row
    with a NULL lexeme when there are none yet.

    The size is the larger of the last ANALYZE's estimate and the live rows the statistics
    collector counts. Stale: the table's file is more than twice (plus 16 pages, a few hundred
    items) what the last ANALYZE saw (never analyzed: none), or more rows changed since then
    than it counted. The file size is exact at once; the collector's counts reach the view
    up to a second after a commit, too late for a bulk load that searches straight away."""
    return f"""
SELECT e.elem AS lexeme, e.freq, t.rows, t.stale
FROM (SELECT greatest(c.reltuples, a.n_live_tup, 0) AS rows,
             pg_relation_size(c.oid) / current_setting('block_size')::int > 2 * c.relpages + 16
             OR coalesce(a.n_mod_since_analyze > greatest(c.reltuples, %(common_rows)s), false)
                 AS stale
      FROM pg_class AS c LEFT JOIN pg_stat_user_tables AS a ON a.relid = c.oid
      WHERE c.oid = '{s}.store_items'::regclass) AS t
LEFT JOIN (pg_stats AS st
           CROSS JOIN LATERAL unnest(st.most_common_elems::text::text[],
                                     st.most_common_elem_freqs) AS e(elem, freq))
    ON st.schemaname = %(schema_name)s AND st.tablename = 'store_items'
   AND st.attname = 'search_tsv' AND e.elem IS NOT NULL"""


def analyze_items(s: str) -> str:
    """ANALYZE the items now, for a search that found their statistics stale (lexeme_stats).

    SKIP_LOCKED: autovacuum or another store analyzing them already is as good. A replica, a
    read-only transaction or a role that may not analyze the table must not fail the search:
    it goes on with the statistics there are (the exception block)."""
    return f"""
DO $$BEGIN ANALYZE (SKIP_LOCKED) {s}.store_items; EXCEPTION WHEN OTHERS THEN NULL; END$$"""


def get_items(s: str) -> str:
    return f"""
SELECT {ITEM_COLUMNS} FROM {s}.store_items AS i
JOIN {_KEYS} ON i.prefix = u.prefix AND i.key = u.key
WHERE {TENANTS} AND {NOT_EXPIRED}"""


def refresh_ttl(s: str) -> str:
    """Refresh the expiry of the keys that have a TTL, locking them in (prefix, key) order as
    batches do, so it never deadlocks with one, on its own or inside a batch's transaction."""
    return f"""
WITH locked AS (
    SELECT i.prefix, i.key FROM {s}.store_items AS i
    JOIN {_KEYS} ON i.prefix = u.prefix AND i.key = u.key
    WHERE {TENANTS} AND i.ttl_minutes IS NOT NULL AND {NOT_EXPIRED}
    ORDER BY i.prefix, i.key FOR UPDATE OF i
)
UPDATE {s}.store_items AS i SET expires_at = now() + i.ttl_minutes * interval '1 minute'
FROM locked WHERE {TENANTS} AND i.prefix = locked.prefix AND i.key = locked.key"""


_KEEP_INDEX = (
    "(i.prefix, i.key) IN (SELECT * FROM unnest(%(keep_prefixes)s::text[], %(keep_keys)s::text[]))"
)

# A value no put can store (values are JSON objects): marks rows a batch only locks.
LOCK_ONLY_VALUE = "null"


def write_items(s: str) -> str:
    """Upsert a batch's items and lock its other keys, in one statement, in (prefix, key) order.

    Two batches writing the same keys then queue on the first key they share instead of
    deadlocking. It takes one statement: a lock taken by an earlier statement, from an
    earlier snapshot, misses the rows other batches create meanwhile, and a later statement
    would lock those out of order. ON CONFLICT sees the latest rows and waits for uncommitted
    ones, so new keys are claimed in order too.

    Rows whose value is ``LOCK_ONLY_VALUE`` (keys the batch deletes or whose TTL it refreshes)
    lock an existing row without changing it (ON CONFLICT ... WHERE locks the rows it does
    not update) or claim an absent key with a placeholder that ``delete_items`` removes
    before the commit, so nobody ever sees it.

    Keys listed in ``keep_prefixes``/``keep_keys`` (puts with ``index=False``) keep an
    existing item's full-text vector, as InMemoryStore and PostgresStore keep its embeddings.
    """
    return f"""
INSERT INTO {s}.store_items AS i
    (tenant, prefix, key, namespace, value, ttl_minutes, expires_at, search_tsv, indexed)
SELECT {tenant_of(s, "u.prefix")}, u.prefix, u.key, string_to_array(u.prefix, '.'),
       coalesce(u.value, '{LOCK_ONLY_VALUE}')::jsonb, u.ttl,
       now() + u.ttl * interval '1 minute',
       CASE WHEN u.text IS NULL THEN NULL
            ELSE to_tsvector(%(text_config)s::regconfig, u.text) END,
       u.text IS NOT NULL
FROM unnest(%(prefixes)s::text[], %(keys)s::text[], %(values)s::text[], %(ttls)s::float8[],
            %(texts)s::text[]) AS u(prefix, key, value, ttl, text)
ORDER BY u.prefix COLLATE "C", u.key COLLATE "C"
ON CONFLICT (tenant, prefix, key) DO UPDATE SET
    value = EXCLUDED.value, updated_at = now(), ttl_minutes = EXCLUDED.ttl_minutes,
    expires_at = EXCLUDED.expires_at,
    search_tsv = CASE WHEN {_KEEP_INDEX} THEN i.search_tsv ELSE EXCLUDED.search_tsv END,
    indexed = CASE WHEN {_KEEP_INDEX} THEN i.indexed ELSE EXCLUDED.indexed END
WHERE EXCLUDED.value <> '{LOCK_ONLY_VALUE}'::jsonb"""


def delete_items(s: str) -> str:
    """Delete the keys marked ``drop``, and the placeholders ``write_items`` left on the others."""
    return f"""
DELETE FROM {s}.store_items AS i
USING unnest(%(prefixes)s::text[], %(keys)s::text[], %(drops)s::bool[]) AS u(prefix, key, drop)
WHERE {TENANTS} AND i.prefix = u.prefix AND i.key = u.key
  AND (u.drop OR i.value = '{LOCK_ONLY_VALUE}'::jsonb)"""


def delete_vectors(s: str) -> str:
    return f"""
DELETE FROM {s}.store_vectors AS v USING {_KEYS}
WHERE v.tenant = ANY(%(tenants)s::text[]) AND v.prefix = u.prefix AND v.key = u.key"""


def insert_vectors(s: str) -> str:
    return f"""
INSERT INTO {s}.store_vectors (tenant, prefix, key, field, embedding)
SELECT {tenant_of(s, "u.prefix")}, u.prefix, u.key, u.field, u.embedding::vector
FROM unnest(%(prefixes)s::text[], %(keys)s::text[], %(fields)s::text[], %(embeddings)s::text[])
    AS u(prefix, key, field, embedding)"""


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
    # Exact, for a small namespace: its vectors' distances first (the CTE ``nv``: one bitmap
    # scan of the vector table's primary key, which starts with prefix, so each page is read
    # once however many of its rows match; narrow rows, sorted), then the items of the nearest,
    # in that order, until k match. Same rows and order as _vectors_of_items.
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
# ``{gate}``: in the statement that counts the namespace, its verdict, so a large namespace's
# vectors are not all read and sorted for the exact branch it gates off (20,000 vectors, 930
# buffers for ("mem",) at 20k items, at every first search of the minute; issue 26).
_NAMESPACE_VECTORS = """
nv AS MATERIALIZED (
    SELECT * FROM (
        SELECT v.tenant, v.prefix, v.key, v.embedding <=> %(qv)s::vector AS d
        FROM {s}.store_vectors AS v
        WHERE {gate} AND {tenant}v.prefix >= %(ns)s AND v.prefix < %(ns_end)s
          AND (v.prefix = %(ns)s OR v.prefix LIKE %(ns_like)s)
        OFFSET 0) AS v
    ORDER BY d
),"""

# Items in a namespace, by a range of the primary key (index-only once vacuumed).
_NAMESPACE_ITEMS = """SELECT 1 FROM {s}.store_items AS i
    WHERE {tenant}i.prefix >= %(ns)s AND i.prefix < %(ns_end)s
      AND (i.prefix = %(ns)s OR i.prefix LIKE %(ns_like)s)"""


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
) -> str:
    """The whole search in one statement: the query's terms, candidates from each retriever,
    re-scored exactly, best first.

    ``scope`` (hybrid stores) picks how vector candidates are found: None, by the HNSW index;
    ``"items"`` (a filter), exactly when at most ``%(exact_rows)s`` items match, else by a
    walk of the index that checks each candidate against the filter (column ``walked``: the
    candidates it found); ``"namespace"`` (a namespace prefix, no filter), exactly when the
    namespace holds at most ``%(exact_rows)s`` vectors, else by the index. ``small`` is that
    verdict when the caller knows it (``scopes.ScopeSizes``): the statement then holds only the
    branch it picks. Else the statement counts (no further than one past the bound), runs only
    the branch the count picks (the other is gated off by a one-time filter, so a scoped search
    is one round trip too) and returns the verdict in column ``small_scope``.

    Each retriever returns whole rows, so candidates need no second visit to store_items, and
    ``scored`` is materialised so each candidate's cosine and coverage are computed once.
    ``tenant``: ``where`` names one tenant (``%(tenant)s``); the vector-only reads name it too.
    """
    columns = f"i.tenant, i.prefix, {ITEM_COLUMNS}, i.search_tsv"
    alone = "v.tenant = %(tenant)s AND " if tenant else ""
    keyword = keyword_candidates(s, f"{columns}, NULL::float8 AS vcos", where, hybrid=hybrid)
    verdict = ""
    if hybrid:
        counted = ""
        if scope == "items" and small is False:
            vec = f"vec AS (\n    {_vectors_ann_filtered(s, columns, where)}\n)"
        elif scope is None or small is False:
            vec = f"vec AS (\n    {_vectors_ann(s, columns, where)}\n)"
        elif small:
            if scope == "namespace":
                counted = _NAMESPACE_VECTORS.format(s=s, gate="TRUE", tenant=alone)
                vec = f"vec AS (\n    {_vectors_of_namespace(s, columns, where)}\n)"
            else:
                vec = f"vec AS (\n    {_vectors_of_items(s, columns, where)}\n)"
        else:
            gated = f"{where} AND (SELECT yes FROM small)"
            if scope == "namespace":
                count = _NAMESPACE_ITEMS.format(s=s, tenant=alone.replace("v.", "i."))
                exact = _vectors_of_namespace(s, columns, gated)
            else:
                count = f"SELECT 1 FROM {s}.store_items AS i WHERE {where}"
                exact = _vectors_of_items(s, columns, gated)
            counted = f"""
small AS MATERIALIZED (
    SELECT count(*) <= %(exact_rows)s AS yes FROM ({count} LIMIT %(exact_rows)s + 1) AS x
),"""
            if scope == "namespace":
                counted += _NAMESPACE_VECTORS.format(
                    s=s, gate="(SELECT yes FROM small)", tenant=alone
                )
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
        # COALESCE runs the probe only for candidates no vector branch found.
        cos = f"""coalesce(i.vcos, (SELECT max(1 - ({_DISTANCE})) FROM {s}.store_vectors AS v
         WHERE v.tenant = i.tenant AND v.prefix = i.prefix AND v.key = i.key))"""
    else:
        candidates = f"{keyword},\ncand AS (SELECT * FROM kw)"
        cos = "NULL::float8"
    return f"""
WITH {terms(hybrid=hybrid)},
{candidates},
scored AS MATERIALIZED (
    SELECT i.*, {cos} AS cos, {COVERAGE} AS coverage FROM cand AS i
)
SELECT namespace, key, value, created_at, updated_at, ttl_minutes, {score} AS score,
       cos, coverage{verdict}
FROM scored
ORDER BY {order} DESC, updated_at DESC LIMIT %(wanted)s"""


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


def list_namespaces(s: str, column: str, where: str) -> str:
    return f"""
SELECT DISTINCT {column} AS ns FROM {s}.store_items AS i
WHERE {where}
ORDER BY ns LIMIT %(limit)s OFFSET %(offset)s"""


def sweep_expired(s: str) -> str:
    # Locks in key order, as batches do, so a sweep never deadlocks with one.
    return f"""
WITH doomed AS (
    SELECT prefix, key FROM {s}.store_items WHERE expires_at <= now()
    ORDER BY prefix, key FOR UPDATE
), gone AS (
    DELETE FROM {s}.store_items AS i USING doomed AS d
    WHERE i.prefix = d.prefix AND i.key = d.key RETURNING 1
)
SELECT count(*) AS n FROM gone"""


def purge_prefixes(s: str, *, routed: bool) -> str:
    """Delete every item under the namespace prefixes, expired or not (their vectors go by
    the foreign key's cascade); locks in key order, as batches do. ``routed``: the prefixes'
    tenants are known (``%(tenants)s``), and only their partitions are read."""
    tenants = f"{TENANTS} AND " if routed else ""
    return f"""
WITH doomed AS (
    SELECT i.tenant, i.prefix, i.key FROM {s}.store_items AS i
    WHERE {tenants}(i.prefix = ANY (%(prefixes)s::text[])
                    OR i.prefix LIKE ANY (%(likes)s::text[]))
    ORDER BY i.prefix, i.key FOR UPDATE
), gone AS (
    DELETE FROM {s}.store_items AS i USING doomed AS d
    WHERE {tenants}i.tenant = d.tenant AND i.prefix = d.prefix AND i.key = d.key RETURNING 1
)
SELECT count(*) AS n FROM gone"""


def vector_type(s: str) -> str:
    return f"""
SELECT format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute AS a
WHERE a.attrelid = '{s}.store_vectors'::regclass AND a.attname = 'embedding'"""


def analyze(s: str, *, vectors: bool = False) -> str:
    # The entity tables too: their statistics sample names and aliases (an erase ends here).
    tables = ["store_items", "entities", "entity_aliases"] + (["store_vectors"] if vectors else [])
    return "ANALYZE " + ", ".join(f"{s}.{t}" for t in tables)
