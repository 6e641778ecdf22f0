"""The store's SQL, as named templates. ``{s}`` is the (validated) schema name; every value
travels as a query parameter. Table alias ``i`` is always store_items."""

from __future__ import annotations

ITEM_COLUMNS = "i.namespace, i.key, i.value, i.created_at, i.updated_at, i.ttl_minutes"
NOT_EXPIRED = "(i.expires_at IS NULL OR i.expires_at > now())"
# The predicate of store_items_private_idx (store/0002), written as that index's constant: a
# prepared statement's generic plan can match a partial index only against a constant, never
# against the filter's parameters (a filter value stays a parameter; this is the store's own).
PRIVATE_PREDICATE = """i.value @> '{"private": true}'::jsonb"""

_KEYS = "unnest(%(prefixes)s::text[], %(keys)s::text[]) AS u(prefix, key)"
# The keys' tenants (plans.key_arrays): a constant to prune partitions (route on Citus) by.
TENANTS = "i.tenant = ANY(%(tenants)s::text[])"


def tenant_of(s: str, prefix: str) -> str:
    """The tenant of ``prefix`` (SQL text), by the schema's tenant_of (store/0006)."""
    return f"{s}.tenant_of(string_to_array({prefix}, '.'))"


def lexeme_stats(s: str, common_rows: int) -> str:
    """The keyword statistics in one row (see lexemes.py): ``freqs``, the common lexemes of
    the full-text column and their frequencies as one text in the form the search statement
    looks lexemes up in (``_keyword_sql.LEXEME_FREQ``; none listed yet: chr(1) alone),
    ``rarest``, the smallest of those frequencies, the table's size (``rows``) and whether its
    statistics are ``stale``. Built here rather than sent as a row per lexeme: ~1,000 rows
    decoded and joined again by the client (2 ms, 5 on a new connection; issue 26). The
    frequencies keep the text of their ``real`` values, as the client read them before.

    The size is the larger of the last ANALYZE's estimate and the live rows the statistics
    collector counts. Stale: the table's file is more than twice (plus 16 pages, a few hundred
    items) what the last ANALYZE saw (never analyzed: none), or more rows changed since then
    than it counted. The file size is exact at once; the collector's counts reach the view
    up to a second after a commit, too late for a bulk load that searches straight away.

    A partitioned table (``setup(partitions=N)``) has no file and no change counts of its
    own, and autovacuum analyzes its partitions, never it: its size is its partitions' rows,
    and it is stale when those are more than twice (plus ``common_rows``) what its own last
    ANALYZE counted (never analyzed: as soon as it has rows).

    Also the most common namespaces and their shares of the rows (``prefixes``,
    ``prefix_freqs``; ``prefix_nulls`` is NULL when the column was never analyzed): how
    large a namespace is, without counting it (``lexemes.LexemeStats.namespace_rows``).

    No parameters (the schema is a validated name, ``common_rows`` an int), so that, prepared,
    it is planned once per connection: the catalog views it reads took 5.8 ms to plan at each
    read, for 1.2 ms of execution (bench/RESULTS.md, issue 26/28 session 11)."""
    common_rows = int(common_rows)
    return f"""
SELECT e.freqs, e.rarest, t.rows, t.stale, p.prefixes, p.prefix_freqs, p.prefix_nulls
FROM (SELECT greatest(c.reltuples, a.n_live_tup, 0) AS rows,
             pg_relation_size(c.oid) / current_setting('block_size')::int > 2 * c.relpages + 16
             OR coalesce(a.n_mod_since_analyze > greatest(c.reltuples, {common_rows}), false)
                 AS stale
      FROM pg_class AS c LEFT JOIN pg_stat_user_tables AS a ON a.relid = c.oid
      WHERE c.oid = '{s}.store_items'::regclass AND c.relkind <> 'p'
      UNION ALL
      SELECT n.rows, n.rows > 0 AND (c.reltuples < 0 OR n.rows > 2 * c.reltuples + {common_rows})
      FROM pg_class AS c CROSS JOIN LATERAL (
          SELECT coalesce(sum(greatest(p.reltuples, a.n_live_tup, 0)), 0) AS rows
          FROM pg_inherits AS h JOIN pg_class AS p ON p.oid = h.inhrelid
          LEFT JOIN pg_stat_user_tables AS a ON a.relid = p.oid
          WHERE h.inhparent = c.oid) AS n
      WHERE c.oid = '{s}.store_items'::regclass AND c.relkind = 'p') AS t
CROSS JOIN (
    SELECT chr(1) || coalesce(string_agg(e.elem || chr(2) || e.freq::text || chr(1), ''), '')
               AS freqs,
           min(e.freq) AS rarest
    FROM pg_stats AS st
    CROSS JOIN LATERAL unnest(st.most_common_elems::text::text[], st.most_common_elem_freqs)
        AS e(elem, freq)
    WHERE st.schemaname = '{s}' AND st.tablename = 'store_items'
      AND st.attname = 'search_tsv' AND e.elem IS NOT NULL) AS e
LEFT JOIN LATERAL (
    SELECT st.most_common_vals::text::text[] AS prefixes, st.most_common_freqs AS prefix_freqs,
           st.null_frac AS prefix_nulls
    FROM pg_stats AS st
    WHERE st.schemaname = '{s}' AND st.tablename = 'store_items'
      AND st.attname = 'prefix'
    LIMIT 1) AS p ON true"""


#: The columns a search analyzes when it finds the keyword statistics stale (analyze_items).
SEARCH_ANALYZED = ("search_tsv", "tenant", "prefix", "key", "expires_at")


def analyze_items(s: str) -> str:
    """ANALYZE the items now, for a search that found their keyword statistics stale
    (lexeme_stats): the full-text column (the keyword weights) and the columns the search's
    joins and clauses plan by (tenant, prefix, key, expiry).

    Not the JSON values, namespaces and dates: ANALYZE of the whole table cost 180-251 ms at
    20k items, in the first search after a bulk load, against 65 ms (issue 26); autovacuum
    analyzes them soon after (the load passed its threshold). The full-text column alone
    (14-30 ms) is not enough: on a never-analyzed table the generic plan then joined every
    item to the HNSW walk (140 ms per search). A column list leaves the changes counter
    (n_mod_since_analyze) as it is: after a bulk load it is about the rows the ANALYZE
    counted, so the statistics read as fresh; after rewrites of most rows a search may
    analyze again, at most once a minute, until autovacuum has run. SKIP_LOCKED: autovacuum or
    another store analyzing them already is as good. A replica, a read-only transaction or a
    role that may not analyze the table must not fail the search: it goes on with the
    statistics there are (the exception block)."""
    columns = ", ".join(SEARCH_ANALYZED)
    return f"""
DO $$BEGIN ANALYZE (SKIP_LOCKED) {s}.store_items ({columns});
EXCEPTION WHEN OTHERS THEN NULL; END$$"""


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


def list_namespaces(s: str, column: str, where: str) -> str:
    return f"""
SELECT DISTINCT {column} AS ns FROM {s}.store_items AS i
WHERE {where}
ORDER BY ns LIMIT %(limit)s OFFSET %(offset)s"""


def sweep_expired(s: str) -> str:
    # Locks in key order, as batches do, so a sweep never deadlocks with one.
    return f"""
WITH doomed AS (
    SELECT tenant, prefix, key FROM {s}.store_items WHERE expires_at <= now()
    ORDER BY prefix, key FOR UPDATE
), gone AS (
    DELETE FROM {s}.store_items AS i USING doomed AS d
    WHERE i.tenant = d.tenant AND i.prefix = d.prefix AND i.key = d.key RETURNING 1
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
