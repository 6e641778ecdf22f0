"""Search work bounded whatever the query's words and the tables' statistics (issue 26): what
the plain search's statement reads, from the plans Postgres ran (auto_explain), not timings."""

from __future__ import annotations

import json
import random
from typing import Any

import psycopg
from langgraph.store.base import PutOp

from langmem_vault.store import AsyncVaultStore, SearchRanking, VaultStore
from langmem_vault.store import _keyword_sql as keyword_sql
from langmem_vault.store._sql import SEARCH_ANALYZED, lexeme_stats
from tests.store.test_plain_search import REPEATS, _flat
from tests.support.embeddings import DIMS, TrigramEmbeddings, index_config

WORDS = ["tea", "cake", "garden", "train", "music", "rain", "kitchen", "dog"]
COMMON_QUERY = "tea cake garden train"


def _texts(n: int, seed: int = 3) -> list[str]:
    # 4 words of 8 per item: each word in about 40% of the items.
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, 4)) for _ in range(n)]


def _explaining(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """Every statement the connection runs from now on leaves its executed plan (JSON) here."""
    plans: list[dict[str, Any]] = []

    def keep(diag: psycopg.errors.Diagnostic) -> None:
        message = diag.message_primary or ""
        if "plan:" in message:
            plans.append(json.loads(message[message.index("{") :]))

    conn.add_notice_handler(keep)
    for setting in (
        "LOAD 'auto_explain'",
        "SET auto_explain.log_min_duration = 0",
        "SET auto_explain.log_analyze = on",
        "SET auto_explain.log_format = json",
        "SET auto_explain.log_level = notice",
    ):
        conn.execute(setting)
    return plans


def _rows(node: dict[str, Any], wanted: Any) -> int:
    """Rows the plan's nodes matching ``wanted`` returned, over all their loops."""
    own = int(node.get("Actual Rows", 0) * node.get("Actual Loops", 0)) if wanted(node) else 0
    return own + sum(_rows(child, wanted) for child in node.get("Plans", []))


def _search_plan(plans: list[dict[str, Any]]) -> dict[str, Any]:
    [plan] = [p for p in plans if "kw AS" in p["Query Text"]]
    return dict(plan["Plan"])


def _no_autovacuum(conn: psycopg.Connection[Any], schema: str) -> None:
    # Nothing analyzes the tables behind the test's back (that would replace a cached plan).
    for table in ("store_items", "store_vectors"):
        conn.execute(f"ALTER TABLE {schema}.{table} SET (autovacuum_enabled = off)")


def test_a_plain_search_planned_on_a_tiny_table_walks_the_index_after_a_bulk_load(
    pg_uri: str, schema: str
) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(
            conn,
            schema=schema,
            index=index_config(TrigramEmbeddings()),  # type: ignore[arg-type]
            ranking=SearchRanking(exact_scan_rows=0),
        )
        store.setup()
        _no_autovacuum(conn, schema)
        store.batch(
            [PutOp(("n", f"u{i % 3}"), f"t{i}", {"text": t}) for i, t in enumerate(_texts(8))]
        )
        # The statement's generic plan is made now, on 8 rows never analyzed (the cheapest
        # plan there sorts every vector), and kept: nothing analyzes the tables.
        for _ in range(REPEATS):
            store.search(("n",), query=COMMON_QUERY, limit=5)
        texts = _texts(2000, seed=4)
        store.batch([PutOp(("n", f"u{i % 3}"), f"k{i}", {"text": t}) for i, t in enumerate(texts)])
        plans = _explaining(conn)
        assert len(store.search(("n",), query=COMMON_QUERY, limit=5)) == 5
        plan = _search_plan(plans)
        # The HNSW walk's 50 candidates and one probe each for their exact cosines, not the
        # 2,008 vectors of the table.
        read = _rows(plan, lambda n: n.get("Relation Name") == "store_vectors")
        assert 0 < read <= 4 * SearchRanking().candidates
        assert not _rows(plan, lambda n: n["Node Type"] == "Seq Scan")


def test_common_words_read_no_keyword_rows_right_after_a_bulk_load(
    pg_uri: str, schema: str
) -> None:
    # Every word is in ~40% of 3,000 items; the search runs straight after the load, before
    # any ANALYZE: it finds the statistics stale and analyzes, so the common words are known
    # as such and not looked up in the GIN index (each would read ~1,200 items' entries).
    # The rare word still finds its items (flat vectors: only the keyword side can).
    ranking = SearchRanking(exact_scan_rows=0)
    index: Any = {"dims": DIMS, "embed": _flat, "fields": ["text"]}
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, index=index, ranking=ranking)
        store.setup()
        _no_autovacuum(conn, schema)
        ops = [PutOp(("n", f"u{i % 3}"), f"k{i}", {"text": t}) for i, t in enumerate(_texts(3000))]
        ops += [PutOp(("n", "u1"), f"z{i}", {"text": f"tea and a zeppelin {i}"}) for i in range(3)]
        store.batch(ops)
        plans = _explaining(conn)
        store.search(("n",), query=f"{COMMON_QUERY}?", limit=10)
        keyword_rows = _rows(
            _search_plan(plans), lambda n: n.get("Index Name") == "store_items_tsv_idx"
        )
        assert keyword_rows <= ranking.common_rows
        hits = store.search(("n",), query="zeppelin tea cake?", limit=3)
        assert {h.key for h in hits} == {"z0", "z1", "z2"}


async def test_a_search_analyzes_a_fresh_bulk_load_async(pg_uri: str, schema: str) -> None:
    index: Any = {"dims": DIMS, "embed": _flat, "fields": ["text"]}
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:
        await store.setup()
        await store.abatch(
            [PutOp(("n",), f"k{i}", {"text": t}) for i, t in enumerate(_texts(1500))]
        )
        ops = [PutOp(("n",), f"z{i}", {"text": f"a zeppelin {i}"}) for i in range(2)]
        await store.abatch(ops)
        hits = await store.asearch(("n",), query="zeppelin?", limit=2)
        assert {h.key for h in hits} == {"z0", "z1"}
    with psycopg.connect(pg_uri) as conn:
        [(common,)] = conn.execute(
            "SELECT most_common_elems::text::text[] FROM pg_stats WHERE schemaname = %s"
            " AND tablename = 'store_items' AND attname = 'search_tsv'",
            [schema],
        ).fetchall()
    assert set(WORDS) <= set(common)


def test_a_search_analyzes_only_the_columns_it_plans_by_after_a_bulk_load(
    pg_uri: str, schema: str
) -> None:
    # The keyword weights and the columns the search's plans join and filter by: analyzing
    # every column (the JSON values above all) made the first search after a bulk load 3x
    # slower (issue 26). The rest is autovacuum's; the table's size is recorded all the
    # same, so the statistics then read as fresh: no second ANALYZE.
    index: Any = {"dims": DIMS, "embed": _flat, "fields": ["text"]}
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, index=index)
        store.setup()
        _no_autovacuum(conn, schema)
        ops = [PutOp(("n", f"u{i % 3}"), f"k{i}", {"text": t}) for i, t in enumerate(_texts(3000))]
        store.batch(ops)
        assert store.search(("n",), query="tea?", limit=2)
        # The plan made on those statistics still walks the index: the full-text column's
        # alone joined every item to the HNSW walk (140 ms per search at 20k items).
        plans = _explaining(conn)
        assert len(store.search(("n",), query=f"{COMMON_QUERY}?", limit=10)) == 10
        read = _rows(_search_plan(plans), lambda n: n.get("Relation Name") == "store_items")
        assert read <= 2 * SearchRanking().candidates
        analyzed = conn.execute(
            "SELECT attname FROM pg_stats WHERE schemaname = %s AND tablename = 'store_items'",
            [schema],
        ).fetchall()
        assert {a for (a,) in analyzed} == set(SEARCH_ANALYZED)
        stale = {r[3] for r in conn.execute(lexeme_stats(schema, 500)).fetchall()}
        assert stale == {False}


def _namespace_ops(users: int = 3, per_user: int = 300) -> list[PutOp]:
    texts = _texts(users * per_user, seed=5)
    return [PutOp(("n", f"u{i % users}"), f"k{i}", {"text": t}) for i, t in enumerate(texts)]


def _loaded_store(
    conn: psycopg.Connection[Any], schema: str, ops: list[PutOp], **options: Any
) -> VaultStore:
    """A trigram-embedded store on ``conn``, set up, holding ``ops``, analyzed."""
    store = VaultStore(conn, schema=schema, index=index_config(TrigramEmbeddings()), **options)  # type: ignore[arg-type]
    store.setup()
    store.batch(ops)
    store.analyze()
    return store


def test_a_small_namespace_reads_its_own_vectors_once_on_a_generic_plan(
    pg_uri: str, schema: str
) -> None:
    # 300 items per namespace, scored exactly: the statement reads the namespace's 300
    # vectors once (their cosines too: no second probe per candidate) and 50 items, on a
    # generic plan (no planning per search). Made generic with sorts disabled, the same
    # statement could walk the whole HNSW graph instead, filtering on the namespace. It is
    # the statement that counted the namespace at its first search, told the verdict now:
    # it counts nothing (the count would read its 300 items).
    # The query's words are common (each in ~360 items): no keyword-only candidates.
    ranking = SearchRanking(common_rows=100)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = _loaded_store(conn, schema, _namespace_ops(), ranking=ranking)
        for _ in range(REPEATS):
            store.search(("n", "u1"), query=COMMON_QUERY, limit=10)
        plans = _explaining(conn)
        hits = store.search(("n", "u1"), query=COMMON_QUERY, limit=10)
        assert len(hits) == 10 and {h.namespace for h in hits} == {("n", "u1")}
        plan = _search_plan(plans)
        assert _rows(plan, lambda n: n.get("Relation Name") == "store_vectors") == 300
        assert not _rows(plan, lambda n: n.get("Index Name") == "store_vectors_embedding_idx")
        assert _rows(plan, lambda n: n.get("Relation Name") == "store_items") <= 60
        [(generic, custom)] = conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%nv AS%'"
        ).fetchall()
        assert generic > 0 and custom == 0


async def test_a_small_namespace_search_runs_its_generic_plan_async(
    pg_uri: str, schema: str
) -> None:
    async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as conn:
        store = AsyncVaultStore(conn, schema=schema, index=index_config(TrigramEmbeddings()))  # type: ignore[arg-type]
        await store.setup()
        await store.abatch(_namespace_ops(per_user=40))
        first = await store.asearch(("n", "u2"), query=COMMON_QUERY, limit=5)
        for _ in range(REPEATS):
            again = await store.asearch(("n", "u2"), query=COMMON_QUERY, limit=5)
            assert [(h.key, h.score) for h in again] == [(h.key, h.score) for h in first]
        cur = await conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%nv AS%'"
        )
        [(generic, custom)] = await cur.fetchall()
        assert generic > 0 and custom == 0


def _loops(node: dict[str, Any], wanted: Any) -> int:
    """How many times the plan's nodes matching ``wanted`` ran."""
    own = int(node.get("Actual Loops", 0)) if wanted(node) else 0
    return own + sum(_loops(child, wanted) for child in node.get("Plans", []))


def test_rare_words_with_fewer_matches_than_candidates_take_one_index_scan(
    pg_uri: str, schema: str
) -> None:
    # Three rare words in 5 items in all, fewer than the 50 candidates: one scan of the
    # full-text index finds them all (the keyword levels, up to eight scans, never run).
    index: Any = {"dims": DIMS, "embed": _flat, "fields": ["text"]}
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, index=index)
        store.setup()
        rare = ["a zeppelin", "two zeppelins", "a quokka", "quokka and zeppelin", "an axolotl"]
        ops = [PutOp(("n",), f"k{i}", {"text": t}) for i, t in enumerate(_texts(600))]
        ops += [PutOp(("n",), f"r{i}", {"text": t}) for i, t in enumerate(rare)]
        store.batch(ops)
        store.analyze()
        plans = _explaining(conn)
        hits = store.search(("n",), query="zeppelin quokka axolotl?", limit=5)
        assert {h.key for h in hits} == {f"r{i}" for i in range(5)}
        assert hits[0].key == "r3"  # two of the words
        scans = _loops(_search_plan(plans), lambda n: n.get("Index Name") == "store_items_tsv_idx")
        assert scans == 1


# Rare words in a few items each, put one at a time (distinct updated_at: ties on score are
# ordered, not arbitrary), after common filler. A search of 2 results takes 4 candidates per
# retriever; each query below has more matches than that, and (but the last) its words' rows
# add up to at most twice that: the first scan holds every match. The one item with three
# words comes last; "walrus" alone is one level, cut.
_HELD = [
    "a quokka with an axolotl",
    "an axolotl",
    *(f"a quokka, number {i}" for i in range(2)),
    "a zeppelin, a quokka and an axolotl",
    *(f"a walrus, number {i}" for i in range(6)),
]
HELD_QUERIES = ["zeppelin quokka axolotl?", "quokka axolotl?", "walrus?", "quokka walrus?"]


def _held_store_ops() -> tuple[list[PutOp], list[PutOp]]:
    filler = [PutOp(("d",), f"f{i:03d}", {"text": f"the bakery on street {i}"}) for i in range(60)]
    return filler, [PutOp(("d",), f"h{i}", {"text": t}) for i, t in enumerate(_HELD)]


def _held_store_kw() -> dict[str, Any]:
    # Flat vectors: every cosine 0, so the keyword candidates alone make each page.
    ranking = SearchRanking(candidates=4, common_rows=10_000, exact_scan_rows=0)
    return {"index": {"dims": DIMS, "embed": _flat, "fields": ["text"]}, "ranking": ranking}


def _keyword_rows(plans: list[dict[str, Any]]) -> int:
    """Rows the search read from store_items besides its vector candidates' probes."""
    return _rows(
        _search_plan(plans),
        lambda n: (
            n.get("Relation Name") == "store_items"
            # the candidates' probes and the page's rows (by key: either index of the key)
            and n.get("Index Name") not in ("store_items_pkey", "store_items_rank_idx")
        ),
    )


def _page(hits: list[Any]) -> list[tuple[str, float]]:
    return [(h.key, round(h.score, 9)) for h in hits]


def test_rare_matches_held_from_the_first_scan_make_the_levels_candidates(
    pg_uri: str, schema: str, monkeypatch: Any
) -> None:
    # Between k and 2k matches: the first scan read them all, and the levels' candidates are
    # chosen from its rows (one index scan) instead of read again level by level. Every page
    # must be the one the levels make (HELD_MATCHES = 1: the first scan cut at k + 1).
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = VaultStore(conn, schema=schema, **_held_store_kw())
        store.setup()
        filler, held = _held_store_ops()
        store.batch(filler)
        for op in held:
            store.batch([op])
        store.analyze()
        plans = _explaining(conn)
        got = {
            (q, n): _page(store.search(("d",), query=q, limit=n))
            for q in HELD_QUERIES
            for n in (1, 2)
        }
        plans.clear()
        store.search(("d",), query="walrus?", limit=2)  # 6 matches, 4 candidates
        # Rows read from store_items besides the vector candidates' probes: the 6 matches, once.
        assert _keyword_rows(plans) == 6
        # 10 rows estimated, more than twice the candidates: the first scan stops at 5, and the
        # levels read their 4 (the first scan did not hold every match).
        plans.clear()
        store.search(("d",), query="quokka walrus?", limit=2)
        assert _keyword_rows(plans) == 5 + 4
        # One rare word in 6 items, 4 candidates: the table's first 4 (an item put later wins
        # a tie on score), as the levels take them; three words before two, before one.
        assert [k for k, _ in got[("walrus?", 2)]] == ["h8", "h7"]
        assert [k for k, _ in got[("zeppelin quokka axolotl?", 1)]] == ["h4"]
        monkeypatch.setattr(keyword_sql, "HELD_MATCHES", 1)
        want = {
            (q, n): _page(store.search(("d",), query=q, limit=n))
            for q in HELD_QUERIES
            for n in (1, 2)
        }
        assert got == want


async def test_rare_matches_held_from_the_first_scan_async(
    pg_uri: str, schema: str, monkeypatch: Any
) -> None:
    async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as conn:
        store = AsyncVaultStore(conn, schema=schema, **_held_store_kw())
        await store.setup()
        filler, held = _held_store_ops()
        await store.abatch(filler)
        for op in held:
            await store.abatch([op])
        await store.analyze()
        got = [
            _page(await store.asearch(("d",), query=q, limit=n))
            for q in HELD_QUERIES
            for n in (1, 2)
        ]
        monkeypatch.setattr(keyword_sql, "HELD_MATCHES", 1)
        want = [
            _page(await store.asearch(("d",), query=q, limit=n))
            for q in HELD_QUERIES
            for n in (1, 2)
        ]
        assert got == want
        assert [k for k, _ in got[5]] == ["h8", "h7"]  # "walrus?", 2 results


def _prepared(conn: psycopg.Connection[Any], like: str) -> list[tuple[int, int]]:
    return conn.execute(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE %s",
        (like,),
    ).fetchall()


def test_a_namespace_s_first_search_runs_a_generic_plan_prepared_at_once(
    pg_uri: str, schema: str
) -> None:
    # A namespace's first search (its size not known yet: the statement counts it) used to be
    # planned for its own parameters every time: 3-11 ms of planning for 1.7-3.4 of execution
    # at 20k items, on every user's first search of the minute (issue 26). Now it runs one
    # generic plan per connection, prepared on its first run, and still reads only its own
    # namespace's vectors (no walk of the HNSW graph).
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = _loaded_store(conn, schema, _namespace_ops(users=4, per_user=40))
        plans = _explaining(conn)
        hits = store.search(("n", "u0"), query=COMMON_QUERY, limit=10)
        assert len(hits) == 10 and {h.namespace for h in hits} == {("n", "u0")}
        plan = _search_plan(plans)
        assert _rows(plan, lambda n: n.get("Relation Name") == "store_vectors") == 40
        assert not _rows(plan, lambda n: n.get("Index Name") == "store_vectors_embedding_idx")
        assert _prepared(conn, "%small AS%") == [(1, 0)]
        for user in ("u1", "u2", "u3"):  # each a first search, of another namespace
            hits = store.search(("n", user), query=COMMON_QUERY, limit=10)
            assert {h.namespace for h in hits} == {("n", user)}
        assert _prepared(conn, "%small AS%") == [(4, 0)]


def test_a_page_of_candidates_runs_a_generic_plan_prepared_at_once(
    pg_uri: str, schema: str
) -> None:
    # inject asks for a page of 50 (k = 100, twice the store's candidates): that statement was
    # planned on its first 11 runs of every pooled connection (5 unprepared, 5 custom plans),
    # the turns that made inject's p95 (bench/RESULTS.md, session 15). It is now the second
    # value of k with a statement of its own, prepared on its first run with its generic plan.
    ranking = SearchRanking()
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = _loaded_store(conn, schema, _namespace_ops(users=2, per_user=40))
        for _ in range(3):
            hits = store.search(("n", "u0"), query=COMMON_QUERY, limit=ranking.candidates)
            assert len(hits) == 40 and {h.namespace for h in hits} == {("n", "u0")}
        assert _prepared(conn, f"%LIMIT {2 * ranking.candidates}%") == [(3, 0)]


async def test_a_page_of_candidates_runs_a_generic_plan_prepared_at_once_async(
    pg_uri: str, schema: str
) -> None:
    ranking = SearchRanking()
    async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as conn:
        store = AsyncVaultStore(conn, schema=schema, index=index_config(TrigramEmbeddings()))  # type: ignore[arg-type]
        await store.setup()
        await store.abatch(_namespace_ops(users=2, per_user=40))
        for _ in range(3):
            hits = await store.asearch(("n", "u1"), query=COMMON_QUERY, limit=ranking.candidates)
            assert len(hits) == 40 and {h.namespace for h in hits} == {("n", "u1")}
        cur = await conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE %s",
            (f"%LIMIT {2 * ranking.candidates}%",),
        )
        assert await cur.fetchall() == [(3, 0)]


def test_a_large_namespace_s_first_search_does_not_read_all_its_vectors(
    pg_uri: str, schema: str
) -> None:
    # The statement that counts a namespace holds both branches, the exact one gated off when
    # the count says large; the namespace's vectors it reads for the exact one must be gated
    # too (they were all read and sorted: 20,000 at 20k items for ("mem",), issue 26).
    ranking = SearchRanking(exact_scan_rows=100)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        store = _loaded_store(conn, schema, _namespace_ops(users=3, per_user=150), ranking=ranking)
        plans = _explaining(conn)
        hits = store.search(("n",), query=COMMON_QUERY, limit=10)
        assert len(hits) == 10
        plan = _search_plan(plans)
        assert any("small AS" in p["Query Text"] for p in plans)  # the statement that counts
        read = _rows(plan, lambda n: n.get("Relation Name") == "store_vectors")
        # the index's candidates, and the verdict's count of the namespace's vectors, which
        # stops one past the bound (issue 28 session 12): not the 450 vectors it holds
        assert 0 < read <= 2 * ranking.candidates + ranking.exact_scan_rows + 1


async def test_a_search_is_prepared_at_its_first_run_async(pg_uri: str, schema: str) -> None:
    # psycopg prepares a statement at its sixth run by default; until then each run of the
    # search planned its generic plan again (2-3 ms at 20k items). (A connection with
    # prepare_threshold=None, behind a transaction-mode pooler, still prepares nothing:
    # psycopg ignores prepare=True there.)
    async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as conn:
        store = AsyncVaultStore(conn, schema=schema, index=index_config(TrigramEmbeddings()))  # type: ignore[arg-type]
        await store.setup()
        await store.abatch(_namespace_ops(users=2, per_user=30))
        assert await store.asearch(("n",), query=COMMON_QUERY, limit=5)
        cur = await conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%kw AS%'"
        )
        assert await cur.fetchall() == [(1, 0)]
