"""Hybrid search's keyword candidates: which matches of the query's rare words it takes; and
the plain search (no filter, a scope too large to score exactly) runs a prepared generic plan
without changing a result."""

from __future__ import annotations

from typing import Any

import psycopg
from langgraph.store.base import PutOp, SearchOp

from langmem_vault.store import AsyncVaultStore, SearchRanking, VaultStore
from tests.support.embeddings import DIMS, TrigramEmbeddings, index_config

# Past psycopg's default prepare_threshold (5): the later searches run the prepared statement.
REPEATS = 8


def _flat(texts: list[str]) -> list[list[float]]:
    # Every document on one axis, every query (ends with "?") on another: all cosines are 0,
    # so the keyword coverage alone orders results, and the vector candidates are arbitrary.
    return [
        [0.0, 1.0] + [0.0] * (DIMS - 2) if t.endswith("?") else [1.0] + [0.0] * (DIMS - 1)
        for t in texts
    ]


# Six words no item holds: a query with them has eight rare lexemes.
LONG = "quokka narwhal axolotl pangolin okapi tapir"


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
        # More rare words than MAX_LEVEL_LEXEMES (6): ranked by ts_rank, as before the levels.
        [hit] = s.search(("d",), query=f"bakery or zeppelin {LONG}?", limit=1)
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
        await s.aput(("d",), "both", {"text": "a zeppelin above the bakery"})
        [hit] = await s.asearch(("d",), query=f"bakery or zeppelin {LONG}?", limit=1)
        assert hit.key == "both"


TEXTS = [
    f"note {i}: {w} and {v}"
    for i, (w, v) in enumerate(
        (w, v)
        for w in ("tea", "coffee", "juice", "water", "cocoa")
        for v in ("cake", "bread", "soup")
    )
]
QUERIES = ["green tea", "cake with coffee", "soup", "cocoa and bread", "water"]


def _pages(search: Any) -> list[list[tuple[str, float | None]]]:
    return [
        [(h.key, round(h.score, 9) if h.score is not None else None) for h in hits]
        for q in QUERIES
        for hits in (search(q, 4, 0), search(q, 4, 4), search(q, 20, 0))
    ]


def _plans(conn: psycopg.Connection[Any]) -> dict[str, tuple[int, int]]:
    rows = conn.execute(
        "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
    ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def test_a_plain_search_runs_its_generic_plan_with_the_same_results(
    pg_uri: str, schema: str
) -> None:
    emb = TrigramEmbeddings()
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        plain = VaultStore(conn, schema=schema, index=index_config(emb))  # type: ignore[arg-type]
        # The exact path (every vector scored, custom plans) is the reference.
        exact = VaultStore(
            conn,
            schema=schema,
            index=index_config(emb),  # type: ignore[arg-type]
            ranking=SearchRanking(exact_scan_rows=10**6),
        )
        plain.setup()
        plain.batch([PutOp(("n", f"u{i % 3}"), f"k{i}", {"text": t}) for i, t in enumerate(TEXTS)])
        plain.analyze()
        want = _pages(lambda q, n, o: exact.search(("n",), query=q, limit=n, offset=o))
        plain_scoped = VaultStore(
            conn,
            schema=schema,
            index=index_config(emb),  # type: ignore[arg-type]
            ranking=SearchRanking(exact_scan_rows=0),  # ("n",) is too large to score exactly
        )
        for _ in range(REPEATS):
            for prefix in (("n",), ()):
                got = _pages(
                    lambda q, n, o, p=prefix: plain_scoped.search(p, query=q, limit=n, offset=o)
                )
                assert got == want
        ranked = {s: p for s, p in _plans(conn).items() if "kw AS" in s}
        namespace = {s: p for s, p in ranked.items() if "small AS" in s}
        plain_path = {s: p for s, p in ranked.items() if s not in namespace}
        # One statement without the namespace clause (every page size here has the default
        # k), and one for the namespace, whichever its verdict (small for the exact store,
        # large for the other) and whether it counted it or was told (the verdict is a
        # parameter): a generic plan each per connection, made once. They ran on generic
        # plans only; left to itself, Postgres plans a prepared statement's first five runs
        # for their parameters (custom plans).
        assert len(plain_path) == 1 and len(namespace) == 1
        assert all(g > 0 and c == 0 for g, c in [*plain_path.values(), *namespace.values()])


async def test_a_plain_search_runs_its_generic_plan_async(pg_uri: str, schema: str) -> None:
    emb = TrigramEmbeddings()
    async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as conn:
        store = AsyncVaultStore(
            conn,
            schema=schema,
            index=index_config(emb),  # type: ignore[arg-type]
            ranking=SearchRanking(exact_scan_rows=0),
        )
        await store.setup()
        await store.abatch(
            [PutOp(("n", f"u{i % 3}"), f"k{i}", {"text": t}) for i, t in enumerate(TEXTS)]
        )
        first = [(h.key, h.score) for h in await store.asearch(("n",), query="tea", limit=5)]
        for _ in range(REPEATS):
            again = [(h.key, h.score) for h in await store.asearch(("n",), query="tea", limit=5)]
            assert again == first
        cur = await conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%kw AS%'"
        )
        # One statement: the first search's, which counted ("n",), and the later ones', told.
        found = await cur.fetchall()
        assert len(found) == 1 and all(generic > 0 and custom == 0 for generic, custom in found)


def test_a_batch_runs_only_its_plain_searches_on_the_generic_plan(pg_uri: str, schema: str) -> None:
    # A batch's searches go out in one pipeline, one transaction: the plain search's setting
    # must not reach the filtered search after it.
    emb = TrigramEmbeddings()
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(
            conn,
            schema=schema,
            index=index_config(emb),  # type: ignore[arg-type]
            ranking=SearchRanking(exact_scan_rows=0),
        )
        store.setup()
        store.batch(
            [PutOp(("n",), f"k{i}", {"text": t, "topic": "tea"}) for i, t in enumerate(TEXTS)]
        )
        ops = [
            SearchOp(("n",), query="tea", limit=3),
            SearchOp(("n",), query="tea", filter={"topic": "tea"}, limit=3),
        ]
        for _ in range(REPEATS):
            plain, filtered = store.batch(ops)
            assert plain and filtered
        ranked = {s: p for s, p in _plans(conn).items() if "kw AS" in s}
        # The filtered statements (the HNSW walk, and the exact rerun when a walk runs out):
        # Postgres's own choice, custom plans first.
        filtered = [p for s, p in ranked.items() if "@>" in s]
        assert filtered and all(generic == 0 and custom > 0 for generic, custom in filtered)
