-- A namespace's items in creation order (store/_pages.py: PageOp, the listings' pages). An
-- item's creation time is its value's own "created_at" when that holds a timestamp (a memory
-- keeps the time it was made, through an export and import), else the time it was first
-- stored. A page is an ordered walk of this index from the cursor (time, key), cut at the page
-- size: a page of 10 reads 11 rows (one more, to learn whether a next page exists), however
-- many the namespace holds. Newest first walks it backward. expires_at is included so that a
-- count of a namespace's live items (the listing's total) can be an index-only scan.
--
-- item_time is declared IMMUTABLE for the index: pg_input_is_valid and the cast read the
-- session's TimeZone only for a timestamp without an offset, and every value this package
-- writes has one (Postgres 16 or later: pg_input_is_valid).
--
-- Not CONCURRENTLY (see 0003): the build blocks writes to store_items, not reads, for about as
-- long as 0003's did (about 1 s per million rows on the 2-core build machine). Create the
-- index CONCURRENTLY first, by this name, to avoid that; IF NOT EXISTS then skips it here.
CREATE OR REPLACE FUNCTION {schema}.item_time(value jsonb, stored timestamptz)
RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(
        CASE WHEN pg_input_is_valid(value ->> 'created_at', 'timestamptz')
             THEN (value ->> 'created_at')::timestamptz END,
        stored)
$$;

CREATE INDEX IF NOT EXISTS store_items_prefix_created_idx
    ON {schema}.store_items (prefix, {schema}.item_time(value, created_at), key)
    INCLUDE (expires_at);
