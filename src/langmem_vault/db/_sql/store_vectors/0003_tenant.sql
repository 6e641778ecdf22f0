-- The tenant first in the vector tables' keys (see store/0006, which ran before: the store's
-- track comes first, and it dropped the foreign keys on (prefix, key) and on entities (id)).
-- Safe on a large table as store/0006 is: each step is idempotent, so the fill and the
-- unique index can be made beforehand (CREATE UNIQUE INDEX CONCURRENTLY
-- store_vectors_tenant_key), and this then takes brief locks only.
-- Vectors whose item or entity went while no foreign key stood (store/0006 dropped them, and a
-- store without an index runs only the store's track: this one may come much later) would
-- fail the keys below on every later setup(): they belonged to nothing, so they go.
DELETE FROM {schema}.store_vectors AS v WHERE NOT EXISTS (
    SELECT 1 FROM {schema}.store_items AS i WHERE i.prefix = v.prefix AND i.key = v.key);
DELETE FROM {schema}.entity_vectors AS v WHERE NOT EXISTS (
    SELECT 1 FROM {schema}.entities AS e WHERE e.id = v.entity_id);
ALTER TABLE {schema}.store_vectors ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
UPDATE {schema}.store_vectors AS v SET tenant = {schema}.tenant_of(string_to_array(v.prefix, '.'))
WHERE v.tenant IS NULL;
ALTER TABLE {schema}.store_vectors ALTER COLUMN tenant SET NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS store_vectors_tenant_key
    ON {schema}.store_vectors (tenant, prefix, key, field);
ALTER TABLE {schema}.store_vectors
    DROP CONSTRAINT IF EXISTS store_vectors_prefix_key_fkey,
    DROP CONSTRAINT store_vectors_pkey,
    ADD CONSTRAINT store_vectors_pkey PRIMARY KEY USING INDEX store_vectors_tenant_key,
    ADD FOREIGN KEY (tenant, prefix, key)
        REFERENCES {schema}.store_items (tenant, prefix, key) ON DELETE CASCADE;

ALTER TABLE {schema}.entity_vectors ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
UPDATE {schema}.entity_vectors AS v SET tenant = e.tenant
FROM {schema}.entities AS e WHERE e.id = v.entity_id AND v.tenant IS NULL;
ALTER TABLE {schema}.entity_vectors
    ALTER COLUMN tenant SET NOT NULL,
    DROP CONSTRAINT IF EXISTS entity_vectors_entity_id_fkey,
    DROP CONSTRAINT entity_vectors_pkey,
    ADD PRIMARY KEY (tenant, entity_id),
    ADD FOREIGN KEY (tenant, entity_id)
        REFERENCES {schema}.entities (tenant, id) ON DELETE CASCADE;
