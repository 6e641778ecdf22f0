-- A random number per thread row: a writer's cached (epoch, next_elem) can never match a
-- deleted and recreated thread of the same id (see checkpointers/elements.py).
ALTER TABLE {schema}.saver_threads
    ADD COLUMN IF NOT EXISTS epoch bigint NOT NULL DEFAULT (floor(random() * 4e18))::bigint;
