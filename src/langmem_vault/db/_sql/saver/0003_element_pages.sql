-- List elements in pages: PAGE_SIZE (32) consecutive element ids of a thread in one row, once
-- a writer holds them all (see checkpointers/pages.py). A long thread then reads a page row
-- per 32 messages instead of a row per message, and a page compresses better than its
-- messages one by one. Elements not in a page yet stay rows of saver_elements; readers take
-- both, so threads written before this migration read as they are and get their pages at
-- their next write.
CREATE TABLE IF NOT EXISTS {schema}.saver_pages (
    thread_id  text COLLATE "C" NOT NULL,
    first_id   integer NOT NULL,
    last_id    integer NOT NULL,
    type       text NOT NULL,
    hashes     bytea NOT NULL,      -- the elements' 16-byte hashes, in id order
    sizes      integer[] NOT NULL,  -- the elements' serialized sizes, in id order
    blob       bytea NOT NULL,      -- their serialized bytes, concatenated, then compressed
    PRIMARY KEY (thread_id, first_id)
) WITH (toast_tuple_target = 8160);
-- Hashes are random and blobs already compressed: Postgres need not try compressing them,
-- and with the target above a page of up to about 8 kB stays in its row (no TOAST lookups).
ALTER TABLE {schema}.saver_pages ALTER COLUMN hashes SET STORAGE EXTERNAL;
ALTER TABLE {schema}.saver_pages ALTER COLUMN blob SET STORAGE EXTERNAL;
