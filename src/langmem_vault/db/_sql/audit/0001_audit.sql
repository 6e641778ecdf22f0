-- Audit log: who (component, actor) did what (action) to which memory of which user, when.
-- Append-only in normal use; rows leave only through erase (per user) or retention (purge).
-- `at` is the time of the action as the recorder saw it (a buffered event keeps the time it
-- happened, not the time it was flushed); `recorded_at` is when the row was written.
CREATE TABLE IF NOT EXISTS {schema}.vault_audit (
    id           bigserial PRIMARY KEY,
    at           timestamptz NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    user_id      text NOT NULL,
    action       text NOT NULL,
    component    text NOT NULL,
    actor        text,
    -- the namespace joined by '.', as the store keys it (labels cannot contain '.')
    namespace    text,
    memory_key   text,
    detail       jsonb NOT NULL DEFAULT '{}'
);

-- Every query names a user; most ask for the newest events first.
CREATE INDEX IF NOT EXISTS vault_audit_user_at_idx
    ON {schema}.vault_audit (user_id, at DESC, id DESC);
CREATE INDEX IF NOT EXISTS vault_audit_user_key_idx
    ON {schema}.vault_audit (user_id, memory_key, at DESC) WHERE memory_key IS NOT NULL;
-- Retention deletes by age across users.
CREATE INDEX IF NOT EXISTS vault_audit_at_idx ON {schema}.vault_audit (at);
