"""A user's namespace search reads the user's vectors from the namespace index (issue 28,
store_vectors/0004): its results must be those of an exact scan, in the same order with the
same scores, on near ties and vectors of any scale, with another user's nearer memories
interleaved and the nearest of the user's own expired. Sync and async, plus the plan: the
user's vectors from an index-only scan of that index, none read from the heap."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import psycopg
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp, SearchOp

from langmem_vault.store import AsyncVaultStore, SearchRanking, VaultStore
from tests.support.embeddings import TrigramEmbeddings, index_config
from tests.support.vacuum import all_visible

DIMS = 64
INDEX = "store_vectors_namespace_idx"
USER = ("memories", "u1")
NEAR = 200  # near ties: cosines 0.8 + n * 5e-7
SPREAD = 80  # the rest of the user's memories, cosines spread from -0.5 to 0.6
K = 10


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


class _Fixed(Embeddings):
    """A vector per text (queries included), set by the test."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[t].tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vectors[text].tolist()


def _world() -> tuple[dict[str, np.ndarray], list[PutOp]]:
    """The query "weather" and, for user u1, memories at chosen cosines from it, scaled by
    factors from 1e-3 to 1e6; user u2 holds
    nearer ones, which u1's search must not see. Texts share no word with the query."""
    rng = np.random.default_rng(11)
    query = _unit(rng.standard_normal(DIMS))
    vectors = {"weather": query}

    def at(cos: float) -> np.ndarray:
        other = rng.standard_normal(DIMS)
        other = _unit(other - (other @ query) * query)
        return cos * query + np.sqrt(1 - cos * cos) * other

    wanted = [0.8 + n * 5e-7 for n in range(NEAR)] + list(np.linspace(-0.5, 0.6, SPREAD))
    ops = []
    for n, cos in enumerate(wanted):
        text = f"fact {n}"
        vectors[text] = at(cos) * [1e-3, 1.0, 7.0, 1e6][n % 4]
        ops.append(PutOp(USER, f"k{n:03d}", {"text": text}))
        if n % 10 == 0:  # interleaved with another user's nearer memories
            vectors[f"other {n}"] = at(0.95)
            ops.append(PutOp(("memories", "u2"), f"o{n:03d}", {"text": f"other {n}"}))
    return vectors, ops


def _exact_top(conn: psycopg.Connection[Any], schema: str, query: np.ndarray) -> list[Any]:
    """The user's k nearest unexpired memories by the exact cosine, as pgvector computes it
    from the stored float4 vectors."""
    q = str([float(x) for x in query.astype(np.float32)])
    rows = conn.execute(
        f"SELECT i.key, 1 - (v.embedding <=> %s::vector) AS cos FROM {schema}.store_vectors AS v"
        f" JOIN {schema}.store_items AS i USING (tenant, prefix, key)"
        " WHERE v.tenant = 'u1' AND (i.expires_at IS NULL OR i.expires_at > now())"
        " ORDER BY cos DESC LIMIT %s",
        [q, K + 1],
    ).fetchall()
    assert len({cos for _, cos in rows}) == K + 1  # no tie to break either way
    return rows[:K]


def _expire(conn: psycopg.Connection[Any], schema: str, key: str) -> None:
    conn.execute(
        f"UPDATE {schema}.store_items SET expires_at = now() - interval '1 minute' WHERE key = %s",
        [key],
    )


def _plans_of(notices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p["Plan"] for p in notices if "kw AS" in p["Query Text"]]


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("Plans", []) for n in _nodes(child))]


_AUTO_EXPLAIN = (
    "LOAD 'auto_explain'",
    "SET auto_explain.log_min_duration = 0",
    "SET auto_explain.log_analyze = on",
    "SET auto_explain.log_format = json",
    "SET auto_explain.log_level = notice",
)


def _keep(notices: list[dict[str, Any]]) -> Any:
    def keep(diag: psycopg.errors.Diagnostic) -> None:
        message = diag.message_primary or ""
        if "plan:" in message:
            notices.append(json.loads(message[message.index("{") :]))

    return keep


def _check_plan(plan: dict[str, Any]) -> None:
    vectors = [n for n in _nodes(plan) if n.get("Relation Name", "").startswith("store_vectors")]
    # ranked, and counted for the verdict, from the namespace index
    read = [n for n in vectors if n["Node Type"] == "Index Only Scan" and n["Actual Rows"]]
    assert {n["Index Name"] for n in read} == {INDEX}
    assert [n["Actual Rows"] for n in read] in ([NEAR + SPREAD], [NEAR + SPREAD] * 2)
    read_again = [n for n in vectors if n["Node Type"] != "Index Only Scan" and n["Actual Rows"]]
    assert read_again == [], read_again


@pytest.mark.parametrize("is_async", [False, True])
async def test_the_namespace_search_ranks_as_an_exact_scan_on_near_ties(
    pg_uri: str, schema: str, is_async: bool
) -> None:
    vectors, ops = _world()
    index = {"dims": DIMS, "embed": _Fixed(vectors), "fields": ["text"]}
    expired = f"k{NEAR - 1:03d}"  # the nearest of all: its item no longer matches
    notices: list[dict[str, Any]] = []
    if is_async:
        async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as aconn:
            astore = AsyncVaultStore(aconn, schema=schema, index=index)  # type: ignore[arg-type]
            await astore.setup()
            await astore.abatch(ops)
            with psycopg.connect(pg_uri, autocommit=True) as conn:
                _expire(conn, schema, expired)
                conn.execute(f"VACUUM ANALYZE {schema}.store_vectors")
            aconn.add_notice_handler(_keep(notices))
            for setting in _AUTO_EXPLAIN:
                await aconn.execute(setting)
            hits = await astore.asearch(USER, query="weather", limit=K)
    else:
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            store = VaultStore(conn, schema=schema, index=index)  # type: ignore[arg-type]
            store.setup()
            store.batch(ops)
            _expire(conn, schema, expired)
            conn.execute(f"VACUUM ANALYZE {schema}.store_vectors")
            conn.add_notice_handler(_keep(notices))
            for setting in _AUTO_EXPLAIN:
                conn.execute(setting)
            hits = store.search(USER, query="weather", limit=K)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        expected = _exact_top(conn, schema, vectors["weather"])
    assert [(h.key, h.score) for h in hits] == expected
    [plan] = _plans_of(notices)
    _check_plan(plan)


# A namespace's verdict (scored exactly, or through the HNSW index) when the statistics do not
# know its size: its vectors counted first, from the namespace index the exact branch reads;
# its items only when it has more vectors than the bound (bench/RESULTS.md, issue 28 session 12).
BOUND = 10
SIZES = {  # namespace: (items, of which indexed, fields each indexed item has), verdict
    "a": ((8, 8, 1), True),  # few vectors
    "b": ((12, 4, 1), True),  # more items than the bound, few of them with a vector
    "c": ((8, 8, 2), True),  # more vectors than the bound, few items
    "d": ((12, 12, 1), False),
}


def _sized_ops() -> list[PutOp]:
    ops = []
    for ns, ((items, indexed, fields), _) in SIZES.items():
        for n in range(items):
            value = {"text": f"{ns} note {n} on tea", "note": f"{ns} aside {n}"}
            index: list[str] | bool = ["text", "note"][:fields] if n < indexed else False
            ops.append(PutOp((ns,), f"{ns}{n}", value, index=index))
    return ops


def _count_reads(plan: dict[str, Any]) -> list[tuple[str, str]]:
    """The scans the verdict's count ran: (node type, index or table)."""
    [small] = [n for n in _nodes(plan) if n.get("Subplan Name") == "CTE small"]
    return [
        (n["Node Type"], n.get("Index Name") or n["Relation Name"])
        for n in _nodes(small)
        if "Relation Name" in n and n.get("Actual Loops")
    ]


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_namespace_is_counted_by_its_vectors_first(
    pg_uri: str, schema: str, is_async: bool
) -> None:
    index = index_config(TrigramEmbeddings(), fields=["text", "note"])
    ranking = SearchRanking(exact_scan_rows=BOUND)
    notices: list[dict[str, Any]] = []
    searches = [SearchOp((ns,), query="tea note", limit=5) for ns in SIZES]
    if is_async:
        async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as aconn:
            astore = AsyncVaultStore(aconn, schema=schema, index=index, ranking=ranking)  # type: ignore[arg-type]
            await astore.setup()
            await astore.abatch(_sized_ops())
            with psycopg.connect(pg_uri, autocommit=True) as conn:
                all_visible(conn, f"{schema}.store_vectors")
            aconn.add_notice_handler(_keep(notices))
            for setting in _AUTO_EXPLAIN:
                await aconn.execute(setting)
            found = [await astore.abatch([op]) for op in searches]
            verdicts = {ns: astore._stats.scopes.get(("namespace", ns, "null")) for ns in SIZES}
    else:
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            store = VaultStore(conn, schema=schema, index=index, ranking=ranking)  # type: ignore[arg-type]
            store.setup()
            store.batch(_sized_ops())
            all_visible(conn, f"{schema}.store_vectors")
            conn.add_notice_handler(_keep(notices))
            for setting in _AUTO_EXPLAIN:
                conn.execute(setting)
            found = [store.batch([op]) for op in searches]
            verdicts = {ns: store._stats.scopes.get(("namespace", ns, "null")) for ns in SIZES}
    assert verdicts == {ns: small for ns, (_, small) in SIZES.items()}
    assert all(len(hits) == 5 for [hits] in found)
    reads = [_count_reads(plan) for plan in _plans_of(notices)]
    vectors_only = [("Index Only Scan", INDEX), ("Index Only Scan", "store_vectors_long_keys_idx")]
    # a and b: known small from the vectors alone, read from the index the search reads next
    assert reads[0] == reads[1] == vectors_only
    # c and d: more vectors than the bound (the count stops there), so their items are counted
    for scans in reads[2:]:
        assert scans[0] == ("Index Only Scan", INDEX)
        # the key's range, from an index that holds it (store_items_rank_idx is as narrow as
        # store_items_prefix_created_idx on a small table: the planner takes either)
        [(node, name)] = scans[1:]
        assert node == "Index Only Scan"
        assert name in ("store_items_prefix_created_idx", "store_items_rank_idx")
