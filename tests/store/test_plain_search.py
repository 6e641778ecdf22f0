"""Hybrid search's keyword candidates: which matches of the query's rare words it takes."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import PutOp

from langmem_vault.store import AsyncVaultStore, SearchRanking, VaultStore
from tests.support.embeddings import DIMS


def _flat(texts: list[str]) -> list[list[float]]:
    # Every document on one axis, every query (ends with "?") on another: all cosines are 0,
    # so the keyword coverage alone orders results, and the vector candidates are arbitrary.
    return [
        [0.0, 1.0] + [0.0] * (DIMS - 2) if t.endswith("?") else [1.0] + [0.0] * (DIMS - 1)
        for t in texts
    ]


def _keyword_ops() -> list[PutOp]:
    ops = [
        PutOp(("d",), f"bakery{i:03d}", {"text": f"the bakery on street {i}"}) for i in range(200)
    ]
    ops.insert(120, PutOp(("d",), "zeppelin", {"text": "a zeppelin over the town"}))
    return ops


def test_keyword_candidates_take_the_rarer_word_first(pg_uri: str, schema: str) -> None:
    # 200 items hold "bakery", one holds "zeppelin"; two candidates per retriever. Every match
    # ties on ts_rank (one word, once); the rarer word's match lifts the score more, so it must
    # be a candidate whatever the table's order.
    ranking = SearchRanking(candidates=2, common_rows=10_000, exact_scan_rows=0)
    index: Any = {"dims": DIMS, "embed": _flat, "fields": ["text"]}
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=index, ranking=ranking) as s:
        s.setup()
        s.batch(_keyword_ops())
        s.analyze()
        [hit] = s.search(("d",), query="bakery or zeppelin?", limit=1)
        assert hit.key == "zeppelin"
        # Holding both words beats holding the rarer one.
        s.put(("d",), "both", {"text": "a zeppelin above the bakery"})
        [hit] = s.search(("d",), query="bakery or zeppelin?", limit=1)
        assert hit.key == "both"


async def test_keyword_candidates_async(pg_uri: str, schema: str) -> None:
    ranking = SearchRanking(candidates=2, common_rows=10_000, exact_scan_rows=0)
    index: Any = {"dims": DIMS, "embed": _flat, "fields": ["text"]}
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=schema, index=index, ranking=ranking
    ) as s:
        await s.setup()
        await s.abatch(_keyword_ops())
        await s.analyze()
        [hit] = await s.asearch(("d",), query="bakery or zeppelin?", limit=1)
        assert hit.key == "zeppelin"
