-- An item's page time as a column (store/_pages.py: the listings' order), so a page by offset
-- skips the rows before it by an index-only walk. Postgres does not read an expression index
-- index-only (its planner asks for every column the expression reads: the whole value), so on
-- store_items_prefix_created_idx (store/0005) a skip of 5,000 rows fetched each row and
-- computed its time from its value: 45-73 ms at 10k (bench/RESULTS.md, issue 28 session 10).
--
-- Online on a large table (docs/scaling.md, "The page time column"): a nullable column with
-- no default is a change of the catalog only (a stored generated column, as this migration
-- first was, rewrote store_items under its exclusive lock: 29 s at 1M rows). A trigger fills
-- it on every insert and update, whatever process or statement writes (old code during a
-- rolling upgrade too); store/0008 fills the rows written before, in batches, builds the
-- index CONCURRENTLY and swaps it in, outside this transaction (db/_page_at.py). Until then
-- pages order by item_time itself, on the index of store/0006 (store/_page_plan.py).
-- Databases that applied the first form of this migration keep their generated column (the
-- runner does not apply a version twice) and its index.
ALTER TABLE {schema}.store_items ADD COLUMN IF NOT EXISTS page_at timestamptz;

-- Every update, not only those of value or created_at: an update moves a row the backfill
-- may not have reached to another page, which the backfill's walk by page may then miss.
CREATE OR REPLACE FUNCTION {schema}.fill_page_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.page_at := {schema}.item_time(NEW.value, NEW.created_at);
    RETURN NEW;
END
$$;
CREATE OR REPLACE TRIGGER store_items_page_at BEFORE INSERT OR UPDATE
    ON {schema}.store_items FOR EACH ROW EXECUTE FUNCTION {schema}.fill_page_at();
