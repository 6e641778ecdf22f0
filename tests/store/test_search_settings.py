"""The HNSW settings a search needs (``hnsw.ef_search``, ``hnsw.iterative_scan``) hold inside the
search's own transaction, sent as ``SET LOCAL`` (the form Citus carries to its workers,
docs/citus.md), and end with it: the pooled connection goes back with its defaults.

A probe sent on the search's connection right after the search statement, in the same
pipeline (so in the same transaction), reads the settings the search ran under; after the
batch, the store's only pooled connection is asked for them again."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
import pytest
from langgraph.store.base import SearchOp

from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._ranking import MAX_EF_SEARCH, SearchRanking
from tests.support.embeddings import TrigramEmbeddings

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


def _is_search(query: Any) -> bool:
    """A statement that may walk the HNSW index (ordered by distance, not exact: "+ 0")."""
    return isinstance(query, str) and "ORDER BY v.embedding <=>" in query


@contextmanager
def _probed() -> Iterator[list[Any]]:
    """After each search statement a sync cursor sends, the probe on the same connection."""
    probes: list[Any] = []
    original = psycopg.Cursor.execute

    def execute(self: psycopg.Cursor[Any], query: Any, params: Any = None, **kw: Any) -> Any:
        out = original(self, query, params, **kw)
        if _is_search(query):
            probes.append(self.connection.execute(PROBE))
        return out

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield probes
    finally:
        psycopg.Cursor.execute = original  # type: ignore[method-assign]


@asynccontextmanager
async def _aprobed() -> AsyncIterator[list[Any]]:
    """:func:`_probed` for async cursors."""
    probes: list[Any] = []
    original = psycopg.AsyncCursor.execute

    async def execute(
        self: psycopg.AsyncCursor[Any], query: Any, params: Any = None, **kw: Any
    ) -> Any:
        out = await original(self, query, params, **kw)
        if _is_search(query):
            probes.append(await self.connection.execute(PROBE))
        return out

    psycopg.AsyncCursor.execute = execute  # type: ignore[method-assign]
    try:
        yield probes
    finally:
        psycopg.AsyncCursor.execute = original  # type: ignore[method-assign]


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
        with _probed() as probes:
            found = store.batch([OPS[name]])[0]
        assert found, "the search found nothing"
        assert probes, "no search statement was sent"
        for probe in probes:
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
        async with _aprobed() as probes:
            found = (await store.abatch([OPS[name]]))[0]
        assert found and probes
        for probe in probes:
            row = await probe.fetchone()
            assert {"ef": row[0], "scan": row[1]} == _expected(OPS[name])
        async with store._db.conn.connection() as conn:
            rows = await (await conn.execute(AFTER)).fetchall()
            assert dict(rows) == {"hnsw.ef_search": True, "hnsw.iterative_scan": True}
