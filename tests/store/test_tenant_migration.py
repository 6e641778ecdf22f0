"""The tenant column (issue 28): an existing database, written by the schema before it, migrates
in place; every row gets its tenant, and reads, searches, entity walks and erases still work.
The Python rule (TenantRule) and the SQL one (the schema's tenant_of) agree."""

from __future__ import annotations

import psycopg
from langgraph.store.base import SearchOp

from langmem_vault._tenants import SHARED_TENANT, TenantRule, encode_label
from langmem_vault.db._migrations import load_migrations, render
from langmem_vault.store import VaultStore
from langmem_vault.store._entities import ExpandOp
from tests.support.embeddings import TrigramEmbeddings

DIMS = 64
#: the versions each track stood at before the tenant column
BEFORE = {"store": 5, "store_vectors": 2}
# store_vectors' foreign keys as the migrations before store_vectors/0003 made them
OLD_FOREIGN_KEYS = """
ALTER TABLE {s}.store_vectors ADD FOREIGN KEY (prefix, key)
    REFERENCES {s}.store_items (prefix, key) ON DELETE CASCADE;
ALTER TABLE {s}.entity_vectors ADD FOREIGN KEY (entity_id)
    REFERENCES {s}.entities (id) ON DELETE CASCADE;
"""

USERS = ["u1", "ana.g@x.io", "50%.off"]
# What the store held before: each user's facts, their usage records, a shared namespace.
OLD_ITEMS = [
    *(
        (("memories", encode_label(u), "semantic"), f"f{n}", f"{u} likes tea number {n}")
        for u in USERS
        for n in range(3)
    ),
    *(
        (("langmem_vault", "usage", "memories", encode_label(u), "semantic"), "f0", "usage")
        for u in USERS
    ),
    (("langmem_vault", "watermarks", "extract"), "thread-1", "watermark"),
    (("memories",), "global", "global instruction"),
]


def _old_database(uri: str, schema: str, embeddings: TrigramEmbeddings) -> None:
    """The schema as the store made it before store/0006, holding OLD_ITEMS, their vectors,
    and an entity (with alias, mention, relation and name vector) of the first user."""
    with psycopg.connect(uri, autocommit=False) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(
            f"CREATE TABLE {schema}.vault_migrations (track text NOT NULL, version integer "
            "NOT NULL, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), "
            "PRIMARY KEY (track, version))"
        )
        for track, upto in BEFORE.items():
            for m in load_migrations(track):
                if m.version <= upto:
                    conn.execute(render(m, schema, {"dims": DIMS}))  # type: ignore[arg-type]
                    conn.execute(
                        f"INSERT INTO {schema}.vault_migrations VALUES (%s, %s, %s)",
                        (track, m.version, m.name),
                    )
        conn.execute(OLD_FOREIGN_KEYS.format(s=schema))  # type: ignore[arg-type]
        for ns, key, text in OLD_ITEMS:
            prefix = ".".join(ns)
            conn.execute(
                f"INSERT INTO {schema}.store_items (prefix, key, namespace, value, search_tsv,"
                " indexed) VALUES (%s, %s, %s, %s, to_tsvector('english', %s), true)",
                (prefix, key, list(ns), psycopg.types.json.Jsonb({"text": text}), text),
            )
            conn.execute(
                f"INSERT INTO {schema}.store_vectors VALUES (%s, %s, 'text', %s::vector)",
                (prefix, key, str(embeddings.embed_query(text))),
            )
        u1 = "memories.u1.semantic"
        (eid,) = conn.execute(
            f"INSERT INTO {schema}.entities (scope, norm, name, kind) "
            "VALUES (%s, 'priya', 'Priya', 'person') RETURNING id",
            (u1,),
        ).fetchone()  # type: ignore[misc]
        conn.execute(f"INSERT INTO {schema}.entity_mentions VALUES (%s, %s, 'f0')", (eid, u1))
        conn.execute(
            f"INSERT INTO {schema}.entity_aliases VALUES (%s, 'my sister', %s, %s, 'f1')",
            (u1, eid, u1),
        )
        conn.execute(
            f"INSERT INTO {schema}.entity_relations (subject_id, predicate, object_id, prefix,"
            " key) VALUES (%s, 'knows', %s, %s, 'f2')",
            (eid, eid, u1),
        )
        conn.execute(
            f"INSERT INTO {schema}.entity_vectors VALUES (%s, %s::vector)",
            (eid, str(embeddings.embed_query("priya"))),
        )
        conn.commit()


def _tenants(uri: str, schema: str, table: str) -> list[str | None]:
    with psycopg.connect(uri) as conn:
        return [r[0] for r in conn.execute(f"SELECT tenant FROM {schema}.{table}").fetchall()]


def test_an_old_database_migrates_in_place(pg_uri: str, schema: str) -> None:
    embeddings = TrigramEmbeddings()
    _old_database(pg_uri, schema, embeddings)
    index = {"dims": DIMS, "embed": embeddings, "fields": ["text"]}
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:
        store.setup()
        rule = TenantRule()
        with psycopg.connect(pg_uri) as conn:
            rows = conn.execute(f"SELECT namespace, tenant FROM {schema}.store_items").fetchall()
            pkey = conn.execute(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = "
                "'store_items_pkey' AND connamespace = %s::regnamespace",
                (schema,),
            ).fetchone()
        assert len(rows) == len(OLD_ITEMS)
        # every row has the tenant the store's rule gives its namespace
        assert {tuple(ns): t for ns, t in rows} == {
            ns: rule.tenant_of(ns) for ns, _, _ in OLD_ITEMS
        }
        assert {t for _, t in rows} == {*USERS, SHARED_TENANT}
        assert pkey == ("PRIMARY KEY (tenant, prefix, key)",)
        for table in (
            "store_vectors",
            "entities",
            "entity_mentions",
            "entity_aliases",
            "entity_relations",
            "entity_vectors",
        ):
            found = _tenants(pg_uri, schema, table)
            assert found and None not in found, table
        assert set(_tenants(pg_uri, schema, "entity_aliases")) == {"u1"}

        # reads of the old rows
        ns = ("memories", encode_label("ana.g@x.io"), "semantic")
        got = store.get(ns, "f1")
        assert got is not None and got.value == {"text": "ana.g@x.io likes tea number 1"}
        hits = store.search(ns, query="likes tea number 2", limit=1)
        assert [(h.namespace, h.key) for h in hits] == [(ns, "f2")]
        everyone = store.search(("memories",), query="likes tea", limit=20)
        assert len(everyone) == 3 * len(USERS) + 1  # across users, and the shared item
        (expanded,) = store.batch(
            [ExpandOp((("memories", "u1", "semantic"),), terms=("my sister",))]
        )
        assert {e.item.key for e in expanded} == {"f0"}
        # writes next to them, and an erase of one user (vectors and entities by cascade)
        store.put(ns, "f3", {"text": "new fact"})
        assert store.get(ns, "f3") is not None
        assert store.purge_prefixes([("memories", "u1")]) == 3
        assert store.search(("memories", "u1"), query="tea") == []
        assert _tenants(pg_uri, schema, "entities") == []
        (left,) = store.batch([SearchOp(("memories",), query="tea", limit=50)])
        assert len(left) == 2 * 3 + 1 + 1


def test_vectors_orphaned_between_the_two_tracks_do_not_block_the_second(
    pg_uri: str, schema: str
) -> None:
    # store/0006 drops the vectors' foreign keys; a store without an index runs only the
    # store's track, so items (and entities) deleted before the vectors' track runs leave
    # vectors of nothing, which would fail store_vectors/0003's new keys on every setup().
    embeddings = TrigramEmbeddings()
    _old_database(pg_uri, schema, embeddings)
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()  # no index: the store's track only
    with psycopg.connect(pg_uri) as conn:
        conn.execute(f"DELETE FROM {schema}.store_items WHERE key = 'f0'")
        conn.execute(f"DELETE FROM {schema}.entities")
    index = {"dims": DIMS, "embed": embeddings, "fields": ["text"]}
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:
        store.setup()
        left = len(OLD_ITEMS) - 2 * len(USERS)  # each user's fact f0 and usage record f0
        assert len(_tenants(pg_uri, schema, "store_vectors")) == left
        assert _tenants(pg_uri, schema, "entity_vectors") == []


NAMESPACES = [
    ("memories", "u1", "semantic"),
    ("memories", "ana%2Eg@x%2Eio"),
    ("memories", "50%25%2Eoff", "episodes", "deep"),
    ("memories",),
    ("langmem_vault", "usage", "memories", "u2", "semantic"),
    ("langmem_vault", "tails", "memories", "u3", "semantic"),
    ("langmem_vault", "usage", "other"),
    ("langmem_vault", "watermarks", "extract"),
    ("users", "u1"),
    ("privacy", "u4", "consent"),
    ("erased", "langmem_vault", "tails", "memories", "u5", "semantic"),
    ("erased", "memories"),
    ("langmem_vault", "accounting", "u6"),
]


def test_the_python_and_sql_rules_agree(pg_uri: str, schema: str) -> None:
    """The tenant a write stores (the schema's tenant_of, made by store/0006 from the rule)
    is the one reads route by (TenantRule in Python)."""
    rule = TenantRule()
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
    with psycopg.connect(pg_uri) as conn:
        for namespace in NAMESPACES:
            (found,) = conn.execute(
                f"SELECT {schema}.tenant_of(%s::text[])", (list(namespace),)
            ).fetchone()  # type: ignore[misc]
            assert found == rule.tenant_of(namespace), namespace
