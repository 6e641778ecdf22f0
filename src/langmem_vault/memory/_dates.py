"""Dates in what people say: find the time phrases of a statement and resolve them against
when it was said (``observed_at``), offline, with :mod:`dateparser` (loaded on first use).

A regular expression finds the phrases ("since 2019", "two years ago", "in May 2023",
"2021-2023", "last Tuesday"); dateparser resolves each against the moment it was said, with
its granularity (a year, a month, a day), so "in 2021" starts on 1 January 2021 and "last
month" on the first of that month. A number that is not a date ("when I was 12") is never read
as one.

>>> from datetime import datetime, UTC
>>> said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
>>> statement_validity("I moved to Lyon in 2021", said).valid_from.isoformat()
'2021-01-01T00:00:00+00:00'
>>> statement_validity("I've played chess since May 2019", said).valid_from.date()
datetime.date(2019, 5, 1)
>>> statement_validity("I lived in Porto from 2015 to 2019", said).valid_to.year
2019
>>> statement_validity("I started a new job two years ago", said).valid_from.date()
datetime.date(2021, 1, 1)
>>> statement_validity("I learnt to swim when I was 12", said)
Validity(valid_from=None, valid_to=None)
>>> resolve_date("last month", said).isoformat()
'2023-04-01T00:00:00+00:00'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any, Literal, NamedTuple

__all__ = [
    "Period",
    "TimePhrase",
    "Validity",
    "find_phrases",
    "parse_period",
    "resolve_date",
    "statement_validity",
    "without_dates",
]

Granularity = Literal["year", "month", "week", "day"]
Bound = Literal["from", "to", "at"]

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_YEAR = r"(?:19|20)\d{2}"
_COUNT = (
    r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"a couple of|a few|several)"
)
_UNIT = r"(?:day|week|month|year)s?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
#: one date: absolute (a day, a month, a year, ISO) or relative to when it was said
_DATE = (
    rf"(?:{_YEAR}-\d{{2}}(?:-\d{{2}})?"
    rf"|(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}\.?(?:,?\s+{_YEAR})?"
    rf"|{_MONTH}\.?(?:\s+{_DAY})?(?:,?\s+{_YEAR})?"
    rf"|{_YEAR}"
    r"|yesterday|today|tonight"
    rf"|(?:last|next|this|past|coming)\s+(?:week|month|year|weekend|{_WEEKDAY})"
    rf"|{_COUNT}\s+{_UNIT}\s+ago"
    rf"|(?:on\s+){_WEEKDAY})"
)
_FROM = r"(?:ever\s+since|since|after|from|starting(?:\s+(?:in|on|from))?|as\s+of|beginning)"
_TO = r"(?:until|till|til|up\s+to|through|to|and)"
_UNTIL = r"(?:until|till|til|up\s+to|through|before)"
_PHRASES = re.compile(
    rf"\b(?:between\s+|from\s+)?(?P<a>{_DATE})\s*(?:-|\u2013|\u2014|{_TO}\s)\s*(?P<b>{_DATE})\b"
    rf"|\b(?P<from>{_FROM})\s+(?:(?:in|on)\s+)?(?P<f>{_DATE})\b"
    rf"|\b(?P<until>{_UNTIL})\s+(?:(?:in|on)\s+)?(?P<u>{_DATE})\b"
    rf"|\b(?:for\s+(?:the\s+(?:last|past)\s+)?(?P<for>{_COUNT}\s+{_UNIT}))\b"
    rf"|\b(?P<at>{_DATE})\b",
    re.IGNORECASE,
)
# A word every time phrase holds (a digit, a month, a weekday, a relative word).
_HINT = re.compile(
    rf"\d|\b(?:{_MONTH}|{_WEEKDAY}|{_UNIT}|yesterday|today|tonight|last|next|this|past|coming)\b",
    re.IGNORECASE,
)
# A modal "may" or the verb "march" is no month: a month word needs a capital or a number.
_LOWER_MONTH_WORD = re.compile(r"^(?:may|march|sat|sun|jan|mar|dec)$")
_PREPOSITION = re.compile(r"^\s*(?:in|on|since|from|until|during)\s+", re.IGNORECASE)
_WORD_COUNTS = {"a couple of": "2", "a few": "3", "several": "3"}


class Validity(NamedTuple):
    """When a statement holds in the world; None where it does not say."""

    valid_from: datetime | None
    valid_to: datetime | None


@dataclass(frozen=True)
class Period:
    """A resolved date: its first moment and its granularity (``end`` is the next period's
    first moment)."""

    start: datetime
    granularity: Granularity

    @property
    def end(self) -> datetime:
        """The first moment after the period."""
        if self.granularity == "year":
            return self.start.replace(year=self.start.year + 1)
        if self.granularity == "month":
            year, month = divmod(self.start.month, 12)
            return self.start.replace(year=self.start.year + year, month=month + 1)
        return self.start + timedelta(days=7 if self.granularity == "week" else 1)


@dataclass(frozen=True)
class TimePhrase:
    """One time phrase of a text: ``bound`` says what it marks ("from" a start, "to" an end,
    "at" a moment or period), ``text`` the date phrase itself, ``span`` where it sits."""

    bound: Bound
    text: str
    span: tuple[int, int]


def _month_word_ok(text: str) -> bool:
    # "I may go", "we march on" are no dates; "May 2023", "8 May", "may 8" are.
    word = text.strip().split()[0] if text.strip() else ""
    if not _LOWER_MONTH_WORD.match(word) or word[:1].isupper():
        return True
    return bool(re.search(r"\d", text))


_ABSOLUTE = re.compile(r"^(?:the\s+)?(?:\d|" + _MONTH + r"\b)", re.IGNORECASE)
_MARKER = re.compile(r"\b(?:in|on|during|around|by|of|back)\s+$", re.IGNORECASE)


def _when_marked(text: str, match: re.Match[str]) -> bool:
    # A bare calendar date is what the statement is about ("my birthday is June 3rd"), not
    # when it holds; "in 2021", "on 8 May" and relative dates ("yesterday") say when.
    if not _ABSOLUTE.match(match["at"]):
        return True
    return bool(_MARKER.search(text, 0, match.start()))


def find_phrases(text: str) -> Iterator[TimePhrase]:
    """The time phrases of ``text`` in order, each with the bound it marks.

    >>> [(p.bound, p.text) for p in find_phrases("I lived in Porto 2015-2019, then Lyon")]
    [('from', '2015'), ('to', '2019')]
    >>> [(p.bound, p.text) for p in find_phrases("I may move next month")]
    [('at', 'next month')]
    >>> [(p.bound, p.text) for p in find_phrases("My birthday is June 3rd")]
    []
    """
    if not _HINT.search(text):
        return  # most texts say nothing of time: one cheap scan instead of the full pattern
    for match in _PHRASES.finditer(text):
        span = match.span()
        if match["a"]:
            if _month_word_ok(match["a"]) and _month_word_ok(match["b"]):
                yield TimePhrase("from", match["a"], span)
                yield TimePhrase("to", match["b"], span)
        elif match["f"]:
            if _month_word_ok(match["f"]):
                yield TimePhrase("from", match["f"], span)
        elif match["u"]:
            if _month_word_ok(match["u"]):
                yield TimePhrase("to", match["u"], span)
        elif match["for"]:
            yield TimePhrase("from", f"{match['for']} ago", span)
        elif _month_word_ok(match["at"]) and _when_marked(text, match):
            yield TimePhrase("at", match["at"], span)


@lru_cache(maxsize=1)
def _parser_class() -> Any:
    # dateparser takes about 0.1 s to import and its first parse loads its English data:
    # only a text with a time phrase pays for it.
    from dateparser.date import DateDataParser

    return DateDataParser


_ISO = re.compile(r"^\s*(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?\s*$")


@lru_cache(maxsize=4096)
def _parse(phrase: str, base: datetime, prefer: str) -> Period | None:
    iso = _ISO.match(phrase)
    if iso:  # a model's answer ("2021", "2021-05", "2021-05-08"): no parser needed
        year, month, mday = (int(g) if g else None for g in iso.groups())
        try:
            start = datetime(year or 1, month or 1, mday or 1, tzinfo=UTC)
        except ValueError:
            return None
        return Period(start, "day" if mday else "month" if month else "year")
    text = " ".join(phrase.lower().split())
    text = re.sub(r"^(?:the|on)\s+", "", text)
    for words, digits in _WORD_COUNTS.items():
        text = text.replace(words, digits)
    settings = {
        "RELATIVE_BASE": base.replace(tzinfo=None),
        "PREFER_DATES_FROM": prefer,
        "PREFER_DAY_OF_MONTH": "first",
        "PREFER_MONTH_OF_YEAR": "first",
        "RETURN_AS_TIMEZONE_AWARE": False,
        "TIMEZONE": "UTC",
        "TO_TIMEZONE": "UTC",
        "STRICT_PARSING": False,
    }
    found = _parser_class()(languages=["en"], settings=settings).get_date_data(text)
    if found.date_obj is None:
        return None
    granularity: Granularity = found.period if found.period in ("year", "month", "week") else "day"
    day: date = found.date_obj.date()
    if granularity == "year":
        day = day.replace(month=1, day=1)
    elif granularity == "month":
        day = day.replace(day=1)
    return Period(datetime(day.year, day.month, day.day, tzinfo=UTC), granularity)


def parse_period(
    phrase: str, base: datetime, *, prefer: Literal["past", "future", "current_period"] = "past"
) -> Period | None:
    """``phrase`` resolved against ``base`` (when it was said), or None when it is no date.

    ``prefer`` settles what the phrase leaves open ("Tuesday": the last one, by default).

    >>> from datetime import datetime, UTC
    >>> p = parse_period("in May 2023", datetime(2024, 1, 2, tzinfo=UTC))
    >>> p.start.date(), p.granularity, p.end.date()
    (datetime.date(2023, 5, 1), 'month', datetime.date(2023, 6, 1))
    """
    if not phrase.strip() or len(phrase) > 80:
        return None
    moment = base if base.tzinfo else base.replace(tzinfo=UTC)
    # The cache key is the day: a date phrase never resolves to a finer time.
    day = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    return _parse(_PREPOSITION.sub("", phrase).strip(), day, prefer)


def resolve_date(value: str | datetime | None, observed_at: datetime) -> datetime | None:
    """A date a model or a pattern gave (ISO, or a phrase such as "last year"), as the first
    moment of its period; None when it is empty or no date.

    >>> from datetime import datetime, UTC
    >>> resolve_date("2021-05", datetime(2024, 1, 1, tzinfo=UTC)).date()
    datetime.date(2021, 5, 1)
    >>> resolve_date("two years ago", datetime(2024, 3, 1, tzinfo=UTC)).year
    2022
    >>> resolve_date("soon-ish", datetime(2024, 1, 1, tzinfo=UTC)) is None
    True
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = _PREPOSITION.sub("", str(value))
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        period = parse_period(text, observed_at)
        return period.start if period else None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def statement_validity(text: str, observed_at: datetime) -> Validity:
    """When the statement ``text``, said at ``observed_at``, holds: a date it starts from
    ("since 2019", "in 2021", "two years ago", "for 3 years"), a date it ends at ("until
    2020"), or both ("2015-2019"); None where it says nothing.

    The first phrase of each kind counts; a period's first moment is the bound.
    """
    start: datetime | None = None
    end: datetime | None = None
    for phrase in find_phrases(text):
        period = parse_period(phrase.text, observed_at)
        if period is None:
            continue
        if phrase.bound in ("from", "at") and start is None:
            start = period.start
        elif phrase.bound == "to" and end is None:
            end = period.start
    if start is not None and end is not None and end < start:
        end = None  # "since 2021 until last year" said in 2021: no interval, keep the start
    return Validity(start, end)


_LEAD = re.compile(r"(?:\s*,)?\s*\b(?:back\s+in|in|on|during|at)?\s*$", re.IGNORECASE)


def without_dates(text: str) -> str:
    """``text`` without its time phrases (they live in ``valid_from``/``valid_to`` instead).

    >>> without_dates("User lives in Lyon in 2021")
    'User lives in Lyon'
    >>> without_dates("User plays chess since May 2019, on Sundays")
    'User plays chess, on Sundays'
    """
    out, last = [], 0
    for begin, end in dict.fromkeys(p.span for p in find_phrases(text)):
        lead = _LEAD.search(text, last, begin)
        out.append(text[last : lead.start() if lead else begin])
        last = end
    out.append(text[last:])
    return " ".join("".join(out).split()).strip(" ,")
