"""Keyword weights: how rare each of a query's lexemes is in the store.

Frequencies come from Postgres's own statistics (``pg_stats.most_common_elems`` of the
full-text column, kept by ANALYZE and autovacuum, and by a search that finds them stale after
a bulk load: ``plans._fresh_stats``), so writes pay nothing. They are read at most
once a minute per store and kept here, so a search does not join the catalogs. A lexeme missing
from the statistics is rarer than every listed one; with no statistics yet (a new or small
table) every lexeme weighs the same. A lexeme weighs its inverse document frequency,
``-ln(freq)``, and is *rare*, worth a keyword lookup, when estimated to occur in at most
``common_rows`` rows (a common one matches too many rows to rank quickly and says little).
The search statement computes both from :meth:`LexemeStats.params`
(``_keyword_sql._QUERY_LEXEMES``).

>>> stats = LexemeStats.of({"meet": 0.5}, rows=1000)
>>> stats.params()["st_missing"]  # a lexeme not listed: half the rarest listed one
0.25
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from langmem_vault.store._routes import PartitionRoutes
from langmem_vault.store._scopes import ScopeSizes

# Frequencies are clamped so one lexeme in every row still weighs a little, and one never
# seen does not weigh infinitely.
_MIN_FREQ, _MAX_FREQ, _UNIFORM_FREQ = 1e-6, 0.99, 0.01
STATS_MAX_AGE_SECONDS = 60.0
# A namespace is taken as small without counting it when the statistics put it at no more
# than this share of the bound: their sample's error is a few percent, and the table may
# grow up to twice what they saw before they are read again (_sql.lexeme_stats's staleness).
_SMALL_MARGIN = 0.5


@dataclass(frozen=True)
class LexemeStats:
    """The share of rows containing each common lexeme, as the one text the search statement
    looks lexemes up in (``_keyword_sql.LEXEME_FREQ``: chr(1) lexeme chr(2) frequency ...
    chr(1); built by the statistics read itself, ``_sql.lexeme_stats``), the smallest of those
    shares (``rarest``; None when none is listed) and the table's row estimate."""

    freqs: str = "\x01"
    rows: float = 0.0
    rarest: float | None = None
    #: the most common namespaces, sorted, and their shares of the rows (pg_stats of the
    #: prefix column); ``prefix_rest``, the share of every other row; None: never analyzed
    prefixes: tuple[str, ...] = ()
    prefix_freqs: tuple[float, ...] = ()
    prefix_rest: float | None = None

    @classmethod
    def of(cls, freqs: dict[str, float], rows: float) -> LexemeStats:
        """The statistics of lexemes ``freqs`` (lexeme -> share of rows)."""
        text = "\x01" + "".join(f"{lex}\x02{freq!r}\x01" for lex, freq in freqs.items())
        return cls(text, rows, min(freqs.values()) if freqs else None)

    def namespace_rows(self, ns: str) -> float | None:
        """At most how many rows lie in namespace ``ns`` and under it, by the statistics: the
        listed shares of it and its sub-namespaces, and every unlisted row (any of them may
        lie under it); None when the namespaces were never analyzed.

        >>> stats = LexemeStats(rows=1000, prefixes=("a.b", "a.b.c", "a.bc"),
        ...                     prefix_freqs=(0.5, 0.25, 0.125), prefix_rest=0.125)
        >>> stats.namespace_rows("a.b")
        875.0
        """
        if self.prefix_rest is None:
            return None
        start, end = bisect_left(self.prefixes, ns), bisect_left(self.prefixes, ns + "/")
        listed = sum(
            freq
            for name, freq in zip(
                self.prefixes[start:end], self.prefix_freqs[start:end], strict=True
            )
            if name == ns or name.startswith(ns + ".")
        )
        return (listed + self.prefix_rest) * self.rows

    def small_namespace(self, ns: str, bound: int) -> bool | None:
        """True when the statistics say namespace ``ns`` holds well under ``bound`` rows (a
        scope its search scores exactly: ``scopes``), else None (count it). Never False: a
        small namespace taken as large would be searched through the HNSW index, whose
        answers may differ; a large one taken as small is scored exactly (same answers as
        the index's or better), only slower."""
        rows = self.namespace_rows(ns)
        return True if rows is not None and rows <= bound * _SMALL_MARGIN else None

    def params(self) -> dict[str, Any]:
        """The statistics as parameters of the search statement, which weighs the query's
        lexemes itself (``_keyword_sql._QUERY_LEXEMES``): a lexeme's frequency is its listed
        one, else half the smallest listed one (rarer than every listed lexeme), else, with no
        statistics yet, ``_UNIFORM_FREQ``; then clamped to [_MIN_FREQ, _MAX_FREQ]."""
        missing = self.rarest / 2 if self.rarest is not None else _UNIFORM_FREQ
        return {
            "st_freqs": self.freqs,
            "st_missing": missing,
            "st_rows": self.rows,
            "st_min_freq": _MIN_FREQ,
            "st_max_freq": _MAX_FREQ,
        }


class StatsCache:
    """What one store knows about its data for a minute: the latest :class:`LexemeStats`,
    refreshed when older, and its searches' scope sizes (:class:`ScopeSizes`); and, for as
    long as the store lives, its tenants' partitions (:class:`PartitionRoutes`)."""

    def __init__(self, max_age: float = STATS_MAX_AGE_SECONDS) -> None:
        self.max_age = max_age
        self.scopes = ScopeSizes(max_age)
        self.routes = PartitionRoutes()
        self._stats: LexemeStats | None = None
        self._at = 0.0
        self._lock = threading.Lock()

    def get(self) -> LexemeStats | None:
        with self._lock:
            fresh = self._stats is not None and time.monotonic() - self._at < self.max_age
            return self._stats if fresh else None

    def put(self, stats: LexemeStats) -> None:
        with self._lock:
            self._stats, self._at = stats, time.monotonic()

    def clear(self) -> None:
        with self._lock:
            self._stats = None
        self.scopes.clear()
