-- Connections (store/_entities.py): the people, places, organisations, pets and things a
-- namespace's items name, the items that mention them, the aliases they go by ("my sister")
-- and the relations between them. scope is the namespace (joined by '.') of the items that
-- named the entity: one user's facts, so every lookup stays inside one user.
--
-- Rows are written in the batch that writes their item (a LinkOp), and every row but the
-- entity's own hangs off that item by a foreign key: deleting the item deletes them. Names
-- are kept lower-cased with spaces folded (norm) beside the name as first written.
CREATE TABLE IF NOT EXISTS {schema}.entities (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope       text COLLATE "C" NOT NULL,
    norm        text NOT NULL,
    name        text NOT NULL,
    kind        text NOT NULL
        CHECK (kind IN ('person', 'place', 'organisation', 'pet', 'thing')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- the hot lookup by name within a user; erase deletes by scope through it too
    UNIQUE (scope, norm)
);

CREATE TABLE IF NOT EXISTS {schema}.entity_aliases (
    scope      text COLLATE "C" NOT NULL,
    alias      text NOT NULL,
    entity_id  bigint NOT NULL REFERENCES {schema}.entities (id) ON DELETE CASCADE,
    -- the item that said so ("My sister is Priya."): forgetting it forgets the alias
    prefix     text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    PRIMARY KEY (scope, alias, entity_id, prefix, key),
    FOREIGN KEY (prefix, key) REFERENCES {schema}.store_items (prefix, key) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS entity_aliases_item_idx ON {schema}.entity_aliases (prefix, key);
CREATE INDEX IF NOT EXISTS entity_aliases_entity_idx ON {schema}.entity_aliases (entity_id);

CREATE TABLE IF NOT EXISTS {schema}.entity_mentions (
    entity_id  bigint NOT NULL REFERENCES {schema}.entities (id) ON DELETE CASCADE,
    prefix     text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    -- by entity to its items (expansion)
    PRIMARY KEY (entity_id, prefix, key),
    FOREIGN KEY (prefix, key) REFERENCES {schema}.store_items (prefix, key) ON DELETE CASCADE
);
-- by item to its entities (a rewrite replaces them; the cascade of a delete)
CREATE INDEX IF NOT EXISTS entity_mentions_item_idx ON {schema}.entity_mentions (prefix, key);

CREATE TABLE IF NOT EXISTS {schema}.entity_relations (
    subject_id  bigint NOT NULL REFERENCES {schema}.entities (id) ON DELETE CASCADE,
    predicate   text NOT NULL,
    object_id   bigint NOT NULL REFERENCES {schema}.entities (id) ON DELETE CASCADE,
    valid_from  timestamptz,
    valid_to    timestamptz,
    -- the source item
    prefix      text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,
    PRIMARY KEY (subject_id, object_id, predicate, prefix, key),
    FOREIGN KEY (prefix, key) REFERENCES {schema}.store_items (prefix, key) ON DELETE CASCADE
);
-- relations by subject: the primary key; by object and by source item:
CREATE INDEX IF NOT EXISTS entity_relations_object_idx ON {schema}.entity_relations (object_id);
CREATE INDEX IF NOT EXISTS entity_relations_item_idx ON {schema}.entity_relations (prefix, key);
