"""Scoring: the 0.7/0.3 blend, 7-day decay, relevance, utility, category balance."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from langmem_vault.memory._recall.scoring import (
    ScoredMemory,
    as_datetime,
    balance_categories,
    base_score,
    recency,
    score_memory,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _fact(confidence: float, age_days: float, utility: float = 0.5) -> dict[str, object]:
    when = (NOW - timedelta(days=age_days)).isoformat()
    return {"confidence": confidence, "updated_at": when, "utility": utility}


def test_recency_decays_over_seven_days() -> None:
    assert recency(NOW, NOW) == 1.0
    assert math.isclose(recency(NOW - timedelta(days=7), NOW), math.exp(-1))
    assert recency(None, NOW) == 0.0


def test_base_score_blend() -> None:
    assert math.isclose(base_score(_fact(1.0, 0), NOW), 1.0)
    assert math.isclose(base_score(_fact(0.5, 0), NOW), 0.35 + 0.3)
    # a week-old certain fact beats a fresh doubtful one: confidence weighs more
    assert base_score(_fact(1.0, 7), NOW) > base_score(_fact(0.5, 0), NOW)


def test_last_access_keeps_a_fact_fresh() -> None:
    old = _fact(0.9, 30)
    used = {**old, "last_accessed": NOW.isoformat()}
    assert base_score(used, NOW) > base_score(old, NOW)


def test_relevance_and_utility_move_the_score() -> None:
    fact = _fact(0.9, 1)
    assert score_memory(fact, NOW, relevance=0.9) > score_memory(fact, NOW, relevance=0.2)
    assert score_memory(_fact(0.9, 1, 0.9), NOW) > score_memory(_fact(0.9, 1, 0.1), NOW)


def test_category_balance_caps_one_category() -> None:
    prefs = [ScoredMemory(f"p{i}", {"category": "preference"}, 1 - i / 100) for i in range(10)]
    others = [
        ScoredMemory("w", {"category": "company"}, 0.2),
        ScoredMemory("r", {"category": "relationship"}, 0.1),
    ]
    picked = balance_categories(prefs + others, 5, max_share=0.4)
    keys = [m.key for m in picked]
    assert "w" in keys and "r" in keys
    assert sum(1 for m in picked if m.category == "preference") == 3


def test_category_balance_fills_when_nothing_else() -> None:
    prefs = [ScoredMemory(f"p{i}", {"category": "preference"}, 1 - i / 100) for i in range(10)]
    assert len(balance_categories(prefs, 6, max_share=0.2)) == 6
    assert balance_categories(prefs, 0) == []


def test_stamps_parse_the_same_every_time() -> None:
    # The parses are cached (a turn reads the same stamps hundreds of times): a stamp read
    # again is the same aware datetime, naive ones taken as UTC, bad ones None.
    for _ in range(2):
        assert as_datetime("2026-05-31T12:00:00+02:00") == datetime(2026, 5, 31, 10, tzinfo=UTC)
        naive = as_datetime("2026-05-31T12:00:00")
        assert naive == datetime(2026, 5, 31, 12, tzinfo=UTC) and naive.tzinfo is not None
        assert as_datetime("not a date") is None
        assert as_datetime("") is None and as_datetime(None) is None and as_datetime(3) is None
        assert as_datetime(datetime(2026, 5, 31)) == datetime(2026, 5, 31, tzinfo=UTC)
    assert as_datetime("2026-05-31T12:00:00") is as_datetime("2026-05-31T12:00:00")
