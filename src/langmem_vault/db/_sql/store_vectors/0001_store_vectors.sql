-- One embedding per indexed field of an item (a[*] paths give one per element); search takes the
-- best field, as InMemoryStore does. {dims} comes from the store's IndexConfig.
CREATE TABLE IF NOT EXISTS {schema}.store_vectors (
    prefix     text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    field      text NOT NULL,
    embedding  vector({dims}) NOT NULL,
    PRIMARY KEY (prefix, key, field)
);
-- Its foreign key to the item (deleting the item deletes its vectors) is added by 0003, on
-- (tenant, prefix, key): store_items is keyed by the tenant first since store/0006. Databases
-- made before that got it here, on (prefix, key); store/0006 drops that one.

CREATE INDEX IF NOT EXISTS store_vectors_embedding_idx
    ON {schema}.store_vectors USING hnsw (embedding vector_cosine_ops);
