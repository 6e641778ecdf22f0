-- A namespace's items newest first (a search without a query: inject's newest facts, a
-- scan's pages): an ordered walk of this index reads just the rows it returns. Without it,
-- that read walked the global updated_at index and skipped every newer row of other
-- namespaces (other users, usage records): 2.23 ms instead of 0.21 ms of server time behind
-- 3,000 rows of another user (bench/RESULTS.md, issue 14 inject). key completes the search's
-- order (updated_at DESC, prefix, key) within one prefix, so no sort is needed.
--
-- Not CONCURRENTLY: migrations run in one transaction under an advisory lock (see
-- db/migrations.py), where CREATE INDEX CONCURRENTLY cannot run. The build blocks writes to
-- store_items (not reads) while it runs: 0.9-1.1 s per million rows on the 2-core build
-- machine. An operator who cannot pause writes that long can create this index CONCURRENTLY
-- first, by this name; IF NOT EXISTS then skips it here.
CREATE INDEX IF NOT EXISTS store_items_prefix_updated_idx
    ON {schema}.store_items (prefix, updated_at DESC, key);
