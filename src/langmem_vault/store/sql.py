"""The store's SQL, as named templates. ``{s}`` is the (validated) schema name; every value
travels as a query parameter. Table alias ``i`` is always store_items."""

from __future__ import annotations

ITEM_COLUMNS = "i.namespace, i.key, i.value, i.created_at, i.updated_at, i.ttl_minutes"
NOT_EXPIRED = "(i.expires_at IS NULL OR i.expires_at > now())"

# pgvector 0.8: keep scanning the HNSW graph until enough rows pass the filters (without it,
# a filtered search returns fewer rows than asked for: pgvector #216), and widen the beam to
# the number of candidates we want.
HNSW_SETTINGS = (
    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
    " set_config('hnsw.ef_search', %(ef)s, true)"
)

_KEYS = "unnest(%(prefixes)s::text[], %(keys)s::text[]) AS u(prefix, key)"

# The query's distinct lexemes (stemmed, stop words removed) and an OR tsquery over them.
_QUERY_TERMS = """
terms AS MATERIALIZED (
    SELECT lex, (SELECT string_agg(quote_literal(l), ' | ') FROM unnest(lex) AS l)::tsquery AS tq
    FROM (SELECT tsvector_to_array(to_tsvector(%(text_config)s::regconfig, %(query)s)) AS lex) AS x
)"""

_COVERAGE = """
CASE WHEN cardinality(t.lex) = 0 OR i.search_tsv IS NULL THEN 0.0
     ELSE (SELECT count(*) FROM unnest(t.lex) AS l
           WHERE l = ANY (tsvector_to_array(i.search_tsv)))::float8 / cardinality(t.lex)
END"""


def get_items(s: str) -> str:
    return f"""
SELECT {ITEM_COLUMNS} FROM {s}.store_items AS i
JOIN {_KEYS} ON i.prefix = u.prefix AND i.key = u.key
WHERE {NOT_EXPIRED}"""


def refresh_ttl(s: str) -> str:
    return f"""
UPDATE {s}.store_items AS i SET expires_at = now() + i.ttl_minutes * interval '1 minute'
FROM {_KEYS}
WHERE i.prefix = u.prefix AND i.key = u.key AND i.ttl_minutes IS NOT NULL AND {NOT_EXPIRED}"""


def delete_items(s: str) -> str:
    return f"""
DELETE FROM {s}.store_items AS i USING {_KEYS}
WHERE i.prefix = u.prefix AND i.key = u.key"""


def upsert_items(s: str) -> str:
    # created_at is kept on update; updated_at moves.
    return f"""
INSERT INTO {s}.store_items AS i
    (prefix, key, namespace, value, ttl_minutes, expires_at, search_tsv, indexed)
SELECT u.prefix, u.key, string_to_array(u.prefix, '.'), u.value::jsonb, u.ttl,
       now() + u.ttl * interval '1 minute',
       CASE WHEN u.text IS NULL THEN NULL
            ELSE to_tsvector(%(text_config)s::regconfig, u.text) END,
       u.text IS NOT NULL
FROM unnest(%(prefixes)s::text[], %(keys)s::text[], %(values)s::text[], %(ttls)s::float8[],
            %(texts)s::text[]) AS u(prefix, key, value, ttl, text)
ON CONFLICT (prefix, key) DO UPDATE SET
    value = EXCLUDED.value, updated_at = now(), ttl_minutes = EXCLUDED.ttl_minutes,
    expires_at = EXCLUDED.expires_at, search_tsv = EXCLUDED.search_tsv,
    indexed = EXCLUDED.indexed"""


def delete_vectors(s: str) -> str:
    return f"""
DELETE FROM {s}.store_vectors AS v USING {_KEYS}
WHERE v.prefix = u.prefix AND v.key = u.key"""


def insert_vectors(s: str) -> str:
    return f"""
INSERT INTO {s}.store_vectors (prefix, key, field, embedding)
SELECT u.prefix, u.key, u.field, u.embedding::vector
FROM unnest(%(prefixes)s::text[], %(keys)s::text[], %(fields)s::text[], %(embeddings)s::text[])
    AS u(prefix, key, field, embedding)"""


def search_recent(s: str, where: str) -> str:
    return f"""
SELECT {ITEM_COLUMNS} FROM {s}.store_items AS i
WHERE {where}
ORDER BY i.updated_at DESC, i.prefix, i.key
LIMIT %(limit)s OFFSET %(offset)s"""


def search_ranked(s: str, where: str, score: str, order: str, *, hybrid: bool) -> str:
    """Candidates from each retriever, re-scored exactly, best first."""
    keyword = f"""
kw AS (
    SELECT i.prefix, i.key FROM {s}.store_items AS i, terms AS t
    WHERE i.search_tsv @@ t.tq AND {where}
    ORDER BY ts_rank(i.search_tsv, t.tq) DESC
    LIMIT %(k)s
)"""
    if not hybrid:
        return f"""
WITH {_QUERY_TERMS}, {keyword},
scored AS (
    SELECT {ITEM_COLUMNS}, NULL::float8 AS cos, {_COVERAGE} AS coverage
    FROM kw JOIN {s}.store_items AS i USING (prefix, key) CROSS JOIN terms AS t
)
SELECT *, {order} AS rank, {score} AS score FROM scored
ORDER BY rank DESC, updated_at DESC LIMIT %(wanted)s"""
    # The ORDER BY of the vector CTE repeats the parameter so the planner can use HNSW.
    return f"""
WITH {_QUERY_TERMS}, {keyword},
vec AS (
    SELECT v.prefix, v.key FROM {s}.store_vectors AS v
    JOIN {s}.store_items AS i ON i.prefix = v.prefix AND i.key = v.key
    WHERE {where}
    ORDER BY v.embedding <=> %(qv)s::vector
    LIMIT %(k)s
),
cand AS (SELECT prefix, key FROM vec UNION SELECT prefix, key FROM kw),
scored AS (
    SELECT {ITEM_COLUMNS},
        (SELECT max(1 - (v.embedding <=> %(qv)s::vector)) FROM {s}.store_vectors AS v
         WHERE v.prefix = i.prefix AND v.key = i.key) AS cos,
        {_COVERAGE} AS coverage
    FROM cand JOIN {s}.store_items AS i USING (prefix, key) CROSS JOIN terms AS t
)
SELECT *, {order} AS rank, {score} AS score FROM scored
ORDER BY rank DESC, updated_at DESC LIMIT %(wanted)s"""


def search_fill(s: str, where: str, *, hybrid: bool) -> str:
    """Items a query could not score: un-indexed ones (and, keyword-only, non-matching ones)."""
    if hybrid:
        return f"""
SELECT {ITEM_COLUMNS}, NULL::float8 AS score FROM {s}.store_items AS i
WHERE NOT i.indexed AND {where}
ORDER BY i.updated_at DESC, i.prefix, i.key LIMIT %(fill)s"""
    return f"""
WITH {_QUERY_TERMS}
SELECT {ITEM_COLUMNS}, CASE WHEN i.indexed THEN 0.0::float8 END AS score
FROM {s}.store_items AS i CROSS JOIN terms AS t
WHERE NOT coalesce(i.search_tsv @@ t.tq, false) AND {where}
ORDER BY i.indexed DESC, i.updated_at DESC, i.prefix, i.key LIMIT %(fill)s"""


def list_namespaces(s: str, column: str, where: str) -> str:
    return f"""
SELECT DISTINCT {column} AS ns FROM {s}.store_items AS i
WHERE {where}
ORDER BY ns LIMIT %(limit)s OFFSET %(offset)s"""


def sweep_expired(s: str) -> str:
    return f"""
WITH gone AS (DELETE FROM {s}.store_items WHERE expires_at <= now() RETURNING 1)
SELECT count(*) AS n FROM gone"""


def vector_type(s: str) -> str:
    return f"""
SELECT format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute AS a
WHERE a.attrelid = '{s}.store_vectors'::regclass AND a.attname = 'embedding'"""
