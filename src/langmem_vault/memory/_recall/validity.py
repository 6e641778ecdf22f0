"""Which facts recall may answer with: open ones now, those valid at ``as_of`` for an as-of
question, those that may hold in the window a question names ("in 2020", "before I moved").

>>> from datetime import UTC, datetime
>>> now = datetime(2025, 1, 1, tzinfo=UTC)
>>> fact = {"status": "superseded", "valid_from": "2020-01-01", "valid_to": "2023-01-01"}
>>> answers_at(fact, now, None, {"active"})
False
>>> answers_at(fact, now, datetime(2021, 5, 1, tzinfo=UTC), {"active"})
True
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from langmem_vault.memory._recall.scoring import as_datetime
from langmem_vault.memory._recall.time_filter import TimeWindow, said_at

__all__ = ["answers_at"]


def answers_at(
    fact: Mapping[str, Any],
    now: datetime,
    as_of: datetime | None,
    allowed: set[str],
    window: TimeWindow | None = None,
) -> bool:
    """Whether ``fact`` answers now (open, not closed before now), or, with ``as_of``, then
    (valid at that moment, whether closed since or not), or, for a question naming a time
    (``window``: "in 2020", "before I moved"), may hold in that window (closed since or not).
    A fact with no known start is not known to hold before it was said."""
    status = fact.get("status", "active")
    valid_to = as_datetime(fact.get("valid_to"))
    if as_of is None:
        if window is not None and status in allowed | {"superseded"}:
            return window.admits(fact)
        return status in allowed and (valid_to is None or valid_to > now)
    valid_from = as_datetime(fact.get("valid_from")) or said_at(fact)
    return (
        status in allowed | {"superseded"}
        and (valid_from is None or valid_from <= as_of)
        and (valid_to is None or valid_to > as_of)
    )
