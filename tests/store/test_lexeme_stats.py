"""The keyword statistics of a partitioned store go stale as its partitions grow: autovacuum
analyzes the partitions, never the partitioned table whose statistics (``inherited``) the
store reads, so the search's own staleness check must see the partitions' rows. The same read
tells a namespace search whether its namespace is small."""

from __future__ import annotations

from dataclasses import replace

import psycopg
from langgraph.store.base import PutOp, SearchOp

from langmem_vault.store import AsyncVaultStore, SearchRanking, VaultStore
from langmem_vault.store._keyword_sql import LEXEME_FREQ
from langmem_vault.store._lexemes import LexemeStats
from langmem_vault.store._search_plan import search_plan
from langmem_vault.store._sql import lexeme_stats
from tests.support.embeddings import DIMS, TrigramEmbeddings, index_config


def _stale(uri: str, schema: str) -> tuple[bool, float]:
    with psycopg.connect(uri) as conn:
        row = conn.execute(lexeme_stats(schema, 500)).fetchone()
    assert row is not None
    return bool(row[3]), float(row[2])


def test_a_partitioned_store_sees_its_statistics_go_stale(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup(partitions=4)
        assert _stale(pg_uri, schema) == (False, 0.0)  # empty: nothing to analyze
        ns = ("memories", "u1", "semantic")
        store.batch([PutOp(ns, f"k{n}", {"text": f"tea and cake {n}"}) for n in range(600)])
        with psycopg.connect(pg_uri, autocommit=True) as conn:  # what autovacuum does
            conn.execute(f"ANALYZE {schema}.store_items_p0, {schema}.store_items_p1")
            conn.execute(f"ANALYZE {schema}.store_items_p2, {schema}.store_items_p3")
        stale, rows = _stale(pg_uri, schema)
        assert stale and rows == 600
        # a search analyzes the partitioned table, and the statistics hold
        assert store.search(ns, query="tea", limit=1)
        assert _stale(pg_uri, schema) == (False, 600.0)


def test_the_statistics_are_read_in_one_row_holding_every_listed_lexeme(
    pg_uri: str, schema: str
) -> None:
    # The search looks a lexeme up in the text the read builds (LEXEME_FREQ): each listed
    # lexeme must come back with its listed frequency, and the rarest must be the smallest
    # (a lexeme not listed counts as half of it).
    listed_sql = """SELECT e.elem, e.freq FROM pg_stats AS st CROSS JOIN LATERAL
        unnest(st.most_common_elems::text::text[], st.most_common_elem_freqs) AS e(elem, freq)
        WHERE st.schemaname = %s AND st.tablename = 'store_items'
          AND st.attname = 'search_tsv' AND e.elem IS NOT NULL"""
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            assert conn.execute(lexeme_stats(schema, 500)).fetchall() == [
                ("\x01", None, 0.0, False, None, None, None)
            ]
            ns = ("memories", "u1", "semantic")
            texts = [f"tea w{n % 300} v{n % 7} x{n % 41}" for n in range(900)]
            store.batch([PutOp(ns, f"k{n}", {"text": t}) for n, t in enumerate(texts)])
            conn.execute(f"ANALYZE {schema}.store_items")
            listed = dict(conn.execute(listed_sql, [schema]).fetchall())
            ((freqs, rarest, rows, stale, *_),) = conn.execute(lexeme_stats(schema, 500)).fetchall()
            found = conn.execute(
                f"SELECT l, {LEXEME_FREQ} FROM unnest(%(lexemes)s::text[]) AS q(l)",
                LexemeStats(freqs, rows, rarest).params() | {"lexemes": list(listed)},
            ).fetchall()
    assert len(listed) > 300 and (rows, stale) == (900.0, False)
    assert dict(found) == listed
    assert rarest == min(listed.values())


# Namespaces of 20 items, one of 200 (and 30 under it), the bound 100: the statistics list
# every namespace, so each one's size is known without counting it.
SIZES = {("n", "a"): 20, ("n", "b"): 20, ("n", "big"): 200, ("n", "big", "sub"): 30}
BOUND = 100
QUERY = "tea garden"


def _puts() -> list[PutOp]:
    words = ["tea", "cake", "garden", "train", "river", "lamp"]
    return [
        PutOp(ns, f"k{n}", {"text": f"{words[n % 6]} {words[(n * 5) % 6]} {n}"})
        for ns, size in SIZES.items()
        for n in range(size)
    ]


def _told(store: VaultStore, ns: tuple[str, ...]) -> str:
    """The verdict a search of ``ns`` tells its statement (the store's statistics read)."""
    plan = search_plan(
        SearchOp(ns, query=QUERY), store.settings, {QUERY: [0.1] * DIMS}, store._stats
    )
    step = next(plan)
    search = [q for q in step.queries if "small AS" in str(q.sql)]
    return str(search[0].params["known_small"])


def test_a_namespace_the_statistics_call_small_is_not_counted(pg_uri: str, schema: str) -> None:
    """A namespace's first search counted its items for the exact-or-index verdict (the
    namespace's key range read, each first search of the minute). Now the statistics'
    shares of the namespaces tell it when it is well under the bound: the same answers,
    nothing counted; a namespace near or over the bound, or one never analyzed, is counted."""
    index = index_config(TrigramEmbeddings())
    ranking = SearchRanking(exact_scan_rows=BOUND)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, index=index, ranking=ranking)  # type: ignore[arg-type]
        store.setup()
        store.batch(_puts())
        store.analyze()  # what autovacuum does
        store.search(("n", "a"), query=QUERY)  # reads the statistics
        assert store._stats.get() is not None
        counted = {}
        for ns in [("n", "a"), ("n", "b"), ("n", "big"), ("n",)]:
            store._stats.scopes.clear()
            counted[ns] = _told(store, ns)
        assert counted == {("n", "a"): "true", ("n", "b"): "true", ("n", "big"): "", ("n",): ""}
        told = store.search(("n", "b"), query=QUERY, limit=5)
        stats = store._stats.get()
        assert stats is not None
        store._stats.put(replace(stats, prefix_rest=None))  # as if never analyzed: counted
        store._stats.scopes.clear()
        assert _told(store, ("n", "b")) == ""
        assert [(h.key, h.score) for h in store.search(("n", "b"), query=QUERY, limit=5)] == [
            (h.key, h.score) for h in told
        ]


async def test_a_namespace_the_statistics_call_small_is_searched_alike_async(
    pg_uri: str, schema: str
) -> None:
    index = index_config(TrigramEmbeddings())
    ranking = SearchRanking(exact_scan_rows=BOUND)
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=schema, index=index, ranking=ranking
    ) as store:
        await store.setup()
        await store.abatch(_puts())
        await store.analyze()
        told = await store.asearch(("n", "a"), query=QUERY, limit=5)
        stats = store._stats.get()
        assert stats is not None and stats.small_namespace("n.a", BOUND)
        assert store._stats.scopes.get(("namespace", "n.a", "null")) is None  # not counted
        store._stats.put(replace(stats, prefix_rest=None))
        store._stats.scopes.clear()
        counted = await store.asearch(("n", "a"), query=QUERY, limit=5)
        assert store._stats.scopes.get(("namespace", "n.a", "null")) is True
        assert [(h.key, h.score) for h in counted] == [(h.key, h.score) for h in told]


def test_the_statistics_read_is_planned_once_per_connection(pg_uri: str, schema: str) -> None:
    """Planning its catalog views cost 5.8 ms at every read (1.2 ms to run): it is prepared,
    with no parameters, so a connection plans it once."""
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema)  # type: ignore[arg-type]
        store.setup()
        store.batch(_puts())
        for _ in range(3):
            store._stats.clear()  # as a minute later
            assert store.search(("n", "a"), query=QUERY)
        plans = conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%most_common_elems%'"
        ).fetchall()
    assert plans == [(3, 0)]
