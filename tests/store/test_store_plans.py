"""Store plans with canned rows, no database."""

from __future__ import annotations

from langmem_vault.store import plans
from langmem_vault.store.lexemes import LexemeStats, StatsCache
from tests.support.plans import drive


def test_sweep_returns_how_many_expired_items_went() -> None:
    (query,), removed = drive(plans.sweep_plan("s1"), [{"n": 5}])
    assert removed == 5 and "DELETE FROM s1.store_items" in str(query.sql)
    assert drive(plans.sweep_plan("s1"), None)[1] == 0


def test_analyze_clears_the_keyword_statistics() -> None:
    cache = StatsCache()
    cache.put(LexemeStats(freqs={"tea": 0.5}, rows=10))
    (query,), _ = drive(plans.analyze_plan("s1", cache), None)
    assert str(query.sql) == "ANALYZE s1.store_items"
    assert cache.get() is None
