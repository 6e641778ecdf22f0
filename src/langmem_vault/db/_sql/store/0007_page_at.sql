-- An item's page time as a column (store/_pages.py: the listings' order), so a page by offset
-- skips the rows before it by an index-only walk. Postgres does not read an expression index
-- index-only (its planner asks for every column the expression reads: the whole value), so on
-- store_items_prefix_created_idx (store/0005) a skip of 5,000 rows fetched each row and
-- computed its time from its value: 45-73 ms at 10k (bench/RESULTS.md, issue 28 session 10).
-- A stored generated column holds the same item_time, kept by Postgres on every write
-- (nothing a writer must remember), 8 bytes a row; the index walks it in the same order.
--
-- On a large table (docs/scaling.md, "The page time column"): adding a stored generated column
-- rewrites store_items under its exclusive lock (reads wait too), about as long as copying the
-- table; the index build after it blocks writes only. Plan a window, as for VACUUM FULL.
ALTER TABLE {schema}.store_items ADD COLUMN IF NOT EXISTS page_at timestamptz
    GENERATED ALWAYS AS ({schema}.item_time(value, created_at)) STORED;
CREATE INDEX IF NOT EXISTS store_items_page_at_idx
    ON {schema}.store_items (tenant, prefix, page_at, key) INCLUDE (expires_at);
DROP INDEX IF EXISTS {schema}.store_items_prefix_created_idx;
ALTER INDEX {schema}.store_items_page_at_idx RENAME TO store_items_prefix_created_idx;
