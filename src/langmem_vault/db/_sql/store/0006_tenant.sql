-- The tenant (langmem_vault/_tenants.py): the user an item belongs to, read from its
-- namespace's user label ('' for shared namespaces), first in every key of the store's
-- tables, so they can be hash-partitioned (setup(partitions=N)) or distributed on Citus by it,
-- and a statement that names one tenant reads one partition. tenant_of is the store's
-- TenantRule as SQL ({tenant_rule}: TenantRule.tenant_sql), for the rows written before.
--
-- On a large table (docs/scaling.md, "Migrating to the tenant column"): every step below is
-- idempotent, so an operator can run the slow ones beforehand without blocking writes (add the
-- column, fill it in batches of a few thousand rows, CREATE UNIQUE INDEX CONCURRENTLY
-- store_items_tenant_key); this migration then fills only the rows written since, and swaps
-- the keys (brief locks). Run by setup() alone it holds store_items' lock for the whole fill.
CREATE OR REPLACE FUNCTION {schema}.tenant_of(namespace text[])
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT {tenant_rule} $$;

ALTER TABLE {schema}.store_items ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
UPDATE {schema}.store_items AS i SET tenant = {schema}.tenant_of(i.namespace) WHERE i.tenant IS NULL;
ALTER TABLE {schema}.store_items ALTER COLUMN tenant SET NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS store_items_tenant_key
    ON {schema}.store_items (tenant, prefix, key);

-- The rows that reference an item carry its tenant too (their foreign keys name it).
ALTER TABLE {schema}.entities ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
UPDATE {schema}.entities AS e SET tenant = {schema}.tenant_of(string_to_array(e.scope, '.'))
WHERE e.tenant IS NULL;
ALTER TABLE {schema}.entities ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE {schema}.entity_aliases ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
ALTER TABLE {schema}.entity_mentions ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
ALTER TABLE {schema}.entity_relations ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
UPDATE {schema}.entity_aliases AS a SET tenant = {schema}.tenant_of(string_to_array(a.prefix, '.'))
WHERE a.tenant IS NULL;
UPDATE {schema}.entity_mentions AS m SET tenant = {schema}.tenant_of(string_to_array(m.prefix, '.'))
WHERE m.tenant IS NULL;
UPDATE {schema}.entity_relations AS r SET tenant = {schema}.tenant_of(string_to_array(r.prefix, '.'))
WHERE r.tenant IS NULL;
ALTER TABLE {schema}.entity_aliases ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE {schema}.entity_mentions ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE {schema}.entity_relations ALTER COLUMN tenant SET NOT NULL;

-- The swap: the foreign keys on (prefix, key) go, the keys are rebuilt with the tenant first,
-- the foreign keys come back on (tenant, ...). store_vectors' foreign key goes here too (its
-- own track, store_vectors/0003, brings it back with the tenant).
DO $$
BEGIN
    IF to_regclass('{schema}.store_vectors') IS NOT NULL THEN
        ALTER TABLE {schema}.store_vectors DROP CONSTRAINT IF EXISTS store_vectors_prefix_key_fkey;
    END IF;
    IF to_regclass('{schema}.entity_vectors') IS NOT NULL THEN
        ALTER TABLE {schema}.entity_vectors
            DROP CONSTRAINT IF EXISTS entity_vectors_entity_id_fkey;
    END IF;
END$$;
ALTER TABLE {schema}.entity_aliases
    DROP CONSTRAINT IF EXISTS entity_aliases_prefix_key_fkey,
    DROP CONSTRAINT IF EXISTS entity_aliases_entity_id_fkey,
    DROP CONSTRAINT entity_aliases_pkey,
    ADD PRIMARY KEY (tenant, scope, alias, entity_id, prefix, key);
ALTER TABLE {schema}.entity_mentions
    DROP CONSTRAINT IF EXISTS entity_mentions_prefix_key_fkey,
    DROP CONSTRAINT IF EXISTS entity_mentions_entity_id_fkey,
    DROP CONSTRAINT entity_mentions_pkey,
    ADD PRIMARY KEY (tenant, entity_id, prefix, key);
ALTER TABLE {schema}.entity_relations
    DROP CONSTRAINT IF EXISTS entity_relations_prefix_key_fkey,
    DROP CONSTRAINT IF EXISTS entity_relations_subject_id_fkey,
    DROP CONSTRAINT IF EXISTS entity_relations_object_id_fkey,
    DROP CONSTRAINT entity_relations_pkey,
    ADD PRIMARY KEY (tenant, subject_id, object_id, predicate, prefix, key);
ALTER TABLE {schema}.entities
    DROP CONSTRAINT entities_pkey,
    DROP CONSTRAINT entities_scope_norm_key,
    ADD PRIMARY KEY (tenant, id),
    ADD CONSTRAINT entities_scope_norm_key UNIQUE (tenant, scope, norm);
ALTER TABLE {schema}.store_items
    DROP CONSTRAINT store_items_pkey,
    ADD CONSTRAINT store_items_pkey PRIMARY KEY USING INDEX store_items_tenant_key;

ALTER TABLE {schema}.entity_aliases
    ADD FOREIGN KEY (tenant, entity_id)
        REFERENCES {schema}.entities (tenant, id) ON DELETE CASCADE,
    ADD FOREIGN KEY (tenant, prefix, key)
        REFERENCES {schema}.store_items (tenant, prefix, key) ON DELETE CASCADE;
ALTER TABLE {schema}.entity_mentions
    ADD FOREIGN KEY (tenant, entity_id)
        REFERENCES {schema}.entities (tenant, id) ON DELETE CASCADE,
    ADD FOREIGN KEY (tenant, prefix, key)
        REFERENCES {schema}.store_items (tenant, prefix, key) ON DELETE CASCADE;
ALTER TABLE {schema}.entity_relations
    ADD FOREIGN KEY (tenant, subject_id)
        REFERENCES {schema}.entities (tenant, id) ON DELETE CASCADE,
    ADD FOREIGN KEY (tenant, object_id)
        REFERENCES {schema}.entities (tenant, id) ON DELETE CASCADE,
    ADD FOREIGN KEY (tenant, prefix, key)
        REFERENCES {schema}.store_items (tenant, prefix, key) ON DELETE CASCADE;

-- The secondary indexes that start with an item's key or an entity lead with the tenant too,
-- so a partitioned (or distributed) table is probed in the tenant's partition only.
DROP INDEX IF EXISTS {schema}.entity_aliases_item_idx;
DROP INDEX IF EXISTS {schema}.entity_aliases_entity_idx;
DROP INDEX IF EXISTS {schema}.entity_mentions_item_idx;
DROP INDEX IF EXISTS {schema}.entity_relations_object_idx;
DROP INDEX IF EXISTS {schema}.entity_relations_item_idx;
CREATE INDEX IF NOT EXISTS entity_aliases_item_idx
    ON {schema}.entity_aliases (tenant, prefix, key);
CREATE INDEX IF NOT EXISTS entity_aliases_entity_idx
    ON {schema}.entity_aliases (tenant, entity_id);
CREATE INDEX IF NOT EXISTS entity_mentions_item_idx
    ON {schema}.entity_mentions (tenant, prefix, key);
CREATE INDEX IF NOT EXISTS entity_relations_object_idx
    ON {schema}.entity_relations (tenant, object_id);
CREATE INDEX IF NOT EXISTS entity_relations_item_idx
    ON {schema}.entity_relations (tenant, prefix, key);

-- A namespace's ordered walks (0002, 0003, 0005) lead with the tenant too: a read that names
-- its tenant (every read of one user's namespace) then walks them as before, where the old
-- ones lost to the primary key and a sort. Built under new names and renamed, so an operator
-- can build them beforehand with CREATE INDEX CONCURRENTLY by the new names (IF NOT EXISTS
-- then skips them here); else each build blocks writes (not reads) for about 1 s per
-- million rows, as 0003's did.
CREATE INDEX IF NOT EXISTS store_items_tenant_updated_idx
    ON {schema}.store_items (tenant, prefix, updated_at DESC, key);
CREATE INDEX IF NOT EXISTS store_items_tenant_created_idx
    ON {schema}.store_items (tenant, prefix, {schema}.item_time(value, created_at), key)
    INCLUDE (expires_at);
CREATE INDEX IF NOT EXISTS store_items_tenant_private_idx
    ON {schema}.store_items (tenant, prefix, updated_at DESC)
    WHERE value @> '{"private": true}'::jsonb;
DROP INDEX IF EXISTS {schema}.store_items_prefix_updated_idx;
DROP INDEX IF EXISTS {schema}.store_items_prefix_created_idx;
DROP INDEX IF EXISTS {schema}.store_items_private_idx;
ALTER INDEX {schema}.store_items_tenant_updated_idx RENAME TO store_items_prefix_updated_idx;
ALTER INDEX {schema}.store_items_tenant_created_idx RENAME TO store_items_prefix_created_idx;
ALTER INDEX {schema}.store_items_tenant_private_idx RENAME TO store_items_private_idx;
-- A namespace names its tenant: without this the planner multiplies the two clauses'
-- selectivities (tenant = $1 AND prefix = $2), expects almost no rows, and a generic plan
-- reads every match through a bitmap and sorts it instead of walking the index in order.
CREATE STATISTICS IF NOT EXISTS {schema}.store_items_tenant_prefix (dependencies, ndistinct)
    ON tenant, prefix FROM {schema}.store_items;
