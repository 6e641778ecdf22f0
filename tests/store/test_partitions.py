"""``setup(partitions=N)`` (issue 28): the items and vectors hash-partitioned by tenant, and
every path still working on them: search across users, expansion, TTL, pages, export, erase
(sync and async); a store partitioned with rows in it keeps them; a second setup keeps the
partitions, and asking for another count is refused."""

from __future__ import annotations

import psycopg
import pytest
from langgraph.store.base import PutOp

from langmem_vault.privacy import aerase_user, aexport_user, erase_user, export_user
from langmem_vault.store import AsyncVaultStore, PageOp, VaultStore
from langmem_vault.store._entities import EntityLink, ExpandOp, LinkOp
from tests.support.embeddings import TrigramEmbeddings

INDEX = {"dims": 64, "fields": ["text"]}


def _layout(uri: str, schema: str) -> dict[str, int]:
    """Each partitioned table of the schema and how many partitions it has."""
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            "SELECT c.relname, count(h.inhrelid) FROM pg_class AS c "
            "JOIN pg_inherits AS h ON h.inhparent = c.oid "
            "WHERE c.relkind = 'p' AND c.relnamespace = %s::regnamespace GROUP BY 1",
            (schema,),
        ).fetchall()
    return dict(rows)


def _facts(user: str) -> list[PutOp]:
    ns = ("memories", user, "semantic")
    return [PutOp(ns, f"k{n}", {"text": f"{user} grows tomatoes {n}"}) for n in range(5)]


def test_a_filled_store_is_partitioned_in_place(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index={**INDEX, "embed": TrigramEmbeddings()}
    ) as store:
        store.setup()
        for user in ("u1", "u2", "u3"):
            store.batch(_facts(user))
        store.batch(
            [LinkOp(("memories", "u1", "semantic"), "k1", (EntityLink("Priya", "person"),))]
        )
        store.setup(partitions=4)
        assert _layout(pg_uri, schema) == {"store_items": 4, "store_vectors": 4}
        store.setup(partitions=4)  # idempotent
        store.setup()  # 0: leaves them as they are
        assert _layout(pg_uri, schema) == {"store_items": 4, "store_vectors": 4}
        with pytest.raises(ValueError, match="already in 4 partitions"):
            store.setup(partitions=8)
        with pytest.raises(ValueError, match="partitions must be an int"):
            store.setup(partitions=-1)

        # the rows moved, with their vectors and links
        hits = store.search(("memories", "u2"), query="tomatoes 3", limit=1)
        assert [(h.namespace[1], h.key) for h in hits] == [("u2", "k3")]
        assert len(store.search(("memories",), query="tomatoes", limit=50)) == 15  # all users
        (found,) = store.batch([ExpandOp((("memories", "u1", "semantic"),), terms=("priya",))])
        assert [e.item.key for e in found] == ["k1"]
        # a delete cascades to the vectors in their partition
        store.delete(("memories", "u2", "semantic"), "k3")
        hits = store.search(("memories", "u2"), query="tomatoes 3", limit=5)
        assert "k3" not in {h.key for h in hits}
        with psycopg.connect(pg_uri) as conn:
            (left,) = conn.execute(  # type: ignore[misc]
                f"SELECT count(*) FROM {schema}.store_vectors WHERE key = 'k3'"
            ).fetchone()
        assert left == 2


def test_export_and_erase_on_partitions(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(
        pg_uri,
        schema=schema,
        index={**INDEX, "embed": TrigramEmbeddings()},
    ) as store:
        store.setup(partitions=3)
        for user in ("ana", "bo"):
            store.batch(_facts(user))
        store.put(("langmem_vault", "usage", "memories", "ana", "semantic"), "k0", {"n": 1})
        doc = export_user(store, "ana")
        assert sorted(r["key"] for r in doc["memories"]) == [f"k{n}" for n in range(5)]
        (page,) = store.batch([PageOp((("memories", "ana", "semantic"),), limit=3)])
        assert len(page.items) == 3 and page.next is not None
        erase_user(store, "ana")
        assert store.search(("memories", "ana")) == []
        with psycopg.connect(pg_uri) as conn:
            left = conn.execute(
                f"SELECT tenant, count(*) FROM {schema}.store_items GROUP BY 1 ORDER BY 1"
            ).fetchall()
        assert left == [("bo", 5)]  # the other user only
        assert len(store.search(("memories", "bo", "semantic"), limit=10)) == 5


async def test_async_store_on_partitions(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=schema, index={**INDEX, "embed": TrigramEmbeddings()}
    ) as store:
        await store.setup(partitions=2)
        await store.abatch(_facts("u1") + _facts("u2"))
        hits = await store.asearch(("memories", "u1"), query="tomatoes 2", limit=1)
        assert [h.key for h in hits] == ["k2"]
        assert (await store.aget(("memories", "u2", "semantic"), "k4")) is not None
        doc = await aexport_user(store, "u2")
        assert len(doc["memories"]) == 5
        await aerase_user(store, "u2")
        assert await store.asearch(("memories", "u2")) == []
        assert len(await store.asearch(("memories",), query="tomatoes", limit=20)) == 5
    assert _layout(pg_uri, schema) == {"store_items": 2, "store_vectors": 2}
