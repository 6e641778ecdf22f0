-- A namespace's items newest first (a search without a query: inject's newest facts, a
-- scan's pages): an ordered walk of this index reads just the rows it returns. Without it,
-- that read walked the global updated_at index and skipped every newer row of other users
-- (7 ms instead of 0.85 ms behind 3,000 rows of another user, 2026-11-23). key completes the
-- search's order (updated_at DESC, prefix, key) within one prefix, so no sort is needed.
--
-- Not CONCURRENTLY: migrations run in one transaction under an advisory lock (see
-- db/migrations.py), where CREATE INDEX CONCURRENTLY cannot run. The build blocks writes to
-- store_items (not reads) while it runs: about a second per million rows on a laptop. An
-- operator who cannot pause writes that long can create this index CONCURRENTLY first, by
-- this name; IF NOT EXISTS then skips it here.
CREATE INDEX IF NOT EXISTS store_items_prefix_updated_idx
    ON {schema}.store_items (prefix, updated_at DESC, key);
