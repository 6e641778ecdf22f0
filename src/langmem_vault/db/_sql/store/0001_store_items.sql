-- VaultStore items. prefix is the namespace joined by '.', kept beside the namespace array so
-- prefix searches use the primary key's btree (COLLATE "C" makes LIKE 'a.b.%' indexable and
-- orders labels by code point, as Python sorts tuples of str).
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS {schema}.store_items (
    prefix      text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,
    namespace   text[] COLLATE "C" NOT NULL,
    value       jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    -- TTL in fractional minutes; expires_at is refreshed from it on read when configured.
    ttl_minutes double precision,
    expires_at  timestamptz,
    -- Full-text vector of the indexed fields; NULL when the item was put with index=False.
    search_tsv  tsvector,
    indexed     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (prefix, key)
);

CREATE INDEX IF NOT EXISTS store_items_updated_idx
    ON {schema}.store_items (updated_at DESC);
CREATE INDEX IF NOT EXISTS store_items_expires_idx
    ON {schema}.store_items (expires_at) WHERE expires_at IS NOT NULL;
-- fastupdate off: a GIN pending list must be scanned linearly by every search until vacuum
-- merges it; a memory store reads far more often than it writes.
CREATE INDEX IF NOT EXISTS store_items_tsv_idx
    ON {schema}.store_items USING gin (search_tsv) WITH (fastupdate = off);
CREATE INDEX IF NOT EXISTS store_items_value_idx
    ON {schema}.store_items USING gin (value jsonb_path_ops);
