-- One user's vectors together (issue 28): a B-tree on the vectors' key that carries the
-- embedding, so a namespace's exact search reads them by an index-only scan of that user's
-- leaf pages (three or four vectors a page) instead of one heap page per vector. Users' items
-- arrive interleaved, so the heap holds a user's vectors one per page (1,000 pages for 1,000
-- vectors, 70 ms cold at 100k items); B-tree leaves keep their keys in order whatever the
-- order of arrival (docs/scaling.md, "One user's vectors together").
-- A B-tree entry holds at most 2,704 bytes: {key_bytes} is what the vector leaves for the key
-- columns' text (store/_search_sql.namespace_key_bytes; 0 when the vectors are too large to
-- have the index at all). A row with a longer key (keys and namespaces may hold up to 1 kB
-- each) goes to a small index of long keys instead, which the search reads beside it.
-- Safe on a large table: IF NOT EXISTS, so an operator can build both beforehand without
-- blocking writes (CREATE INDEX CONCURRENTLY, by these names, with these definitions); else
-- their build blocks writes (not reads) for a few seconds per 100,000 vectors.
DO $$
BEGIN
    IF {key_bytes} > 0 THEN
        CREATE INDEX IF NOT EXISTS store_vectors_namespace_idx
            ON {schema}.store_vectors (tenant, prefix, key, field) INCLUDE (embedding)
            WHERE octet_length(tenant) + octet_length(prefix) + octet_length(key)
                  + octet_length(field) <= {key_bytes};
        CREATE INDEX IF NOT EXISTS store_vectors_long_keys_idx
            ON {schema}.store_vectors (tenant, prefix, key, field)
            WHERE octet_length(tenant) + octet_length(prefix) + octet_length(key)
                  + octet_length(field) > {key_bytes};
    END IF;
END$$;
-- An index-only scan reads the heap for rows on pages not yet marked all-visible: vacuum marks
-- them. PostgreSQL vacuums an insert-only table after 20% new rows; every 2% keeps the share of
-- a user's vectors read from the heap small (each such vacuum reads only the new pages).
-- A partitioned table takes no storage parameters: its partitions do (setup(partitions=N) copies
-- the table's to each partition it makes).
DO $$
DECLARE
    part regclass;
BEGIN
    FOR part IN
        SELECT c.oid::regclass FROM pg_class AS c
        WHERE c.oid = '{schema}.store_vectors'::regclass AND c.relkind = 'r'
        UNION ALL
        SELECT h.inhrelid::regclass FROM pg_inherits AS h
        WHERE h.inhparent = '{schema}.store_vectors'::regclass
    LOOP
        EXECUTE format('ALTER TABLE %s SET (autovacuum_vacuum_insert_scale_factor = 0.02)', part);
    END LOOP;
END$$;
