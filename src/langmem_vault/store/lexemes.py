"""Keyword weights: how rare each of a query's lexemes is in the store.

Frequencies come from Postgres's own statistics (``pg_stats.most_common_elems`` of the
full-text column, kept by ANALYZE and autovacuum), so writes pay nothing. They are read at most
once a minute per store and kept here, so a search does not join the catalogs. A lexeme missing
from the statistics is rarer than every listed one; with no statistics yet (a new or small
table) every lexeme weighs the same.

>>> stats = LexemeStats({"meet": 0.5}, rows=1000)
>>> [round(w, 2) for w in stats.weights(["meet", "zeppelin"])]
[0.69, 1.39]
>>> stats.rare(["meet", "zeppelin"], common_rows=100)
['zeppelin']
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

# Frequencies are clamped so one lexeme in every row still weighs a little, and one never
# seen does not weigh infinitely.
_MIN_FREQ, _MAX_FREQ, _UNIFORM_FREQ = 1e-6, 0.99, 0.01
STATS_MAX_AGE_SECONDS = 60.0


@dataclass(frozen=True)
class LexemeStats:
    """Share of rows containing each common lexeme, and the table's row estimate."""

    freqs: dict[str, float] = field(default_factory=dict)
    rows: float = 0.0

    def _freq(self, lexeme: str) -> float:
        if lexeme in self.freqs:
            freq = self.freqs[lexeme]
        elif self.freqs:
            freq = min(self.freqs.values()) / 2  # rarer than every listed lexeme
        else:
            freq = _UNIFORM_FREQ
        return min(max(freq, _MIN_FREQ), _MAX_FREQ)

    def weights(self, lexemes: Sequence[str]) -> list[float]:
        """Inverse document frequency, ``-ln(freq)``, of each lexeme."""
        return [-math.log(self._freq(lexeme)) for lexeme in lexemes]

    def rare(self, lexemes: Sequence[str], *, common_rows: int) -> list[str]:
        """The lexemes estimated to occur in at most ``common_rows`` rows: the ones worth a
        keyword lookup (a common one matches too many rows to rank quickly and says little)."""
        return [lex for lex in lexemes if self.freqs.get(lex, 0.0) * self.rows <= common_rows]


class StatsCache:
    """The latest :class:`LexemeStats` of one store, refreshed when older than a minute."""

    def __init__(self, max_age: float = STATS_MAX_AGE_SECONDS) -> None:
        self.max_age = max_age
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


def tsquery_text(lexemes: Sequence[str]) -> str | None:
    """An OR tsquery over already-normalised lexemes (quoted, so none is re-parsed)."""
    if not lexemes:
        return None
    quoted = ("'" + lex.replace("\\", "\\\\").replace("'", "''") + "'" for lex in lexemes)
    return " | ".join(quoted)
