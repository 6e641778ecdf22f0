"""A small namespace's search keeps only its nearest vectors (2k, by a bounded sort:
store/_vector_sql.NEAREST_SHARE) before it looks their items up. When too many of those items
have expired to give k candidates, it must read the whole sorted list again: its candidates,
and so its page, are those of an exact scan of every vector. Sync and async; the plan shows
which way each search went."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest
from langgraph.store.base import PutOp

from langmem_vault.store import AsyncVaultStore, SearchRanking, VaultStore
from langmem_vault.store._ranking import DEFAULT_CANDIDATES, DEFAULT_TEXT_WEIGHT
from langmem_vault.store._vector_sql import NEAREST_SHARE
from tests.store.test_namespace_ranking import _AUTO_EXPLAIN, _Fixed, _keep, _nodes, _plans_of

DIMS = 32
USER = ("memories", "u1")
K = DEFAULT_CANDIDATES  # a page of 10 asks each retriever for 50 candidates
KEPT = NEAREST_SHARE * K
ITEMS = KEPT + 60  # cosines 0.9 - n * 1e-4: item n is the n-th nearest
BOOSTED = KEPT + 20  # holds the query's word: the best score once it is a candidate
WORDY = 40  # far items holding the word too, so it is common (no keyword lookup)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _world() -> tuple[dict[str, np.ndarray], list[PutOp]]:
    rng = np.random.default_rng(5)
    query = _unit(rng.standard_normal(DIMS))
    vectors = {"weather": query}

    def at(cos: float) -> np.ndarray:
        other = rng.standard_normal(DIMS)
        other = _unit(other - (other @ query) * query)
        return cos * query + np.sqrt(1 - cos * cos) * other

    ops = []
    for n in range(ITEMS + WORDY):
        far = n >= ITEMS
        text = f"fact {n}" + (" weather" if far or n == BOOSTED else "")
        vectors[text] = at(-0.5 + n * 1e-4 if far else 0.9 - n * 1e-4)
        ops.append(PutOp(USER, f"k{n:03d}", {"text": text}))
    return vectors, ops


def _expire(conn: psycopg.Connection[Any], schema: str, keys: list[str]) -> None:
    conn.execute(
        f"UPDATE {schema}.store_items SET expires_at = now() - interval '1 minute'"
        " WHERE key = ANY(%s)",
        [keys],
    )
    conn.execute(f"VACUUM ANALYZE {schema}.store_items, {schema}.store_vectors")


def _cosines(conn: psycopg.Connection[Any], schema: str, query: np.ndarray) -> dict[str, float]:
    q = str([float(x) for x in query.astype(np.float32)])
    rows = conn.execute(
        f"SELECT key, 1 - (embedding <=> %s::vector) FROM {schema}.store_vectors", [q]
    ).fetchall()
    return dict(rows)


def _vector_rows_read(plan: dict[str, Any]) -> list[int]:
    return [
        n["Actual Rows"]
        for n in _nodes(plan)
        if n.get("Index Name") == "store_vectors_namespace_idx" and n.get("Actual Loops")
    ]


# the nearest 80 expired: 20 of the kept give fewer than K, and the exact candidates reach
# BOOSTED; or the nearest one alone
@pytest.mark.parametrize("expired", [BOOSTED - K + 10, 1])
@pytest.mark.parametrize("is_async", [False, True])
async def test_the_nearest_cut_falls_back_to_every_vector(
    pg_uri: str, schema: str, is_async: bool, expired: int
) -> None:
    vectors, ops = _world()
    index = {"dims": DIMS, "embed": _Fixed(vectors), "fields": ["text"]}
    gone = [f"k{n:03d}" for n in range(expired)]  # the nearest
    ranking = SearchRanking(common_rows=1)  # "weather" is common: vectors must find BOOSTED
    notices: list[dict[str, Any]] = []
    if is_async:
        async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as aconn:
            astore = AsyncVaultStore(aconn, schema=schema, index=index, ranking=ranking)  # type: ignore[arg-type]
            await astore.setup()
            await astore.abatch(ops)
            with psycopg.connect(pg_uri, autocommit=True) as conn:
                _expire(conn, schema, gone)
            aconn.add_notice_handler(_keep(notices))
            for setting in _AUTO_EXPLAIN:
                await aconn.execute(setting)
            hits = await astore.asearch(USER, query="weather", limit=10)
    else:
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            store = VaultStore(conn, schema=schema, index=index, ranking=ranking)  # type: ignore[arg-type]
            store.setup()
            store.batch(ops)
            _expire(conn, schema, gone)
            conn.add_notice_handler(_keep(notices))
            for setting in _AUTO_EXPLAIN:
                conn.execute(setting)
            hits = store.search(USER, query="weather", limit=10)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        cos = _cosines(conn, schema, vectors["weather"])
    # An exact scan's candidates are the K nearest unexpired items, BOOSTED among them when
    # few enough of the nearest expired: its word lifts it to the top of the page.
    candidates = [f"k{n:03d}" for n in range(expired, ITEMS)][:K]
    boosted = f"k{BOOSTED:03d}"
    assert (boosted in candidates) == (expired > KEPT - K)
    scores = {key: cos[key] for key in candidates}
    if boosted in scores:
        c = cos[boosted]
        scores[boosted] = c + (1 - c) * DEFAULT_TEXT_WEIGHT * 1.0
    expected = sorted(scores.items(), key=lambda kv: -kv[1])[:10]
    assert [(h.key, h.score) for h in hits] == expected
    [plan] = _plans_of(notices)
    # the user's vectors: once (the nearest kept), and again only when the cut fell short
    every = ITEMS + WORDY
    assert _vector_rows_read(plan) == ([every, every] if expired > KEPT - K else [every])
