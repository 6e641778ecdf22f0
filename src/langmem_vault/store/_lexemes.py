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
from dataclasses import dataclass
from typing import Any

from langmem_vault.store._scopes import ScopeSizes

# Frequencies are clamped so one lexeme in every row still weighs a little, and one never
# seen does not weigh infinitely.
_MIN_FREQ, _MAX_FREQ, _UNIFORM_FREQ = 1e-6, 0.99, 0.01
STATS_MAX_AGE_SECONDS = 60.0


@dataclass(frozen=True)
class LexemeStats:
    """The share of rows containing each common lexeme, as the one text the search statement
    looks lexemes up in (``_keyword_sql.LEXEME_FREQ``: chr(1) lexeme chr(2) frequency ...
    chr(1); built by the statistics read itself, ``_sql.lexeme_stats``), the smallest of those
    shares (``rarest``; None when none is listed) and the table's row estimate."""

    freqs: str = "\x01"
    rows: float = 0.0
    rarest: float | None = None

    @classmethod
    def of(cls, freqs: dict[str, float], rows: float) -> LexemeStats:
        """The statistics of lexemes ``freqs`` (lexeme -> share of rows)."""
        text = "\x01" + "".join(f"{lex}\x02{freq!r}\x01" for lex, freq in freqs.items())
        return cls(text, rows, min(freqs.values()) if freqs else None)

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
    long as the store is open, whether its items are partitioned (None: not known yet;
    learned by its first newest-first read, again after ``setup``)."""

    def __init__(self, max_age: float = STATS_MAX_AGE_SECONDS) -> None:
        self.max_age = max_age
        self.scopes = ScopeSizes(max_age)
        self.partitioned: bool | None = None
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
