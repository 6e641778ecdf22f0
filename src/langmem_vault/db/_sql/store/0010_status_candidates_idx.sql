-- The items whose status is not plainly "active" at some time: a status of their own, a
-- rule's switch, or an end time (service/_records.py STATUS_RULES, each rule's part that does
-- not depend on the time, as store/_labels.candidates_sql writes it: a count's statement uses
-- this index only when its condition implies this predicate; tests/store/test_status_counts.py
-- checks that it does). A count of a user's statuses (store/_page_plan.count_plan) reads these
-- rows and judges their status at the time asked; every other live row is "active" and is
-- counted in the index of store/0008 alone, without reading it: at 10,000 memories the count
-- no longer reads 10,000 rows (bench/RESULTS.md, issue 28 session 13).
-- Small (only these rows), but its build reads store_items and blocks writes meanwhile (about
-- 1 s per million rows): an operator can build it beforehand with CREATE INDEX CONCURRENTLY by
-- this name (IF NOT EXISTS then skips it here).
CREATE INDEX IF NOT EXISTS store_items_status_idx ON {schema}.store_items (tenant, prefix)
    WHERE (value -> 'status') = '"pending_confirmation"'::jsonb
       OR (value -> 'status') = '"superseded"'::jsonb
       OR jsonb_typeof(value -> 'valid_to') = 'string'
       OR (value -> 'active') = 'false'::jsonb
       OR jsonb_typeof(value -> 'expires_at') = 'string';
