"""VaultStore behaviour beyond InMemoryStore's: TTL, bad input, hybrid ranking, connections."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from langgraph.store.base import PutOp, SearchOp
from psycopg_pool import ConnectionPool

from langmem_vault.db._migrations import load_migrations
from langmem_vault.store import AsyncVaultStore, InvalidValueError, SearchRanking, VaultStore
from tests.support.embeddings import DIMS, TrigramEmbeddings, index_config


@pytest.fixture
def store(pg_uri: str, schema: str, embeddings: TrigramEmbeddings) -> Iterator[VaultStore]:
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(embeddings), ttl={"default_ttl": None}
    ) as s:
        s.setup()
        yield s


def count_rows(pg_uri: str, schema: str, table: str = "store_items") -> int:
    with psycopg.connect(pg_uri) as conn:
        row = conn.execute(f"SELECT count(*) FROM {schema}.{table}").fetchone()
        assert row is not None
        return int(row[0])


# --- TTL ---------------------------------------------------------------------------------


def test_ttl_expires_refreshes_and_sweeps(store: VaultStore, pg_uri: str, schema: str) -> None:
    store.put(("t",), "short", {"text": "ephemeral"}, ttl=1.5 / 60)  # 1.5 seconds
    store.put(("t",), "keep", {"text": "durable"})
    assert store.get(("t",), "short") is not None
    time.sleep(1.0)
    assert store.get(("t",), "short") is not None  # refreshes: 1.5 s from now
    time.sleep(1.0)
    assert store.get(("t",), "short", refresh_ttl=False) is not None
    time.sleep(0.8)
    # Expired but not yet swept: never returned by get, search or list.
    assert store.get(("t",), "short") is None
    assert [i.key for i in store.search(("t",))] == ["keep"]
    assert [i.key for i in store.search(("t",), query="ephemeral")] == ["keep"]
    assert count_rows(pg_uri, schema) == 2
    assert store.sweep_ttl() == 1
    assert count_rows(pg_uri, schema) == 1


def test_fractional_default_ttl_is_kept(pg_uri: str, schema: str) -> None:
    # PostgresStore truncates 0.5 minutes to 0 and expires the item at once.
    with VaultStore.from_conn_string(pg_uri, schema=schema, ttl={"default_ttl": 0.5}) as s:
        s.setup()
        s.put(("t",), "k", {"v": 1})
        assert s.get(("t",), "k") is not None
        with psycopg.connect(pg_uri) as conn:
            row = conn.execute(
                f"SELECT extract(epoch FROM expires_at - now()) FROM {schema}.store_items"
            ).fetchone()
        assert row is not None and 25 < float(row[0]) <= 30


def test_ttl_sweeper_thread(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as s:
        s.setup()
        s.put(("t",), "k", {"v": 1}, ttl=0.2 / 60)
        s.start_ttl_sweeper(sweep_interval_minutes=0.3 / 60)
        time.sleep(1.0)
        assert count_rows(pg_uri, schema) == 0
        assert s.stop_ttl_sweeper(timeout=5)


async def test_async_ttl(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as s:
        await s.setup()
        await s.aput(("t",), "k", {"v": 1}, ttl=0.5 / 60)
        assert await s.aget(("t",), "k") is not None
        await asyncio.sleep(0.8)
        assert await s.aget(("t",), "k") is None
        assert await s.sweep_ttl() == 1


# --- Bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (PutOp(("a",), "k\x00", {"v": 1}), "NUL"),
        (PutOp(("a",), "k", {"text": "bad\x00text"}), "NUL"),
        (PutOp(("a",), "k", {"ok": {"bad\x00key": 1}}), "NUL"),
        (PutOp(("a",), "k", {"v": object()}), "not JSON-serialisable"),
        (PutOp(("a",), "k", {"v": float("nan")}), "not JSON-serialisable"),
        (PutOp(("a",), "k", {1: "int key"}), "keys must be strings"),
        (PutOp(("a",), "k", {"big": "x" * 2_000_000}), "over the limit"),
        (PutOp(("a",), "", {"v": 1}), "empty"),
        (PutOp(("a",), "k", {"v": 1}, ttl=-1), "ttl"),
        (PutOp(("a",), "k", ["not", "a", "dict"]), "must be a dict"),  # type: ignore[arg-type]
        (SearchOp(("a",), query="bad\x00query"), "NUL"),
        (SearchOp(("a",), filter={"n": {"$regex": "x"}}), "unsupported filter operator"),
        (SearchOp(("a",), filter={"n": {"$gt": [1]}}), "needs a number or a string"),
        (SearchOp(("a",), limit=-1), "limit"),
    ],
)
def test_bad_input_fails_the_whole_batch(
    store: VaultStore, pg_uri: str, schema: str, op: Any, message: str
) -> None:
    store.put(("a",), "before", {"text": "unchanged"})
    with pytest.raises(InvalidValueError, match=message):
        store.batch([PutOp(("a",), "good", {"text": "fine"}), PutOp(("a",), "before", None), op])
    assert store.get(("a",), "good") is None
    assert store.get(("a",), "before") is not None
    assert count_rows(pg_uri, schema) == 1


def test_wrong_embedding_dimension_writes_nothing(pg_uri: str, schema: str) -> None:
    def short(texts: list[str]) -> list[list[float]]:
        return [[0.1] * (DIMS - 1) for _ in texts]

    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index={"dims": DIMS, "embed": short, "fields": ["text"]}
    ) as s:
        s.setup()
        with pytest.raises(InvalidValueError, match=f"dims={DIMS}"):
            s.put(("a",), "k", {"text": "hello"})
        with pytest.raises(InvalidValueError, match=f"dims={DIMS}"):
            s.search(("a",), query="hello")
    assert count_rows(pg_uri, schema) == 0


def test_max_value_bytes_is_configurable(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema, max_value_bytes=100) as s:
        s.setup()
        s.put(("a",), "small", {"v": "x" * 50})
        with pytest.raises(InvalidValueError, match="limit of 100 bytes"):
            s.put(("a",), "big", {"v": "x" * 200})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"schema": "Bad-Name"}, "invalid schema name"),
        ({"index": {"dims": 0, "embed": TrigramEmbeddings()}}, "dims"),
        ({"index": {"dims": 3}}, "embed"),
        ({"index": {"dims": 3, "embed": TrigramEmbeddings(), "fields": "text"}}, "fields"),
        ({"ranking": None, "max_value_bytes": -5}, "max_value_bytes"),
    ],
)
def test_bad_configuration(pg_uri: str, kwargs: dict[str, Any], message: str) -> None:
    with (
        pytest.raises(ValueError, match=message),
        VaultStore.from_conn_string(pg_uri, **kwargs) as s,
    ):
        s.setup()


BAD_SETTINGS = [
    ({"max_value_bytes": 0}, "max_value_bytes must be an int >= 1, got 0"),
    ({"max_value_bytes": -5}, "max_value_bytes must be an int >= 1, got -5"),
    ({"max_value_bytes": 1.5}, "max_value_bytes must be an int >= 1, got 1.5"),
    ({"ttl": {"default_ttl": 0}}, r"ttl\['default_ttl'\] must be a number of minutes > 0"),
    ({"ttl": {"default_ttl": -1.0}}, r"ttl\['default_ttl'\] must be"),
    ({"ttl": {"default_ttl": "5"}}, r"ttl\['default_ttl'\] must be"),
    ({"ttl": {"sweep_interval_minutes": 0}}, r"ttl\['sweep_interval_minutes'\] must be"),
    ({"ttl": {"refresh_on_read": "yes"}}, r"ttl\['refresh_on_read'\] must be a bool"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_SETTINGS)
async def test_bad_settings_are_refused_at_construction(
    pg_uri: str, schema: str, kwargs: dict[str, Any], message: str
) -> None:
    # Refused by the constructor, before any put: not a default silently substituted, and not
    # a store whose every write fails later.
    with psycopg.connect(pg_uri) as conn, pytest.raises(InvalidValueError, match=message):
        VaultStore(conn, schema=schema, **kwargs)
    async with await psycopg.AsyncConnection.connect(pg_uri) as aconn:
        with pytest.raises(InvalidValueError, match=message):
            AsyncVaultStore(aconn, schema=schema, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"candidates": 0}, "candidates must be an int >= 1"),
        ({"common_rows": 0}, "common_rows must be an int >= 1"),
        ({"exact_scan_rows": -1}, "exact_scan_rows must be an int >= 0"),
        ({"text_weight": 1.5}, r"text_weight must be in \[0, 1\]"),
        ({"text_config": ""}, "text_config must be"),
    ],
)
def test_bad_ranking_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidValueError, match=message):
        SearchRanking(**kwargs)


def test_max_value_bytes_of_one_byte_is_kept(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema, max_value_bytes=2) as s:
        s.setup()
        s.put(("a",), "ok", {})
        with pytest.raises(InvalidValueError, match="limit of 2 bytes"):
            s.put(("a",), "big", {"v": 1})


def test_a_zero_sweep_interval_is_refused(store: VaultStore) -> None:
    with pytest.raises(InvalidValueError, match="sweep_interval_minutes must be > 0, got 0"):
        store.start_ttl_sweeper(0)


def test_changing_dims_on_an_existing_schema_is_refused(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(TrigramEmbeddings())
    ) as s:
        s.setup()
    other = {"dims": 8, "embed": TrigramEmbeddings(8), "fields": ["text"]}
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=other) as s:
        with pytest.raises(InvalidValueError, match=r"vector\(64\).*dims=8"):
            s.setup()


# --- Ranking -----------------------------------------------------------------------------


def test_keyword_match_lifts_the_cosine(store: VaultStore, embeddings: TrigramEmbeddings) -> None:
    store.put(("d",), "cat", {"text": "Priya adopted a cat named Miso"})
    store.put(("d",), "near", {"text": "Pryia adored the cats name"})  # similar letters
    results = store.search(("d",), query="Miso")
    assert results[0].key == "cat"
    q = embeddings.embed_query("Miso")
    cos = sum(
        a * b
        for a, b in zip(q, embeddings.embed_query("Priya adopted a cat named Miso"), strict=True)
    )
    # One query lexeme, matched: score = cos + (1 - cos) * 0.3 * 1.
    assert results[0].score == pytest.approx(cos + (1 - cos) * 0.3, abs=1e-5)


def test_text_weight_zero_is_pure_cosine(pg_uri: str, schema: str) -> None:
    emb = TrigramEmbeddings()
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(emb), ranking=SearchRanking(text_weight=0)
    ) as s:
        s.setup()
        s.put(("d",), "a", {"text": "green tea"})
        [hit] = s.search(("d",), query="green tea")
        assert hit.score == pytest.approx(1.0, abs=1e-5)
        s.put(("d",), "b", {"text": "tea"})
        hits = {h.key: h.score for h in s.search(("d",), query="green")}
        q = emb.embed_query("green")
        assert hits["b"] == pytest.approx(
            sum(x * y for x, y in zip(q, emb.embed_query("tea"), strict=True)), abs=1e-5
        )


def test_keyword_only_store_without_embeddings(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as s:
        s.setup()
        s.put(("d",), "a", {"text": "Deploying the billing service on Fridays", "n": 1})
        s.put(("d",), "b", {"text": "Billing invoices are sent monthly", "n": 2})
        s.put(("d",), "c", {"text": "Lunch at noon"})
        s.put(("d",), "u", {"text": "billing"}, index=False)
        hits = s.search(("d",), query="When do we deploy billing?")
        assert [h.key for h in hits[:2]] == ["a", "b"]
        assert hits[0].score == pytest.approx(1.0)  # "deploy" stems to match "Deploying"
        assert hits[1].score == pytest.approx(0.5)  # no statistics yet: equal weights
        assert (hits[2].key, hits[2].score) == ("c", 0.0)
        assert (hits[3].key, hits[3].score) == ("u", None)
        # Values' strings are indexed, not the JSON syntax: "text" is a key, not content.
        assert [h.key for h in s.search(("d",), query="text", limit=1)] == ["c"]
        assert s.search(("d",), query="text", limit=1)[0].score == 0.0


def test_boosts_reorder_without_changing_scores(pg_uri: str, schema: str) -> None:
    emb = TrigramEmbeddings()
    ranking = SearchRanking(boosts={"confidence": 1.0})
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(emb), ranking=ranking
    ) as s:
        s.setup()
        s.put(("d",), "exact", {"text": "hiking boots", "confidence": 0.0})
        s.put(("d",), "close", {"text": "hiking boot", "confidence": 1.0})
        hits = s.search(("d",), query="hiking boots")
        assert [h.key for h in hits] == ["close", "exact"]
        assert hits[1].score > hits[0].score


def test_reput_with_index_false_keeps_the_index_and_embeds_nothing(
    store: VaultStore, embeddings: TrigramEmbeddings, pg_uri: str, schema: str
) -> None:
    store.put(("d",), "a", {"text": "volcano", "hits": 0})
    calls = len(embeddings.calls)
    store.put(("d",), "a", {"text": "volcano", "hits": 1}, index=False)  # a counter update
    assert len(embeddings.calls) == calls
    assert count_rows(pg_uri, schema, "store_vectors") == 1
    [hit] = store.search(("d",), query="volcano")
    assert hit.value["hits"] == 1 and hit.score == pytest.approx(1.0)
    # A new item put with index=False is not indexed.
    store.put(("d",), "b", {"text": "volcano"}, index=False)
    assert store.search(("d",), query="volcano")[-1].score is None


def test_one_embedding_call_per_batch_and_cached_queries(
    store: VaultStore, embeddings: TrigramEmbeddings
) -> None:
    store.batch([PutOp(("d",), f"k{i}", {"text": f"note {i % 3}"}) for i in range(9)])
    assert embeddings.calls == [["note 0", "note 1", "note 2"]]  # distinct texts, one call
    calls: list[str] = []
    original = embeddings.embed_query

    def counting(text: str) -> list[float]:
        calls.append(text)
        return original(text)

    embeddings.embed_query = counting  # type: ignore[method-assign]
    for _ in range(3):
        store.search(("d",), query="note")
    assert calls == ["note"]


def test_filtered_vector_search_returns_a_full_page(store: VaultStore) -> None:
    # With a selective filter, HNSW alone would return few rows (pgvector #216).
    store.batch(
        [PutOp(("d",), f"k{i}", {"text": f"item number {i}", "shard": i % 50}) for i in range(500)]
    )
    hits = store.search(("d",), query="item number 7", filter={"shard": 7}, limit=10)
    assert len(hits) == 10
    assert all(h.value["shard"] == 7 for h in hits)
    assert hits[0].key == "k7"


# --- Connections ---------------------------------------------------------------------------


def test_caller_connection_used_as_is(pg_uri: str, schema: str) -> None:
    # Not autocommit, default tuple rows: langgraph's saver would raise TypeError (#1384).
    with psycopg.connect(pg_uri) as conn:
        store = VaultStore(conn, schema=schema)
        with conn.transaction():  # setup inside the caller's own transaction
            store.setup()
        store.put(("c",), "k", {"v": 1})
        conn.commit()
        assert store.get(("c",), "k").value == {"v": 1}  # type: ignore[union-attr]
        assert conn.row_factory is psycopg.rows.tuple_row
    with psycopg.connect(pg_uri) as other:
        row = other.execute(f"SELECT count(*) FROM {schema}.store_items").fetchone()
        assert row == (1,)


async def test_async_caller_connection(pg_uri: str, schema: str) -> None:
    async with await psycopg.AsyncConnection.connect(pg_uri) as conn:
        store = AsyncVaultStore(conn, schema=schema)
        await store.setup()
        await store.aput(("c",), "k", {"v": 1})
        await conn.commit()
        got = await store.aget(("c",), "k")
        assert got is not None and got.value == {"v": 1}


def test_pooled_operations_are_not_serialised(store: VaultStore, pg_uri: str, schema: str) -> None:
    store.put(("p",), "locked", {"v": 1})
    store.put(("p",), "free", {"v": 1})
    with psycopg.connect(pg_uri) as blocker:
        blocker.execute(f"SELECT 1 FROM {schema}.store_items WHERE key = 'locked' FOR UPDATE")
        writer = threading.Thread(target=store.put, args=(("p",), "locked", {"v": 2}))
        writer.start()
        time.sleep(0.3)
        assert writer.is_alive()  # waiting on the row lock
        # Another operation on the same store proceeds meanwhile.
        assert store.get(("p",), "free") is not None
        assert writer.is_alive()
        blocker.rollback()
    writer.join(5)
    assert store.get(("p",), "locked").value == {"v": 2}  # type: ignore[union-attr]


@pytest.mark.parametrize(("threshold", "prepared"), [(None, False), (5, True)])
def test_prepare_threshold_none_for_pgbouncer(
    pg_uri: str, schema: str, threshold: int | None, prepared: bool
) -> None:
    # PgBouncer in transaction mode breaks on server-side prepared statements: with None the
    # store's (only) connection must hold none after every statement ran past the threshold.
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, pool_size=1, prepare_threshold=threshold
    ) as s:
        s.setup()
        for i in range(10):  # past psycopg's default threshold of 5
            s.put(("p",), f"k{i}", {"v": i})
            assert s.get(("p",), f"k{i}") is not None
        assert isinstance(s.conn, ConnectionPool)
        with s.conn.connection() as conn:
            row = conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()
    assert row is not None
    assert (row[0] > 0) is prepared


def _setup_in_process(uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(
        uri, schema=schema, index=index_config(TrigramEmbeddings())
    ) as s:
        s.setup()


def test_concurrent_setup_from_several_processes(pg_uri: str, schema: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_setup_in_process, args=(pg_uri, schema)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with psycopg.connect(pg_uri) as conn:
        rows = conn.execute(
            f"SELECT track, version FROM {schema}.vault_migrations ORDER BY track, version"
        ).fetchall()
    tracks = ("store", "store_vectors")
    expected = [(m.track, m.version) for t in tracks for m in load_migrations(t)]
    assert rows == expected  # each applied once, none missing
    assert ("store", 3) in rows


def test_schemas_isolate_apps(pg_uri: str, schema: str) -> None:
    with (
        VaultStore.from_conn_string(pg_uri, schema=schema) as a,
        VaultStore.from_conn_string(pg_uri, schema=schema + "_b") as b,
    ):
        a.setup()
        b.setup()
        a.put(("x",), "k", {"app": "a"})
        assert b.get(("x",), "k") is None
        assert b.list_namespaces() == []
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema}_b CASCADE")


def test_async_store_sync_bridge_from_worker_thread(pg_uri: str, schema: str) -> None:
    async def main() -> Any:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as s:
            await s.setup()
            await s.aput(("x",), "k", {"v": 1})
            # A sync node of a graph run with ainvoke calls store.get from a worker thread.
            got = await asyncio.to_thread(s.get, ("x",), "k")
            with pytest.raises(RuntimeError, match="deadlock"):
                s.get(("x",), "k")
            return got

    got = asyncio.run(main())
    assert got is not None and got.value == {"v": 1}


def test_keyword_coverage_weighs_words_by_rarity(pg_uri: str, schema: str) -> None:
    ranking = SearchRanking(common_rows=20)
    with VaultStore.from_conn_string(pg_uri, schema=schema, ranking=ranking) as s:
        s.setup()
        s.batch([PutOp(("d",), f"k{i}", {"text": f"weekly meeting notes {i}"}) for i in range(60)])
        s.put(("d",), "rare", {"text": "meeting about the zeppelin"})
        s.analyze()  # what autovacuum does in production
        hits = s.search(("d",), query="meeting zeppelin", limit=3)
        assert hits[0].key == "rare" and hits[0].score == pytest.approx(1.0)
        # "meeting" is in every row: it still counts, but for almost nothing (IDF weighting).
        assert all(0 < h.score < 0.01 for h in hits[1:])
        # Keyword-only stores fall back to common words when nothing rarer is asked for.
        hits = s.search(("d",), query="weekly meeting", limit=5)
        assert len(hits) == 5 and all(h.score == pytest.approx(1.0) for h in hits)


def test_pages_larger_than_the_hnsw_beam_are_complete(store: VaultStore) -> None:
    store.batch([PutOp(("d",), f"k{i}", {"text": f"entry {i}"}) for i in range(1100)])
    store.put(("d",), "plain", {"text": "entry"}, index=False)
    hits = store.search(("d",), query="entry 5", limit=1101)
    assert len(hits) == 1101
    assert [h.key for h in hits if h.score is None] == ["plain"]  # last, after every scored one
    assert hits[-1].key == "plain"


def test_items_with_many_vectors_still_fill_the_page(pg_uri: str, schema: str) -> None:
    # One vector per tag: the nearest vector rows can all belong to a few items.
    emb = TrigramEmbeddings()
    index = {"dims": DIMS, "embed": emb, "fields": ["tags[*]"]}
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as s:
        s.setup()
        s.batch(
            [
                PutOp(("x",), f"k{i}", {"tags": [f"topic{i} variant{j}" for j in range(60)]})
                for i in range(10)
            ]
        )
        hits = s.search(("x",), query="topic3 variant", limit=10)
        assert len(hits) == 10 and all(h.score is not None for h in hits)
        assert hits[0].key == "k3"


def test_mixed_int_and_float_ttls_in_one_batch(store: VaultStore) -> None:
    store.batch([PutOp(("t",), "a", {"v": 1}, ttl=5), PutOp(("t",), "b", {"v": 2}, ttl=0.5)])
    assert store.get(("t",), "a") is not None and store.get(("t",), "b") is not None


async def test_async_sweeper_survives_a_failed_sweep(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as s:
        await s.setup()
        calls = 0
        real = s.sweep_ttl

        async def flaky() -> int:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise RuntimeError("transient database error")
            return await real()

        s.sweep_ttl = flaky  # type: ignore[method-assign]
        await s.aput(("t",), "k", {"v": 1}, ttl=0.1 / 60)
        await s.start_ttl_sweeper(sweep_interval_minutes=0.2 / 60)
        await asyncio.sleep(1.0)
        assert calls >= 2  # kept sweeping after the failure
        assert await s.stop_ttl_sweeper(timeout=5)
    assert count_rows(pg_uri, schema) == 0


@pytest.mark.parametrize("exact_scan_rows", [2000, 0])  # a small namespace: exact; else HNSW
def test_namespace_search_ranks_its_live_items_by_cosine(
    pg_uri: str, schema: str, exact_scan_rows: int
) -> None:
    emb = TrigramEmbeddings()
    ranking = SearchRanking(text_weight=0.0, exact_scan_rows=exact_scan_rows)
    texts = [f"note {i} about {w}" for i, w in enumerate(["tea", "teas", "team", "steam"] * 15)]
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(emb), ranking=ranking
    ) as s:
        s.setup()
        # Namespaces interleaved, and a sub-namespace that the prefix ("a",) covers.
        ns = [("a",), ("b",), ("a", "x"), ("ab",)]
        s.batch([PutOp(ns[i % 4], f"k{i}", {"text": t}) for i, t in enumerate(texts)])
        # The nearest items of ("a",) expire: the page must still be full, without them.
        s.batch([PutOp(("a",), f"gone{i}", {"text": "tea time"}, ttl=0.002) for i in range(8)])
        time.sleep(0.3)
        hits = s.search(("a",), query="tea time", limit=10)
    query = emb.embed_query("tea time")
    live = [(f"k{i}", t) for i, t in enumerate(texts) if i % 4 in (0, 2)]
    cosine = {
        k: sum(a * b for a, b in zip(query, emb.embed_query(t), strict=True)) for k, t in live
    }
    best = sorted(cosine.values(), reverse=True)[:10]
    assert all(h.key in cosine for h in hits)  # live items of ("a",) and ("a", "x") only
    assert [h.score for h in hits] == pytest.approx(best, abs=1e-5)  # the exact top 10


def _expiry(pg_uri: str, schema: str, key: str) -> Any:
    with psycopg.connect(pg_uri) as conn:
        row = conn.execute(
            f"SELECT expires_at FROM {schema}.store_items WHERE key = %s", (key,)
        ).fetchone()
        return row[0] if row else None


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_search_refreshes_the_ttl_of_its_hits(
    pg_uri: str, schema: str, is_async: bool
) -> None:
    # A batch of reads runs without a transaction block: its TTL refresh is one statement.
    index = index_config(TrigramEmbeddings())
    ops = [PutOp(("t",), f"k{i}", {"text": f"tea {i}"}, ttl=10.0) for i in range(3)]
    ops.append(PutOp(("t",), "forever", {"text": "tea forever"}))
    if is_async:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index) as a:
            await a.setup()
            await a.abatch(ops)
            before = {k: _expiry(pg_uri, schema, k) for k in ("k0", "k1", "k2")}
            await a.asearch(("t",), query="tea", refresh_ttl=False)
            assert {k: _expiry(pg_uri, schema, k) for k in before} == before
            hits = await a.asearch(("t",), query="tea")
    else:
        with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as s:
            s.setup()
            s.batch(ops)
            before = {k: _expiry(pg_uri, schema, k) for k in ("k0", "k1", "k2")}
            s.search(("t",), query="tea", refresh_ttl=False)
            assert {k: _expiry(pg_uri, schema, k) for k in before} == before
            hits = s.search(("t",), query="tea")
    assert len(hits) == 4
    assert all(_expiry(pg_uri, schema, k) > before[k] for k in before)
    assert _expiry(pg_uri, schema, "forever") is None


# The planner, left alone, sorts a table this small instead of using its HNSW index; these
# options make the filtered search walk the index as it does at 100k. hnsw.max_scan_tuples=20
# makes the walk run out long before it finds the filter's items (the fill step's case).
WALK_INDEX = "-c enable_seqscan=off -c enable_sort=off"


@pytest.mark.parametrize("options", [WALK_INDEX, WALK_INDEX + " -c hnsw.max_scan_tuples=20", ""])
@pytest.mark.parametrize("is_async", [False, True])
async def test_a_large_filtered_scope_gives_the_exact_top_page(
    pg_uri: str, schema: str, is_async: bool, options: str
) -> None:
    # A filter matching more than exact_scan_rows items is searched through the HNSW index,
    # each candidate checked against the filter, until the page is full. The filter's items
    # here are the farthest from the query: all 285 nearer vectors fail it. The page must
    # still be full, hold only the filter's items, and be their exact top 10.
    emb = TrigramEmbeddings()
    ranking = SearchRanking(text_weight=0.0, exact_scan_rows=5)
    near = {f"n{i}": f"tea time {i}" for i in range(285)}
    far = {f"x{i}": f"quartz {i} jukebox {'time'[: i % 5]}" for i in range(15)}
    puts = [
        PutOp(("u", f"s{i % 3}"), k, {"text": t, "kind": "n"})
        for i, (k, t) in enumerate(near.items())
    ]
    puts += [
        PutOp(("u", f"s{i % 3}"), k, {"text": t, "kind": "x"})
        for i, (k, t) in enumerate(far.items())
    ]
    uri = f"{pg_uri}&options={quote(options)}" if options else pg_uri
    query, flt = "tea time", {"kind": "x"}
    if is_async:
        async with AsyncVaultStore.from_conn_string(
            uri, schema=schema, index=index_config(emb), ranking=ranking
        ) as astore:
            await astore.setup()
            await astore.abatch(puts)
            pages = [await astore.asearch(("u",), query=query, filter=flt) for _ in range(2)]
    else:
        with VaultStore.from_conn_string(
            uri, schema=schema, index=index_config(emb), ranking=ranking
        ) as store:
            store.setup()
            store.batch(puts)
            # The first search counts the scope (large), the second knows it (each walk runs
            # out here: 15 items match, k is 50; the next test has a walk that does not).
            pages = [store.search(("u",), query=query, filter=flt) for _ in range(2)]
    for page in pages:
        assert {h.key for h in page} <= set(far) and len(page) == 10
        assert [h.score for h in page] == pytest.approx(_exact_top(emb, query, far), abs=1e-5)


@pytest.mark.parametrize("options", ["", WALK_INDEX])
@pytest.mark.parametrize("is_async", [False, True])
async def test_a_filtered_walk_that_finds_its_page_equals_the_exact_answer(
    pg_uri: str, schema: str, is_async: bool, options: str
) -> None:
    # 100 of 400 items match the filter, more than any k here: the walk finds its candidates
    # and is not redone; each page (offsets included) must equal an exact store's.
    emb = TrigramEmbeddings()
    puts = [
        PutOp(("u", f"s{i % 3}"), f"k{i}", {"text": f"tea time {i} {'quartz' * (i % 7)}",
                                             "kind": "x" if i % 4 == 0 else "n"})
        for i in range(400)
    ]  # fmt: skip
    uri = f"{pg_uri}&options={quote(options)}" if options else pg_uri
    walking = SearchRanking(exact_scan_rows=5)
    pages = [(10, 0), (10, 15), (5, 40)]
    ops = [
        SearchOp(("u",), query="tea time 12", filter={"kind": "x"}, limit=n, offset=o)
        for n, o in pages
    ]
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(emb), ranking=SearchRanking(exact_scan_rows=10**6)
    ) as exact:
        exact.setup()
        exact.batch(puts)
        want = [[(h.key, h.score) for h in page] for page in exact.batch(ops)]
    if is_async:
        async with AsyncVaultStore.from_conn_string(
            uri, schema=schema, index=index_config(emb), ranking=walking
        ) as astore:
            got = [await astore.abatch(ops) for _ in range(2)]
            verdict = astore._stats.scopes.get(("items", "u", '{"kind": "x"}'))
    else:
        with VaultStore.from_conn_string(
            uri, schema=schema, index=index_config(emb), ranking=walking
        ) as store:
            got = [store.batch(ops) for _ in range(2)]
            verdict = store._stats.scopes.get(("items", "u", '{"kind": "x"}'))
    assert verdict is False  # counted large, and no walk ran out
    for found in got:
        for page, expected in zip(found, want, strict=True):
            assert [h.key for h in page] == [k for k, _ in expected]
            assert [h.score for h in page] == pytest.approx([s for _, s in expected], abs=1e-5)


def test_keyword_statistics_reach_postgres_intact(pg_uri: str) -> None:
    from langmem_vault.store._keyword_sql import LEXEME_FREQ
    from langmem_vault.store._lexemes import LexemeStats

    freqs = {'say "hi"': 0.5, "c:\\dir": 0.25, "a,b {c}": 1e-7, "naïve": 0.125, "hi": 0.0625}
    # Not listed: a lexeme that is part of listed ones (or of the frequencies), and no lexeme.
    absent = ["say", "ve", "0.5", "i", ""]
    params = LexemeStats.of(freqs, rows=10).params()
    with psycopg.connect(pg_uri) as conn:
        rows = conn.execute(
            f"SELECT l, {LEXEME_FREQ} FROM unnest(%(lexemes)s::text[]) AS q(l)",
            params | {"lexemes": [*freqs, *absent]},
        ).fetchall()
    assert dict(rows) == freqs | dict.fromkeys(absent)


def _exact_top(emb: TrigramEmbeddings, query: str, texts: dict[str, str]) -> list[float]:
    """The 10 best cosines of ``query`` against ``texts`` (key -> text)."""
    q = emb.embed_query(query)
    cosine = [
        sum(a * b for a, b in zip(q, emb.embed_query(t), strict=True)) for t in texts.values()
    ]
    return sorted(cosine, reverse=True)[:10]


@pytest.mark.parametrize("options", ["", WALK_INDEX])  # the planner's choice; the HNSW walk
@pytest.mark.parametrize("is_async", [False, True])
async def test_a_remembered_scope_size_never_changes_the_results(
    pg_uri: str, schema: str, is_async: bool, options: str
) -> None:
    # The store remembers for a minute whether a scope held at most exact_scan_rows items
    # (scopes.py). ("a",) is counted small, then grows past the bound: still scored exactly.
    # ("b",) and the filter {"kind": "x"} are counted large, then shrink to 3 items: the HNSW
    # path still returns all of them.
    emb = TrigramEmbeddings()
    ranking = SearchRanking(text_weight=0.0, exact_scan_rows=6)
    words = ["tea", "teas", "team", "steam", "stream", "dream"]
    a = {f"a{i}": f"note {i} about {words[i % 6]}" for i in range(30)}
    b = {f"b{i}": f"memo {i} on {words[i % 6]}" for i in range(20)}
    searches = [(("a",), None), (("b",), None), ((), {"kind": "x"})]

    def ops() -> tuple[list[PutOp], list[PutOp], list[PutOp]]:
        first = [PutOp(("a",), k, {"text": t}) for k, t in list(a.items())[:4]]
        first += [PutOp(("b",), k, {"text": t, "kind": "x"}) for k, t in b.items()]
        grow = [PutOp(("a",), k, {"text": t}) for k, t in list(a.items())[4:]]
        shrink = [PutOp(("b",), k, None) for k in list(b)[3:]]
        return first, grow, shrink

    first, grow, shrink = ops()
    uri = f"{pg_uri}&options={quote(options)}" if options else pg_uri
    calls = [SearchOp(ns, query="tea time", filter=flt, limit=10) for ns, flt in searches]
    if is_async:
        async with AsyncVaultStore.from_conn_string(
            uri, schema=schema, index=index_config(emb), ranking=ranking
        ) as astore:
            await astore.setup()
            await astore.abatch(first)
            await astore.abatch(calls)  # counts each scope
            await astore.abatch(grow + shrink)
            before = await astore.abatch(calls)
            assert astore._stats.scopes.get(("namespace", "a", "null")) is True
    else:
        with VaultStore.from_conn_string(
            uri, schema=schema, index=index_config(emb), ranking=ranking
        ) as store:
            store.setup()
            store.batch(first)
            store.batch(calls)
            store.batch(grow + shrink)
            before = store.batch(calls)
            assert store._stats.scopes.get(("namespace", "a", "null")) is True
            # The filter's walk found only the 3 items left, fewer than k: that search ran on
            # the exact branch, but the verdict stays (a run-out depends on the query).
            assert store._stats.scopes.get(("items", "", '{"kind": "x"}')) is False
    found_a, found_b, found_x = before
    left = dict(list(b.items())[:3])
    assert [h.score for h in found_a] == pytest.approx(_exact_top(emb, "tea time", a), abs=1e-5)
    assert {h.key for h in found_b} == set(left)
    assert {h.key for h in found_x} == set(left)


def test_search_works_with_standard_conforming_strings_off(pg_uri: str, schema: str) -> None:
    # Some servers still run with standard_conforming_strings=off, where '\' in a literal is
    # an escape: the keyword branch's quoting must not depend on that setting.
    uri = f"{pg_uri}&options={quote('-c standard_conforming_strings=off')}"
    with VaultStore.from_conn_string(
        uri, schema=schema, index=index_config(TrigramEmbeddings())
    ) as store:
        store.setup()
        store.batch([PutOp(("u",), "a", {"text": "tea time"}), PutOp(("u",), "b", {"text": "x"})])
        assert [h.key for h in store.search(("u",), query="tea")][:1] == ["a"]
