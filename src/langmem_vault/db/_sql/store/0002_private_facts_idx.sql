-- The owner's private facts, newest first: inject reads them every turn by the filter
-- {"private": true} (they are never in the search index). Without this index that read scans
-- every fact of the namespace (about 10 ms at 10k facts); with it, only the private ones.
-- The filter builder adds the implied containment clause (value @> '{"private": true}') the
-- planner needs to match this predicate.
CREATE INDEX IF NOT EXISTS store_items_private_idx
    ON {schema}.store_items (prefix, updated_at DESC)
    WHERE value @> '{"private": true}'::jsonb;
