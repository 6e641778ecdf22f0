"""The condition syntax of standing instructions: parse once, evaluate per turn.

A condition is one clause or several joined by `` and `` (all must hold). Clauses,
case-insensitive:

- ``topic contains <words>`` - the latest user message mentions the words
  (``message contains <words>`` is a synonym);
- ``weekday is <Monday..Sunday>`` / ``weekday is not <day>`` - the turn's weekday (UTC by
  default; pass a ``now`` in another zone);
- ``time after HH:MM`` / ``time before HH:MM`` - the turn's time of day.

An empty or ``None`` condition always holds. A bad condition raises ``ValueError`` naming
the clause, so an instruction with a condition nothing can evaluate is refused on write.

>>> cond = parse_condition("topic contains travel and weekday is Monday")
>>> from datetime import datetime, timezone
>>> cond.holds("planning travel to Rome", datetime(2026, 11, 23, tzinfo=timezone.utc))
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time
from functools import lru_cache

__all__ = ["Clause", "Condition", "parse_condition"]

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_CLAUSE = re.compile(
    r"^(?:(?P<subject>topic|message)\s+contains\s+(?P<words>.+)"
    r"|weekday\s+is\s+(?P<neg>not\s+)?(?P<day>[a-z]+)"
    r"|time\s+(?P<rel>after|before)\s+(?P<hh>\d{1,2}):(?P<mm>\d{2}))$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Clause:
    """One parsed clause: ``kind`` is ``contains``, ``weekday`` or ``time``."""

    kind: str
    words: str = ""
    day: int = 0
    negate: bool = False
    after: bool = False
    at: time = time(0, 0)

    def holds(self, message: str, now: datetime) -> bool:
        """Whether the clause holds for this user message at this moment."""
        if self.kind == "contains":
            return _mentions(message, self.words)
        if self.kind == "weekday":
            return (now.weekday() == self.day) != self.negate
        current = now.time().replace(tzinfo=None)
        return current >= self.at if self.after else current < self.at


@dataclass(frozen=True)
class Condition:
    """A parsed condition (all clauses must hold). ``Condition(())`` always holds."""

    clauses: tuple[Clause, ...]

    def holds(self, message: str | None, now: datetime | None = None) -> bool:
        """Evaluate against the latest user message (``None``: none yet) and a time."""
        moment = now or datetime.now(UTC)
        return all(c.holds(message or "", moment) for c in self.clauses)


def _mentions(message: str, words: str) -> bool:
    # Word-boundary match so "art" does not fire on "party"; plural "s" tolerated.
    pattern = r"\b" + r"\s+".join(re.escape(w) for w in words.lower().split()) + r"s?\b"
    return re.search(pattern, message.lower()) is not None


def _parse_clause(raw: str) -> Clause:
    text = " ".join(raw.split())
    match = _CLAUSE.match(text)
    if match is None:
        raise ValueError(
            f"condition clause {raw!r} is not understood; use 'topic contains <words>', "
            "'weekday is <day>', 'weekday is not <day>', 'time after HH:MM' or "
            "'time before HH:MM', joined by ' and '"
        )
    if match.group("words") is not None:
        words = match.group("words").strip().strip("'\"").strip()
        if not words:
            raise ValueError(f"condition clause {raw!r}: 'contains' needs words")
        return Clause(kind="contains", words=words)
    if match.group("day") is not None:
        day = match.group("day").lower()
        if day not in WEEKDAYS:
            raise ValueError(f"condition clause {raw!r}: {day!r} is not a weekday name")
        return Clause(kind="weekday", day=WEEKDAYS.index(day), negate=bool(match.group("neg")))
    hh, mm = int(match.group("hh")), int(match.group("mm"))
    if hh > 23 or mm > 59:
        raise ValueError(f"condition clause {raw!r}: {hh:02d}:{mm:02d} is not a time of day")
    return Clause(kind="time", after=match.group("rel").lower() == "after", at=time(hh, mm))


@lru_cache(maxsize=1024)  # inject evaluates the same few conditions every turn
def parse_condition(condition: str | None) -> Condition:
    """Parse a condition string; raises ``ValueError`` naming a clause it cannot read.

    >>> parse_condition("weekday is friday").holds("hi")  # doctest: +SKIP
    """
    if condition is None or not condition.strip():
        return Condition(())
    parts = re.split(r"\s+and\s+", condition.strip(), flags=re.IGNORECASE)
    return Condition(tuple(_parse_clause(part) for part in parts))
