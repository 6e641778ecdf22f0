"""One user's vectors read together (issue 28): users' items arrive interleaved, so the heap
holds a user's vectors one per page, and a namespace's exact search read every one of those
pages cold. ``store_vectors_namespace_idx`` (store_vectors/0004) carries the embedding in a
B-tree on the vectors' key, so the search reads them by an index-only scan of the user's own
leaf pages. Counted from the plans Postgres ran (auto_explain), not timed."""

from __future__ import annotations

import math
import random
import string
from typing import Any

import psycopg
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp

from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._vector_sql import namespace_key_bytes
from tests.store.test_search_cost import COMMON_QUERY, _explaining, _search_plan, _texts
from tests.support.embeddings import TrigramEmbeddings, index_config
from tests.support.vacuum import all_visible

USERS = 8
PER_USER = 120
INDEX = "store_vectors_namespace_idx"


def _interleaved() -> list[PutOp]:
    texts = _texts(USERS * PER_USER, seed=7)
    return [
        PutOp(("memories", f"u{n % USERS}", "semantic"), f"k{n:04d}", {"text": t})
        for n, t in enumerate(texts)
    ]


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("Plans", []) for n in _nodes(child))]


def _heap_pages(conn: psycopg.Connection[Any], schema: str, user: str) -> int:
    row = conn.execute(
        f"SELECT count(DISTINCT (ctid::text::point)[0]) FROM {schema}.store_vectors"
        " WHERE tenant = %s",
        [user],
    ).fetchone()
    assert row is not None
    return int(row[0])


def _index_and_partitions(conn: psycopg.Connection[Any], schema: str) -> set[str]:
    rows = conn.execute(
        "SELECT c.relname FROM pg_partition_tree(%s::regclass) AS t"
        " JOIN pg_class AS c ON c.oid = t.relid",
        [f"{schema}.{INDEX}"],
    ).fetchall()
    return {INDEX, *(name for (name,) in rows)}  # empty tree when not partitioned


@pytest.mark.parametrize("partitions", [0, 4])
def test_a_user_s_vectors_are_read_from_their_own_index_pages(
    pg_uri: str, schema: str, partitions: int
) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, index=index_config(TrigramEmbeddings()))  # type: ignore[arg-type]
        store.setup(partitions=partitions)
        store.batch(_interleaved())
        all_visible(conn, f"{schema}.store_vectors")  # what autovacuum does (0004 says when)
        store.analyze()
        user = "u3"
        scattered = _heap_pages(conn, schema, user)
        if not partitions:  # interleaved: the user's vectors on most of the table's pages
            assert scattered >= PER_USER // 4
        store.search(("memories", user), query=COMMON_QUERY, limit=10)
        plans = _explaining(conn)
        conn.execute("SET auto_explain.log_buffers = on")
        hits = store.search(("memories", user), query=COMMON_QUERY, limit=10)
        assert len(hits) == 10 and {h.namespace[1] for h in hits} == {user}
        scans = [
            n
            for n in _nodes(_search_plan(plans))
            if n.get("Relation Name", "").startswith("store_vectors")
            and n.get("Actual Loops", 0) > 0
            and n.get("Actual Rows", 0) > 0
        ]
        # The user's vectors come from one index-only scan of the new index, no heap page read,
        # and from a few leaf pages (about 20 vectors of 64 dimensions a page): fewer than the
        # heap pages they lie on.
        [scan] = [n for n in scans if n.get("Actual Rows") == PER_USER]
        assert scan["Node Type"] == "Index Only Scan"
        assert scan["Index Name"] in _index_and_partitions(conn, schema)
        assert scan["Heap Fetches"] == 0
        read = scan["Shared Hit Blocks"] + scan["Shared Read Blocks"]
        assert read <= PER_USER // 10 and read < scattered, (read, scattered)


def _before_0004(conn: psycopg.Connection[Any], schema: str) -> None:
    """The schema as store_vectors/0003 left it: no namespace index, default vacuum settings."""
    conn.execute(f"DROP INDEX {schema}.{INDEX}")
    for table in _vacuum_settings(conn, schema):
        conn.execute(f"ALTER TABLE {schema}.{table} RESET (autovacuum_vacuum_insert_scale_factor)")
    conn.execute(
        f"DELETE FROM {schema}.vault_migrations WHERE track = 'store_vectors' AND version = 4"
    )


def _vacuum_settings(conn: psycopg.Connection[Any], schema: str) -> dict[str, list[str] | None]:
    rows = conn.execute(
        "SELECT c.relname, c.reloptions FROM pg_class AS c"
        " WHERE c.relnamespace = %s::regnamespace AND c.relkind = 'r'"
        " AND c.relname LIKE 'store_vectors%%'",
        [schema],
    ).fetchall()
    return dict(rows)


@pytest.mark.parametrize("partitions", [0, 3])
def test_the_migration_adds_the_index_to_an_existing_store(
    pg_uri: str, schema: str, partitions: int
) -> None:
    # A store made before store_vectors/0004, plain or already partitioned, holding vectors:
    # setup() builds the index (on every partition) and sets each table's vacuum threshold,
    # and the namespace search then reads the user's vectors from it.
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, index=index_config(TrigramEmbeddings()))  # type: ignore[arg-type]
        store.setup(partitions=partitions)
        store.batch(_interleaved()[: USERS * 30])
        _before_0004(conn, schema)
        assert set(_vacuum_settings(conn, schema).values()) == {None}
        store.setup(partitions=partitions)
        settings = _vacuum_settings(conn, schema)
        assert len(settings) == max(partitions, 1)
        assert set(map(tuple, settings.values())) == {  # type: ignore[arg-type]
            ("autovacuum_vacuum_insert_scale_factor=0.02",)
        }
        [(valid, parts)] = conn.execute(
            "SELECT i.indisvalid, (SELECT count(*) FROM pg_inherits WHERE inhparent = i.indexrelid)"
            " FROM pg_index AS i WHERE i.indexrelid = %s::regclass",
            [f"{schema}.{INDEX}"],
        ).fetchall()
        assert valid and parts == partitions
        all_visible(conn, f"{schema}.store_vectors")
        plans = _explaining(conn)
        hits = store.search(("memories", "u2"), query=COMMON_QUERY, limit=5)
        assert len(hits) == 5 and {h.namespace[1] for h in hits} == {"u2"}
        # ranked, and counted for the namespace's verdict, from the index
        scans = [
            n
            for n in _nodes(_search_plan(plans))
            if n.get("Actual Rows") == 30 and n.get("Relation Name", "").startswith("store_vectors")
        ]
        assert scans and {n["Node Type"] for n in scans} == {"Index Only Scan"}
        assert {n["Index Name"] for n in scans} <= _index_and_partitions(conn, schema)


class _Seeded(Embeddings):
    """Unit vectors of ``dims`` dimensions seeded by the text."""

    def __init__(self, dims: int) -> None:
        self.dims = dims

    def _one(self, text: str) -> list[float]:
        rng = random.Random(text)
        v = [rng.gauss(0, 1) for _ in range(self.dims)]
        norm = math.sqrt(sum(x * x for x in v))
        return [x / norm for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def test_keys_too_long_for_an_entry_beside_the_vector_are_searched_from_their_own_index(
    pg_uri: str, schema: str
) -> None:
    # Keys and namespaces may hold up to 1 kB each: beside a 384-dimension vector that is more
    # than a B-tree entry holds (2,704 bytes). Such rows go to the index of long keys; the put
    # succeeds, and the namespace search finds them beside the others, scored exactly.
    dims = 384
    room = namespace_key_bytes(dims)
    rng = random.Random(5)

    def noise(n: int) -> str:  # what pglz cannot shrink (an index entry is compressed first)
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))

    ns = ("memories", "u1", noise(200))
    used = len("u1") + len(".".join(ns)) + len("text")
    keys = ["short", noise(room - used), noise(room - used + 1), noise(1024)]  # fit, fit, not
    index = {"dims": dims, "embed": _Seeded(dims), "fields": ["text"]}
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, index=index)  # type: ignore[arg-type]
        store.setup()
        texts = ["tea in the garden", "cake by the train", "music in the rain", "a dog at home"]
        store.batch([PutOp(ns, k, {"text": t}) for k, t in zip(keys, texts, strict=True)])
        store.put(("memories", "u2"), "other", {"text": "tea in the garden"})
        conn.execute(f"VACUUM {schema}.store_vectors")
        placed = dict(
            conn.execute(
                f"SELECT length(key), octet_length(tenant) + octet_length(prefix)"
                f" + octet_length(key) + octet_length(field) <= {room}"
                f" FROM {schema}.store_vectors WHERE tenant = 'u1'"
            ).fetchall()
        )
        assert placed == {5: True, len(keys[1]): True, len(keys[2]): False, 1024: False}
        plans = _explaining(conn)
        for query, key in (("tea garden", keys[0]), ("music rain", keys[2])):
            hits = store.search(("memories", "u1"), query=query, limit=10)
            assert sorted(h.key for h in hits) == sorted(keys)
            assert hits[0].key == key  # the keyword match, a long key's row in the second
        searches = [p["Plan"] for p in plans if "kw AS" in p["Query Text"]]
        indexes = {n.get("Index Name") for plan in searches for n in _nodes(plan)}
        assert {INDEX, "store_vectors_long_keys_idx"} <= indexes


def test_vectors_too_large_for_an_entry_have_no_namespace_index(pg_uri: str, schema: str) -> None:
    dims = 700  # 2,808 bytes: no room for a key beside it
    assert namespace_key_bytes(dims) == 0
    index = {"dims": dims, "embed": _Seeded(dims), "fields": ["text"]}
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, index=index)  # type: ignore[arg-type]
        store.setup()
        store.batch([PutOp(("memories", "u1"), f"k{n}", {"text": f"fact {n}"}) for n in range(5)])
        assert len(store.search(("memories", "u1"), query="fact", limit=10)) == 5
        found = conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = %s AND indexname IN (%s, %s)",
            [schema, INDEX, "store_vectors_long_keys_idx"],
        ).fetchone()
        assert found == (0,)


def _fragmentation(conn: psycopg.Connection[Any], schema: str) -> list[float]:
    """pgstatindex's leaf_fragmentation of the namespace index (of each partition's): the share
    of leaf pages whose next leaf lies earlier in the file."""
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
    rows = conn.execute(
        "SELECT (pgstatindex(i.indexrelid::regclass)).leaf_fragmentation FROM pg_index AS i"
        " JOIN pg_class AS c ON c.oid = i.indexrelid WHERE c.relkind = 'i'"
        " AND (i.indexrelid = %s::regclass OR i.indexrelid IN (SELECT relid FROM"
        " pg_partition_tree(%s::regclass)))",
        [f"{schema}.{INDEX}"] * 2,
    ).fetchall()
    return [float(f) for (f,) in rows]


@pytest.mark.parametrize(("partitions", "is_async"), [(0, False), (3, False), (0, True)])
async def test_reorder_vectors_puts_each_user_s_leaves_back_in_order(
    pg_uri: str, schema: str, partitions: int, is_async: bool
) -> None:
    # Users' memories arriving interleaved split the index's leaves, the new halves at the end
    # of the file: out of order. reorder_vectors() rebuilds it online, in order, every
    # partition's, and what an interrupted rebuild left behind is dropped first.
    index = index_config(TrigramEmbeddings())
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        if is_async:
            async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index) as a:  # type: ignore[arg-type]
                await a.setup(partitions=partitions)
                await a.abatch(_interleaved())
                before = _fragmentation(conn, schema)
                assert await a.reorder_vectors()
        else:
            with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:  # type: ignore[arg-type]
                store.setup(partitions=partitions)
                store.batch(_interleaved())
                before = _fragmentation(conn, schema)
                # an interrupted rebuild's leftover: an invalid copy by REINDEX's naming
                conn.execute(
                    f"CREATE INDEX store_vectors_namespace_idx_ccnew"
                    f" ON {schema}.store_vectors_p0 (key)"
                    if partitions
                    else f"CREATE INDEX store_vectors_namespace_idx_ccnew"
                    f" ON {schema}.store_vectors (key)"
                )
                conn.execute(
                    "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
                    [f"{schema}.store_vectors_namespace_idx_ccnew"],
                )
                assert store.reorder_vectors()
                assert len(store.search(("memories", "u1"), query=COMMON_QUERY, limit=5)) == 5
                left = conn.execute(
                    "SELECT to_regclass(%s)", [f"{schema}.store_vectors_namespace_idx_ccnew"]
                ).fetchone()
                assert left == (None,)
        assert len(before) == max(partitions, 1) and max(before) > 0, before
        assert _fragmentation(conn, schema) == [0.0] * max(partitions, 1)
