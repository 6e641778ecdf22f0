"""The HNSW settings a search needs (``hnsw.ef_search``, ``hnsw.iterative_scan``) hold inside the
search's own transaction, sent as ``SET LOCAL`` (the form Citus carries to its workers,
docs/citus.md), and end with it: the pooled connection goes back with its defaults.

A probe sent on the search's connection right after the search statement, in the same
pipeline (so in the same transaction), reads the settings the search ran under; after the
batch, the store's only pooled connection is asked for them again."""

from __future__ import annotations

import pytest
from langgraph.store.base import SearchOp

from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._ranking import MAX_EF_SEARCH, SearchRanking
from tests.support.embeddings import TrigramEmbeddings
from tests.support.probes import aprobed, probed

NS = ("memories", "u1", "semantic")
PROBE = (
    "SELECT current_setting('hnsw.ef_search') AS ef,"
    " current_setting('hnsw.iterative_scan') AS scan, now() AS at"
)
# on the pooled connection after the batch: each setting as the session started with it
AFTER = (
    "SELECT name, setting = reset_val AS reset FROM pg_settings"
    " WHERE name IN ('hnsw.ef_search', 'hnsw.iterative_scan')"
)
OPS = {
    "plain": SearchOp(NS, query="tea in the garden", limit=5),
    "filtered": SearchOp(NS, query="tea in the garden", filter={"kind": "a"}, limit=30),
}


def _search(text: str) -> str | None:
    """A statement that may walk the HNSW index (ordered by distance, not exact: "+ 0")."""
    return "search" if "ORDER BY v.embedding <=>" in text else None


def _expected(op: SearchOp) -> dict[str, str]:
    ef = min(SearchRanking().candidate_count(op.offset + op.limit), MAX_EF_SEARCH)
    return {"ef": str(ef), "scan": "relaxed_order"}


INDEX = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}


@pytest.mark.parametrize("name", list(OPS))
def test_settings_hold_in_the_search_and_end_with_it(pg_uri: str, schema: str, name: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=INDEX, pool_size=1) as store:
        store.setup()
        for n in range(40):
            store.put(NS, f"k{n}", {"text": f"tea in the garden {n}", "kind": "ab"[n % 2]})
        with probed(_search, PROBE) as probes:
            found = store.batch([OPS[name]])[0]
        assert found, "the search found nothing"
        assert probes, "no search statement was sent"
        for _, probe in probes:
            row = probe.fetchone()
            assert {"ef": row[0], "scan": row[1]} == _expected(OPS[name])
        with store._db.conn.connection() as conn:  # the pool's one connection
            assert dict(conn.execute(AFTER).fetchall()) == {
                "hnsw.ef_search": True,
                "hnsw.iterative_scan": True,
            }


@pytest.mark.parametrize("name", list(OPS))
async def test_async_settings_hold_in_the_search_and_end_with_it(
    pg_uri: str, schema: str, name: str
) -> None:
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=schema, index=INDEX, pool_size=1
    ) as store:
        await store.setup()
        for n in range(40):
            await store.aput(NS, f"k{n}", {"text": f"tea in the garden {n}", "kind": "ab"[n % 2]})
        async with aprobed(_search, PROBE) as probes:
            found = (await store.abatch([OPS[name]]))[0]
        assert found and probes
        for _, probe in probes:
            row = await probe.fetchone()
            assert {"ef": row[0], "scan": row[1]} == _expected(OPS[name])
        async with store._db.conn.connection() as conn:
            rows = await (await conn.execute(AFTER)).fetchall()
            assert dict(rows) == {"hnsw.ef_search": True, "hnsw.iterative_scan": True}
