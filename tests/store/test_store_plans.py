"""Store plans with canned rows, no database."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import SearchOp

from langmem_vault.db._runner import Pipelined
from langmem_vault.store import _plan_settings as ps
from langmem_vault.store import _plans as plans
from langmem_vault.store import _vector_sql as vs
from langmem_vault.store._lexemes import LexemeStats, StatsCache
from langmem_vault.store._prepare import StoreSettings
from langmem_vault.store._ranking import SearchRanking
from langmem_vault.store._search_plan import search_plan
from tests.support.plans import drive


def test_sweep_returns_how_many_expired_items_went() -> None:
    (query,), removed = drive(plans.sweep_plan("s1"), [{"n": 5}])
    assert removed == 5 and "DELETE FROM s1.store_items" in str(query.sql)
    assert drive(plans.sweep_plan("s1"), None)[1] == 0


def test_analyze_clears_the_keyword_statistics() -> None:
    cache = StatsCache()
    cache.put(LexemeStats.of({"tea": 0.5}, rows=10))
    (query,), _ = drive(plans.analyze_plan("s1", cache), None)
    # the entity tables too: their statistics sample names and aliases (erase ends here)
    assert str(query.sql) == "ANALYZE s1.store_items, s1.entities, s1.entity_aliases"
    assert cache.get() is None


def _settings() -> StoreSettings:
    index = {"dims": 2, "embed": lambda texts: [[1.0, 0.0] for _ in texts], "fields": ["text"]}
    return StoreSettings("s1", index, SearchRanking(), 1000)  # type: ignore[arg-type]


def _row(key: str, score: float) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "namespace": ["d"],
        "key": key,
        "value": {},
        "created_at": now,
        "updated_at": now,
        "score": score,
        "ttl_minutes": None,
    }


def test_a_plain_search_is_one_round_trip() -> None:
    cache = StatsCache()
    cache.put(LexemeStats.of({"tea": 0.5}, rows=10))
    op = SearchOp((), query="green tea", limit=2)
    plan = search_plan(op, _settings(), {"green tea": [1.0, 0.0]}, cache)
    (step,), found = drive(plan, [None, [_row("a", 0.9), _row("b", 0.5)], None])
    # One Pipelined step: the HNSW settings (two SET LOCAL) and the plan mode, the statement
    # that finds the query's lexemes, weighs them with the cached statistics and ranks, and
    # the plan mode restored.
    assert isinstance(step, Pipelined) and len(step.queries) == 5
    ranked = step.queries[-2]
    assert "to_tsvector" in str(ranked.sql) and ranked.params["st_freqs"] == "\x01tea\x020.5\x01"
    assert [(item.key, item.score) for item in found.items] == [("a", 0.9), ("b", 0.5)]


def test_stale_statistics_are_read_first() -> None:
    op = SearchOp((), query="green tea", limit=1)
    cache = StatsCache()
    plan = search_plan(op, _settings(), {"green tea": [1.0, 0.0]}, cache)
    stats_rows = [{"freqs": "\x01tea\x020.25\x01", "rarest": 0.25, "rows": 40.0}]
    steps, found = drive(plan, stats_rows, [None, [_row("a", 0.9)], None])
    assert "pg_stats" in str(steps[0].sql)
    assert steps[1].queries[-2].params["st_freqs"] == "\x01tea\x020.25\x01"
    assert cache.get() == LexemeStats.of({"tea": 0.25}, 40.0)
    assert [item.key for item in found.items] == ["a"]


def test_a_scoped_search_counts_its_scope_once_a_minute() -> None:
    cache = StatsCache()
    cache.put(LexemeStats.of({"tea": 0.5}, rows=10))
    op = SearchOp(("users", "u1"), query="green tea", limit=2)
    vectors = {"green tea": [1.0, 0.0]}
    cache.routes.learn("u1", [[], [{"hash": 0}]])  # the tables are not partitioned (_routes.py)

    def statement(small: bool) -> tuple[str, str]:
        plan = search_plan(op, _settings(), vectors, cache)
        rows = [{**_row(k, 0.5), "small_scope": small} for k in "ab"]
        # A namespace's statements run on the generic plan, the first one (which counts)
        # included: the plan mode is restored in a third statement.
        (step,), _ = drive(plan, [None, rows, None])
        assert isinstance(step, Pipelined)
        return str(step.queries[-2].sql), step.queries[-2].params["known_small"]

    counted, verdict = statement(True)  # the first search counts: the namespace is small
    assert "small AS MATERIALIZED" in counted and "small_scope" in counted and verdict == ""
    # The next ones run the same statement (one generic plan), told the verdict: no count.
    assert statement(True) == (counted, "true")
    # the generic plan's statement carries k as a literal (one cached plan per store)
    assert f"LIMIT {SearchRanking().candidates}" in counted
    assert "LIMIT %(k)s" not in counted
    cache.scopes.put(("namespace", "users.u1", "null"), small=False)
    assert statement(False) == (counted, "false")  # a large one: the HNSW branch
    drive(plans.analyze_plan("s1", cache), None)  # ANALYZE forgets the verdicts too
    assert cache.scopes.get(("namespace", "users.u1", "null")) is None


def test_a_filtered_walk_that_ran_out_is_scored_exactly() -> None:
    # A large filter's search walks the HNSW index (column "walked": the candidates found).
    # Fewer than k means the walk stopped early: the same search runs again on the exact
    # branch, whose rows are the answer. k candidates found: one statement, no exact branch.
    cache = StatsCache()
    cache.put(LexemeStats.of({"tea": 0.5}, rows=10))
    op = SearchOp(("d",), query="green tea", filter={"kind": "x"}, limit=2)
    cache.scopes.put(("items", "d", '{"kind": "x"}'), small=False)
    vectors = {"green tea": [1.0, 0.0]}
    k = SearchRanking().candidate_count(2)

    plan = search_plan(op, _settings(), vectors, cache)
    short = [{**_row("far", 0.1), "walked": 1}, {**_row("farther", 0.05), "walked": 1}]
    steps, found = drive(plan, [None, short], [_row("a", 0.9), _row("b", 0.5)])
    walk, exact = str(steps[0].queries[-1].sql), str(steps[1].sql)
    walks = f"LIMIT {vs.FILTERED_SCAN_ROWS}"  # the walk's cut (_vector_sql.vectors_ann_filtered)
    assert walks in walk and "AS walked" in walk
    assert "+ 0" in exact and "AS walked" not in exact and walks not in exact
    assert [item.key for item in found.items] == ["a", "b"]
    # Not remembered: a run-out depends on the query, so the scope's next search walks again.
    assert cache.scopes.get(("items", "d", '{"kind": "x"}')) is False

    plan = search_plan(op, _settings(), vectors, cache)
    full = [{**_row(key, 0.5), "walked": k} for key in "ab"]
    steps, found = drive(plan, [None, full])
    assert len(steps) == 1 and [item.key for item in found.items] == ["a", "b"]


def test_only_a_plain_search_is_sent_with_a_generic_plan_and_constant_limits() -> None:
    cache = StatsCache()
    cache.put(LexemeStats.of({"tea": 0.5}, rows=10))
    vectors = {"tea": [1.0, 0.0]}
    sent: dict[str, tuple[Any, ...]] = {}
    rows = [{**_row(f"k{i}", 0.5), "small_scope": False, "walked": 80} for i in range(45)]
    for name, op in {
        "plain": SearchOp((), query="tea", limit=3, offset=2),
        "filtered": SearchOp((), query="tea", filter={"k": "v"}, limit=5),
        # k = 80, not the default 50: custom plans, so a caller paging with many sizes does
        # not fill each connection with cached generic plans.
        "large": SearchOp((), query="tea", limit=30, offset=10),
    }.items():
        plan = search_plan(op, _settings(), vectors, cache)
        (step,), _ = drive(plan, [None, rows] + [None] * (name == "plain"))
        assert isinstance(step, Pipelined)
        sent[name] = step.queries
    *_, settings, ranked, restore = sent["plain"]
    assert "force_generic_plan" in str(settings.sql) and restore.sql == ps.RESTORE_PLAN_MODE
    # k = 50 candidates, a constant; wanted = offset + limit stays a parameter.
    assert "%(k)s" not in str(ranked.sql) and "LIMIT 50" in str(ranked.sql)
    assert "LIMIT %(wanted)s" in str(ranked.sql)
    for name in ("filtered", "large"):
        *_, settings, ranked = sent[name]
        assert "force_generic_plan" not in str(settings.sql) and "%(k)s" in str(ranked.sql)
