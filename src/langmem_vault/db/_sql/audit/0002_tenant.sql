-- The tenant (langmem_vault/_tenants.py) of the audit log: the user the entry is about, which
-- is its user_id (an entry about a memory names the memory's owner, read from its namespace
-- by the memory templates, so it is the tenant of that user's memories too). Every entry has
-- a user, so none has the shared tenant ''. First in every key, so the table can be
-- hash-partitioned (setup(partitions=N)) or distributed on Citus by it beside the user's
-- memories, and a user's history, export and erase read one partition. The insert writes it
-- (privacy/_audit/log.py); retention's purge by age is the one statement across tenants.
--
-- On a large table: every step is idempotent, so an operator can run the slow ones beforehand
-- without blocking writes (add the column, fill it in batches, CREATE UNIQUE INDEX
-- CONCURRENTLY vault_audit_tenant_key and CREATE INDEX CONCURRENTLY the two
-- vault_audit_tenant_* indexes below); this migration then fills only the rows written since,
-- and swaps the keys (brief locks). Run by setup() alone it holds the table's lock for the
-- whole fill.
ALTER TABLE {schema}.vault_audit ADD COLUMN IF NOT EXISTS tenant text COLLATE "C";
UPDATE {schema}.vault_audit SET tenant = user_id WHERE tenant IS NULL;
ALTER TABLE {schema}.vault_audit ALTER COLUMN tenant SET NOT NULL;

CREATE UNIQUE INDEX IF NOT EXISTS vault_audit_tenant_key ON {schema}.vault_audit (tenant, id);
ALTER TABLE {schema}.vault_audit
    DROP CONSTRAINT vault_audit_pkey,
    ADD CONSTRAINT vault_audit_pkey PRIMARY KEY USING INDEX vault_audit_tenant_key;

-- The user's reads (newest first; by memory key) lead with the tenant, under new names, then
-- take the old ones.
CREATE INDEX IF NOT EXISTS vault_audit_tenant_at_idx
    ON {schema}.vault_audit (tenant, at DESC, id DESC);
CREATE INDEX IF NOT EXISTS vault_audit_tenant_key_idx
    ON {schema}.vault_audit (tenant, memory_key, at DESC) WHERE memory_key IS NOT NULL;
DROP INDEX IF EXISTS {schema}.vault_audit_user_at_idx;
DROP INDEX IF EXISTS {schema}.vault_audit_user_key_idx;
ALTER INDEX {schema}.vault_audit_tenant_at_idx RENAME TO vault_audit_user_at_idx;
ALTER INDEX {schema}.vault_audit_tenant_key_idx RENAME TO vault_audit_user_key_idx;
