-- The tenant (langmem_vault/_tenants.py) of the saver's tables: the thread's owner, the user id
-- the thread was created under ('' for a thread created with no user), first in every key, so
-- the tables can be hash-partitioned (setup(partitions=N)) or distributed on Citus by it beside
-- the user's memories, and a statement that names one tenant reads one partition. Every row of
-- a thread carries its thread's tenant (checkpointers/_tenancy.py says how a call finds it).
--
-- Rows written before get the tenant of their thread's row (its owner: coalesce(user_id, ''));
-- rows of a thread with no thread row (writes saved before any checkpoint) get ''.
-- On a large table: every step is idempotent, so an operator can run the slow ones beforehand
-- without blocking writes (add the columns, fill them in batches, CREATE UNIQUE INDEX
-- CONCURRENTLY the saver_*_tenant_key indexes below); this migration then fills only the rows
-- written since, and swaps the keys (brief locks). Run by setup() alone it holds each table's
-- lock for the whole fill.
ALTER TABLE {schema}.saver_threads ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
UPDATE {schema}.saver_threads SET tenant = coalesce(user_id, '') WHERE tenant IS NULL;
ALTER TABLE {schema}.saver_threads ALTER COLUMN tenant SET NOT NULL;

ALTER TABLE {schema}.saver_checkpoints ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
ALTER TABLE {schema}.saver_blobs ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
ALTER TABLE {schema}.saver_elements ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
ALTER TABLE {schema}.saver_pages ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
ALTER TABLE {schema}.saver_writes ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
UPDATE {schema}.saver_checkpoints AS x SET tenant = t.tenant FROM {schema}.saver_threads AS t
WHERE t.thread_id = x.thread_id AND x.tenant IS NULL;
UPDATE {schema}.saver_blobs AS x SET tenant = t.tenant FROM {schema}.saver_threads AS t
WHERE t.thread_id = x.thread_id AND x.tenant IS NULL;
UPDATE {schema}.saver_elements AS x SET tenant = t.tenant FROM {schema}.saver_threads AS t
WHERE t.thread_id = x.thread_id AND x.tenant IS NULL;
UPDATE {schema}.saver_pages AS x SET tenant = t.tenant FROM {schema}.saver_threads AS t
WHERE t.thread_id = x.thread_id AND x.tenant IS NULL;
UPDATE {schema}.saver_writes AS x SET tenant = t.tenant FROM {schema}.saver_threads AS t
WHERE t.thread_id = x.thread_id AND x.tenant IS NULL;
UPDATE {schema}.saver_checkpoints SET tenant = '' WHERE tenant IS NULL;
UPDATE {schema}.saver_blobs SET tenant = '' WHERE tenant IS NULL;
UPDATE {schema}.saver_elements SET tenant = '' WHERE tenant IS NULL;
UPDATE {schema}.saver_pages SET tenant = '' WHERE tenant IS NULL;
UPDATE {schema}.saver_writes SET tenant = '' WHERE tenant IS NULL;
ALTER TABLE {schema}.saver_checkpoints ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE {schema}.saver_blobs ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE {schema}.saver_elements ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE {schema}.saver_pages ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE {schema}.saver_writes ALTER COLUMN tenant SET NOT NULL;

CREATE UNIQUE INDEX IF NOT EXISTS saver_threads_tenant_key
    ON {schema}.saver_threads (tenant, thread_id);
CREATE UNIQUE INDEX IF NOT EXISTS saver_checkpoints_tenant_key
    ON {schema}.saver_checkpoints (tenant, thread_id, checkpoint_ns, checkpoint_id);
CREATE UNIQUE INDEX IF NOT EXISTS saver_blobs_tenant_key
    ON {schema}.saver_blobs (tenant, thread_id, checkpoint_ns, channel, version);
CREATE UNIQUE INDEX IF NOT EXISTS saver_elements_tenant_key
    ON {schema}.saver_elements (tenant, thread_id, elem_id);
CREATE UNIQUE INDEX IF NOT EXISTS saver_elements_tenant_hash_key
    ON {schema}.saver_elements (tenant, thread_id, hash);
CREATE UNIQUE INDEX IF NOT EXISTS saver_pages_tenant_key
    ON {schema}.saver_pages (tenant, thread_id, first_id);
CREATE UNIQUE INDEX IF NOT EXISTS saver_writes_tenant_key
    ON {schema}.saver_writes (tenant, thread_id, checkpoint_ns, checkpoint_id, task_id, idx);

ALTER TABLE {schema}.saver_threads
    DROP CONSTRAINT saver_threads_pkey,
    ADD CONSTRAINT saver_threads_pkey PRIMARY KEY USING INDEX saver_threads_tenant_key;
ALTER TABLE {schema}.saver_checkpoints
    DROP CONSTRAINT saver_checkpoints_pkey,
    ADD CONSTRAINT saver_checkpoints_pkey PRIMARY KEY USING INDEX saver_checkpoints_tenant_key;
ALTER TABLE {schema}.saver_blobs
    DROP CONSTRAINT saver_blobs_pkey,
    ADD CONSTRAINT saver_blobs_pkey PRIMARY KEY USING INDEX saver_blobs_tenant_key;
ALTER TABLE {schema}.saver_elements
    DROP CONSTRAINT saver_elements_pkey,
    DROP CONSTRAINT saver_elements_thread_id_hash_key,
    ADD CONSTRAINT saver_elements_pkey PRIMARY KEY USING INDEX saver_elements_tenant_key,
    ADD CONSTRAINT saver_elements_thread_id_hash_key UNIQUE USING INDEX
        saver_elements_tenant_hash_key;
ALTER TABLE {schema}.saver_pages
    DROP CONSTRAINT saver_pages_pkey,
    ADD CONSTRAINT saver_pages_pkey PRIMARY KEY USING INDEX saver_pages_tenant_key;
ALTER TABLE {schema}.saver_writes
    DROP CONSTRAINT saver_writes_pkey,
    ADD CONSTRAINT saver_writes_pkey PRIMARY KEY USING INDEX saver_writes_tenant_key;

-- A call that does not know its thread's tenant yet (a thread this process has not seen, read
-- by another user or by code with no user) finds it here: the one saver lookup by thread id
-- alone. thread_id never changes, so a put's update of the thread row stays HOT.
CREATE INDEX IF NOT EXISTS saver_threads_thread_idx ON {schema}.saver_threads (thread_id);
