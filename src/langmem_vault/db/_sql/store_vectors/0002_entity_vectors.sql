-- The embedding of each entity's name (store/_entities.py), for near-name matches. A user has
-- at most a few thousand entities, so expansion scores them exactly (no HNSW index): an
-- index over every user's entities would be walked past other users' rows.
CREATE TABLE IF NOT EXISTS {schema}.entity_vectors (
    entity_id  bigint PRIMARY KEY,
    embedding  vector({dims}) NOT NULL
);
-- Its foreign key to the entity is added by 0003, on (tenant, entity_id) (see 0001).
