-- A namespace's vectors, read together: an index-only scan of this index returns every vector
-- of a namespace from a few adjacent leaf pages (about four entries per 8 kB page at 384
-- dimensions), where the table holds them one per heap page (items of many users arrive
-- interleaved). A cold namespace search read 1,016 heap pages for 1,000 vectors; with this
-- index, about 250 leaf pages (bench/RESULTS.md, issue 14 search). It costs about as much
-- space as the vectors themselves.
--
-- A btree entry holds at most 2,704 bytes: the vector (4 * dims + 8 bytes) and the names
-- must fit, so rows whose prefix, key and field together exceed {cover_room} bytes (never at
-- the sizes LangMem uses; the store allows up to 2,304) are left to the second index, and
-- with dims above about 640 every row is. The search reads both (sql._NAMESPACE_VECTORS),
-- each by its predicate written as this constant.
--
-- Not CONCURRENTLY: migrations run in one transaction (see store/0003_prefix_updated_idx.sql);
-- about 2 s per 100k vectors on the 2-core build machine, blocking writes to store_vectors.
CREATE INDEX IF NOT EXISTS store_vectors_cover_idx
    ON {schema}.store_vectors (prefix, key, field) INCLUDE (embedding)
    WHERE octet_length(prefix) + octet_length(key) + octet_length(field) <= {cover_room};
CREATE INDEX IF NOT EXISTS store_vectors_uncovered_idx
    ON {schema}.store_vectors (prefix)
    WHERE octet_length(prefix) + octet_length(key) + octet_length(field) > {cover_room};
