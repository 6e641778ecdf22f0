-- One embedding per indexed field of an item (a[*] paths give one per element); search takes the
-- best field, as InMemoryStore does. {dims} comes from the store's IndexConfig.
CREATE TABLE IF NOT EXISTS {schema}.store_vectors (
    prefix     text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    field      text NOT NULL,
    embedding  vector({dims}) NOT NULL,
    PRIMARY KEY (prefix, key, field),
    FOREIGN KEY (prefix, key) REFERENCES {schema}.store_items (prefix, key) ON DELETE CASCADE
);

CREATE INDEX IF NOT EXISTS store_vectors_embedding_idx
    ON {schema}.store_vectors USING hnsw (embedding vector_cosine_ops);
