-- VaultSaver tables. Values of a few hundred bytes arrive compressed by the client (see
-- checkpointers/compression.py): Postgres only compresses rows over 2 kB. Identifiers are COLLATE "C": checkpoint ids sort by code point, as
-- Python sorts them, and byte-wise comparison is the cheapest.

-- One row per thread: the per-user index, and the row every write to the thread locks first,
-- so element ids are handed out without gaps and pruning never races a put.
CREATE TABLE IF NOT EXISTS {schema}.saver_threads (
    thread_id      text COLLATE "C" PRIMARY KEY,
    user_id        text COLLATE "C",
    title          text,
    message_count  integer NOT NULL DEFAULT 0,
    next_elem      integer NOT NULL DEFAULT 1,
    started_at     timestamptz NOT NULL DEFAULT now(),
    last_activity  timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50);
-- Every put updates its thread's row. Indexing only user_id (never changed by a put) and
-- leaving half of each page free keeps those updates HOT: no new index entries, no bloat.
-- Retention's idle scan reads the whole (small) table instead of an index on last_activity.
CREATE INDEX IF NOT EXISTS saver_threads_user_idx ON {schema}.saver_threads (user_id);

-- The checkpoint without its channel values (those live in saver_blobs): the channel
-- versions as jsonb, which the SQL joins blobs on, and everything else (timestamp, versions
-- seen, small inline values) as compressed JSON in `body`, half the size of a jsonb column.
CREATE TABLE IF NOT EXISTS {schema}.saver_checkpoints (
    thread_id             text COLLATE "C" NOT NULL,
    checkpoint_ns         text COLLATE "C" NOT NULL DEFAULT '',
    checkpoint_id         text COLLATE "C" NOT NULL,
    parent_checkpoint_id  text COLLATE "C",
    v                     integer NOT NULL,
    channel_versions      jsonb NOT NULL,
    body                  bytea NOT NULL,
    metadata              jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE INDEX IF NOT EXISTS saver_checkpoints_run_idx
    ON {schema}.saver_checkpoints ((metadata ->> 'run_id'))
    WHERE metadata ? 'run_id';

-- One row per channel version. A long list is stored as `elems`, ranges of element ids
-- (start, end, start, end, ...) into saver_elements, so an append-only message list costs a
-- few integers per version instead of the whole list again.
CREATE TABLE IF NOT EXISTS {schema}.saver_blobs (
    thread_id      text COLLATE "C" NOT NULL,
    checkpoint_ns  text COLLATE "C" NOT NULL DEFAULT '',
    channel        text COLLATE "C" NOT NULL,
    version        text COLLATE "C" NOT NULL,
    type           text NOT NULL,
    blob           bytea,
    elems          integer[],
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

-- Content-addressed list elements, stored once per thread.
CREATE TABLE IF NOT EXISTS {schema}.saver_elements (
    thread_id  text COLLATE "C" NOT NULL,
    elem_id    integer NOT NULL,
    hash       bytea NOT NULL,
    type       text NOT NULL,
    blob       bytea,
    PRIMARY KEY (thread_id, elem_id),
    UNIQUE (thread_id, hash)
);

CREATE TABLE IF NOT EXISTS {schema}.saver_writes (
    thread_id      text COLLATE "C" NOT NULL,
    checkpoint_ns  text COLLATE "C" NOT NULL DEFAULT '',
    checkpoint_id  text COLLATE "C" NOT NULL,
    task_id        text COLLATE "C" NOT NULL,
    idx            integer NOT NULL,
    task_path      text COLLATE "C" NOT NULL DEFAULT '',
    channel        text COLLATE "C" NOT NULL,
    type           text NOT NULL,
    blob           bytea,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
