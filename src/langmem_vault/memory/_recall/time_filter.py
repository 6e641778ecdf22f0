"""A question's time, as a window memories are filtered and ranked by (sans-IO).

:func:`read_query_time` reads "in 2022", "last month", "since 2019", "before 2020" as a
window relative to now (or to ``as_of``), "before I moved" as a window anchored on an event
the caller looks up, and notes "when did I ..." questions. A :class:`TimeWindow` then says
which stored memories it admits and how well each fits, on raw stored dicts (Python, any
store) or as SQL over a ``jsonb`` value column (:meth:`TimeWindow.sql`).

A memory fits a window by when it holds (``valid_from``/``valid_to``; open-ended when unknown),
so a superseded fact whose validity covers the window is eligible: "where did I live in 2020?"
finds Porto, closed when the user moved to Lyon in 2022. A memory with no validity is
judged by when it was said (``observed_at``, else ``created_at``).

>>> from datetime import datetime, UTC
>>> now = datetime(2024, 6, 3, tzinfo=UTC)
>>> asked = read_query_time("Where did I live in 2020?", now=now)
>>> asked.window.start.date(), asked.window.end.date()
(datetime.date(2020, 1, 1), datetime.date(2021, 1, 1))
>>> porto = {"text": "Lives in Porto", "status": "superseded",
...          "valid_to": "2022-01-01T00:00:00Z", "observed_at": "2019-03-01T00:00:00Z"}
>>> lyon = {"text": "Lives in Lyon", "valid_from": "2022-01-01T00:00:00Z"}
>>> [v["text"] for v in asked.window.order([lyon, porto])]
['Lives in Porto']
>>> read_query_time("Where do I live?", as_of=datetime(2020, 6, 1, tzinfo=UTC)).window.admits(porto)
True
>>> later = read_query_time("What did I do before I moved to Lyon?", now=now)
>>> later.anchor, later.relation, later.window
('I moved to Lyon', 'before', None)
>>> later.anchored(datetime(2022, 1, 1, tzinfo=UTC)).end.year
2022
>>> read_query_time("When did I start the new job?", now=now).asks_when
True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar

from langmem_vault.memory._dates import find_phrases, parse_period
from langmem_vault.memory._recall.scoring import as_datetime

__all__ = [
    "QueryTime",
    "TimeWindow",
    "anchor_time",
    "date_label",
    "question_window",
    "read_query_time",
    "said_at",
    "time_ranked",
    "validity_of",
]

T = TypeVar("T")
K = TypeVar("K")

#: how well a memory fits a window (:meth:`TimeWindow.fit`)
FIT_VALID = 1.0  # its validity overlaps the window
FIT_SAID_IN = 0.8  # undated, said inside the window
FIT_SAID_BEFORE = 0.6  # undated, said before the window (may still hold)
FIT_SAID_AFTER = 0.3  # undated, said after the window (not known then)

_ANCHOR = re.compile(
    r"\b(?P<rel>before|after|since|until|till|prior to)\s+"
    # an event someone did ("I moved to Lyon"), or a name standing for one ("before Lyon")
    r"(?P<event>(?:I|we|my|our|he|she|they|you)\b[^?.!,;]*"
    r"|(?-i:[A-Z][\w'\u2019-]*)(?:\s+(?-i:[A-Z][\w'\u2019-]*))*)",
    re.IGNORECASE,
)
_WHEN = re.compile(
    r"^\s*(?:when\b|what (?:year|month|date|day)\b|which (?:year|month)\b|how long ago\b)",
    re.IGNORECASE,
)


def _itself(memory: Any) -> Mapping[str, Any]:
    return memory  # type: ignore[no-any-return]


def validity_of(value: Mapping[str, Any]) -> tuple[datetime | None, datetime | None]:
    """When a stored memory holds: (``valid_from``, ``valid_to``), None where unknown."""
    return as_datetime(value.get("valid_from")), as_datetime(value.get("valid_to"))


def said_at(value: Mapping[str, Any]) -> datetime | None:
    """When a stored memory was said: ``observed_at``, else (a value stored before it
    existed) ``created_at``."""
    return as_datetime(value.get("observed_at")) or as_datetime(value.get("created_at"))


def _date(moment: datetime, *, exact: bool = False) -> str:
    # A bound is stored as its period's first moment: 1 January reads as the year, the 1st
    # of a month as the month (memory.dates); "said" is always a day.
    if not exact and moment.time() == datetime.min.time() and moment.day == 1:
        return str(moment.year) if moment.month == 1 else f"{moment:%B} {moment.year}"
    return f"{moment.day} {moment:%B} {moment.year}"


def date_label(value: Mapping[str, Any]) -> str | None:
    """A memory's dates, compactly, for a prompt: when it holds ("since May 2023",
    "2021–2023", "until 2020"), else when it was said ("said 3 Jun 2024"); None when
    unknown (a value stored before ``observed_at`` existed).

    >>> date_label({"valid_from": "2023-05-01T00:00:00Z"})
    'since May 2023'
    >>> date_label({"valid_from": "2021-01-01T00:00:00Z", "valid_to": "2023-01-01T00:00:00Z"})
    '2021–2023'
    >>> date_label({"observed_at": "2024-06-03T09:30:00Z"})
    'said 3 June 2024'
    >>> date_label({"created_at": "2024-06-03T09:30:00Z"}) is None
    True
    """
    start, end = validity_of(value)
    if start is not None and end is not None:
        return f"{_date(start)}–{_date(end)}"
    if start is not None:
        return f"since {_date(start)}"
    if end is not None:
        return f"until {_date(end)}"
    said = as_datetime(value.get("observed_at"))
    return f"said {_date(said, exact=True)}" if said is not None else None


@dataclass(frozen=True)
class TimeWindow:
    """A span of time ``[start, end)``; None is open on that side.

    >>> from datetime import datetime, UTC
    >>> w = TimeWindow(datetime(2020, 1, 1, tzinfo=UTC), datetime(2021, 1, 1, tzinfo=UTC))
    >>> w.admits({"valid_from": "2021-03-01T00:00:00Z"}), w.admits({"text": "undated"})
    (False, True)
    """

    start: datetime | None = None
    end: datetime | None = None

    @classmethod
    def at(cls, moment: datetime) -> TimeWindow:
        """The window of one moment (an ``as_of``)."""
        return cls(moment, moment + timedelta(microseconds=1))

    def admits(self, value: Mapping[str, Any]) -> bool:
        """Whether the memory may hold in the window: its validity (open where unknown)
        overlaps it. Superseded facts are judged like any other, by their validity."""
        start, end = validity_of(value)
        if self.end is not None and start is not None and start >= self.end:
            return False
        return not (self.start is not None and end is not None and end <= self.start)

    def fit(self, value: Mapping[str, Any]) -> float:
        """How well the memory fits: 0 outside the window, 1 when its validity overlaps it;
        an undated one by when it was said (inside, before, after: 0.8, 0.6, 0.3)."""
        if not self.admits(value):
            return 0.0
        start, end = validity_of(value)
        if start is not None or end is not None:
            return FIT_VALID
        said = said_at(value)
        if said is None:
            return FIT_SAID_BEFORE
        if self.end is not None and said >= self.end:
            return FIT_SAID_AFTER
        if self.start is not None and said < self.start:
            return FIT_SAID_BEFORE
        return FIT_SAID_IN

    def order(
        self, memories: Iterable[T], value: Callable[[T], Mapping[str, Any]] | None = None
    ) -> list[T]:
        """The memories the window admits, best fit first (ties keep their given order, so a
        relevance order survives within a fit). ``value`` reads a memory's stored dict
        (default: the memory is the dict; ``lambda item: item.value`` for store items)."""
        read: Callable[[Any], Mapping[str, Any]] = value if value is not None else _itself
        fits = [(self.fit(read(m)), i, m) for i, m in enumerate(memories)]
        return [m for fit, _, m in sorted(fits, key=lambda f: (-f[0], f[1])) if fit > 0]

    def sql(self, column: str = "value") -> tuple[str, str, dict[str, Any]]:
        """The window over a ``jsonb`` column: a WHERE clause (:meth:`admits`), a rank
        expression (:meth:`fit`) and their parameters (``tw_start``, ``tw_end``).

        >>> from datetime import datetime, UTC
        >>> where, rank, params = TimeWindow(end=datetime(2020, 1, 1, tzinfo=UTC)).sql("i.value")
        >>> sorted(params), where.count("valid_from"), rank.startswith("CASE WHEN NOT")
        (['tw_end'], 2, True)
        """
        start = f"({column}->>'valid_from')::timestamptz"
        end = f"({column}->>'valid_to')::timestamptz"
        said = f"coalesce({column}->>'observed_at', {column}->>'created_at')::timestamptz"
        clauses, params = [], {}
        if self.end is not None:
            clauses.append(f"({start} IS NULL OR {start} < %(tw_end)s)")
            params["tw_end"] = self.end
        if self.start is not None:
            clauses.append(f"({end} IS NULL OR {end} > %(tw_start)s)")
            params["tw_start"] = self.start
        where = " AND ".join(clauses) or "TRUE"
        after = f"{said} >= %(tw_end)s" if self.end is not None else "FALSE"
        before = f"{said} < %(tw_start)s" if self.start is not None else "FALSE"
        rank = (
            f"CASE WHEN NOT ({where}) THEN 0.0"
            f" WHEN {start} IS NOT NULL OR {end} IS NOT NULL THEN {FIT_VALID}"
            f" WHEN {said} IS NULL THEN {FIT_SAID_BEFORE}"
            f" WHEN {after} THEN {FIT_SAID_AFTER}"
            f" WHEN {before} THEN {FIT_SAID_BEFORE} ELSE {FIT_SAID_IN} END"
        )
        return where, rank, params


@dataclass(frozen=True)
class QueryTime:
    """What a question says about time.

    ``window``: the span it asks about (None: no date in it; with ``as_of``, that moment).
    ``anchor``/``relation``: an event it is relative to ("before I moved to Lyon"): look the
    event up (its fact's start), then :meth:`anchored` gives the window.
    ``asks_when``: it asks for a time ("when did I start ..."): dated memories help most.
    """

    window: TimeWindow | None = None
    anchor: str | None = None
    relation: Literal["before", "after"] | None = None
    asks_when: bool = False
    phrase: str | None = None

    def anchored(self, at: datetime) -> TimeWindow:
        """The window once the anchor event's time is known."""
        return TimeWindow(end=at) if self.relation == "before" else TimeWindow(start=at)


def read_query_time(
    query: str, *, now: datetime | None = None, as_of: datetime | None = None
) -> QueryTime:
    """Read the time in ``query``: dates resolve against ``as_of`` (else now); without one,
    ``as_of`` itself is the window (the question is asked as of then).

    Free of I/O and cheap when the question has no time in it (one regular expression;
    dateparser runs only on a date phrase, cached per day).
    """
    base = as_of or now or datetime.now(UTC)
    asks_when = bool(_WHEN.search(query))
    for phrase in find_phrases(query):
        period = parse_period(phrase.text, base)
        if period is None:
            continue
        if phrase.bound == "from":
            return QueryTime(TimeWindow(start=period.start), None, None, asks_when, phrase.text)
        if phrase.bound == "to":
            return QueryTime(TimeWindow(end=period.start), None, None, asks_when, phrase.text)
        return QueryTime(TimeWindow(period.start, period.end), None, None, asks_when, phrase.text)
    anchor = _ANCHOR.search(query)
    if anchor is not None:
        rel = anchor["rel"].lower()
        relation: Literal["before", "after"] = (
            "before" if rel in ("before", "until", "till", "prior to") else "after"
        )
        window = TimeWindow.at(as_of) if as_of is not None else None
        return QueryTime(window, anchor["event"].strip(), relation, asks_when)
    window = TimeWindow.at(as_of) if as_of is not None else None
    return QueryTime(window, None, None, asks_when)


#: the time branch's tiers (:func:`time_ranked`): what the question's window says of a memory
TIER_STARTED_IN = 1.0  # it starts (or happened) inside the window
TIER_SAID_IN = 0.8  # it was said inside the window
TIER_HELD_IN = 0.6  # a closed validity that overlaps the window ("2015-2019" for "in 2017")
_ANCHOR_WORD = re.compile(r"[^\W_]{3,}")
_ANCHOR_STOP = frozenset({"the", "and", "was", "were", "did", "had", "has", "have", "our", "her"})


def _contains(window: TimeWindow, moment: datetime | None) -> bool:
    return (
        moment is not None
        and (window.start is None or moment >= window.start)
        and (window.end is None or moment < window.end)
    )


def _tier(window: TimeWindow, value: Mapping[str, Any]) -> float:
    """How the memory sits in the question's window; 0 when nothing ties it to the window (an
    open-ended fact that started long before says nothing about the window)."""
    if not window.admits(value):
        return 0.0
    start, end = validity_of(value)
    if _contains(window, start):
        return TIER_STARTED_IN
    if _contains(window, said_at(value)):
        return TIER_SAID_IN
    return TIER_HELD_IN if end is not None else 0.0


def anchor_time(event: str, facts: Mapping[K, Mapping[str, Any]]) -> datetime | None:
    """When the anchor ``event`` ("I moved to Lyon") happened, read from ``facts`` (the
    candidates the search found, best first): the start (else the moment said) of the first
    that shares the most of its words, at least half of them; None when none does."""
    words = {w.lower() for w in _ANCHOR_WORD.findall(event)} - _ANCHOR_STOP
    if not words:
        return None
    best, best_shared = None, (len(words) + 1) // 2
    for fact in facts.values():
        shared = len(words & {w.lower() for w in _ANCHOR_WORD.findall(str(fact.get("text", "")))})
        if shared > best_shared or (best is None and shared == best_shared):
            best, best_shared = fact, shared
    if best is None:
        return None
    return validity_of(best)[0] or said_at(best)


def question_window(asked: QueryTime, facts: Mapping[K, Mapping[str, Any]]) -> TimeWindow | None:
    """The window a question names: its date ("in 2022", "last month"), else its anchor's
    ("before I moved to Lyon", the event's time read from ``facts``); None for neither (an
    ``as_of`` alone is recall's own filter)."""
    if asked.phrase is not None:
        return asked.window
    if asked.anchor is not None:
        at = anchor_time(asked.anchor, facts)
        return asked.anchored(at) if at is not None else None
    return None


def time_ranked(
    window: TimeWindow | None,
    asks_when: bool,
    facts: Mapping[K, Mapping[str, Any]],
    order: Mapping[K, float],
) -> list[tuple[K, float]]:
    """Recall's time branch: the ``facts`` (keyed candidates) the question's time points at,
    best first, each with its tier; ``order`` (another branch's scores) breaks ties.

    - a ``window`` (:func:`question_window`): the facts that start in it, then those said in
      it, then those whose closed validity overlaps it;
    - else, for a "when did ..." question (``asks_when``): the facts that carry a date of
      their own (a stated validity);
    - otherwise nothing.

    >>> from datetime import datetime, UTC
    >>> asked = read_query_time("What did I do in May 2023?", now=datetime(2024, 1, 1, tzinfo=UTC))
    >>> facts = {"a": {"observed_at": "2023-05-09T00:00:00Z"},
    ...          "b": {"observed_at": "2023-06-01T00:00:00Z", "valid_from": "2023-05-08T00:00:00Z"},
    ...          "c": {"observed_at": "2023-07-01T00:00:00Z"}}
    >>> time_ranked(question_window(asked, facts), asked.asks_when, facts, {"a": 0.9, "b": 0.1})
    [('b', 1.0), ('a', 0.8)]
    """
    if window is not None:
        hits = [(key, _tier(window, fact)) for key, fact in facts.items()]
    elif asks_when:
        hits = [(key, TIER_STARTED_IN) for key, fact in facts.items() if any(validity_of(fact))]
    else:
        return []
    kept = [(key, tier) for key, tier in hits if tier > 0]
    kept.sort(key=lambda pair: (pair[1], order.get(pair[0], 0.0)), reverse=True)
    return kept
