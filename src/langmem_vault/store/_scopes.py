"""Scope sizes: whether a scoped search's namespace or filter matches few items, remembered.

A search scoped by a namespace prefix or a filter scores every match exactly when there are
at most ``exact_scan_rows`` of them, else it asks the HNSW index (see
``_search_sql.search_ranked``).
Counting to that bound costs up to a few milliseconds per search (7 ms for a filter matching
5% of 100k items, 0.4 ms for a prefix covering them all), so the verdict of each scope is
kept for a minute, as the keyword statistics are, and later searches of the same scope run
only the branch it picks, in a shorter statement that is quicker to plan.

A stale verdict costs speed, never results: a scope that grew past the bound is still
scored exactly, and one that shrank is searched through the index, whose iterative scan
still fills the page (and the plan scores the rest exactly if it does not).

>>> sizes = ScopeSizes()
>>> sizes.put(("namespace", "users.u1", ""), small=True)
>>> sizes.get(("namespace", "users.u1", ""))
True
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

SCOPE_MAX_AGE_SECONDS = 60.0
MAX_SCOPES = 1024

#: (kind, namespace prefix, filter): one scope of a search
ScopeKey = tuple[str, str, str]


class ScopeSizes:
    """The latest small/large verdict of up to ``max_scopes`` scopes, each for ``max_age`` s."""

    def __init__(
        self, max_age: float = SCOPE_MAX_AGE_SECONDS, max_scopes: int = MAX_SCOPES
    ) -> None:
        self.max_age = max_age
        self.max_scopes = max_scopes
        self._verdicts: OrderedDict[ScopeKey, tuple[bool, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: ScopeKey) -> bool | None:
        """Whether the scope was small when last counted; None if unknown or too old."""
        with self._lock:
            found = self._verdicts.get(key)
            if found is None or time.monotonic() - found[1] >= self.max_age:
                return None
            return found[0]

    def put(self, key: ScopeKey, *, small: bool) -> None:
        with self._lock:
            self._verdicts[key] = (small, time.monotonic())
            self._verdicts.move_to_end(key)
            while len(self._verdicts) > self.max_scopes:
                self._verdicts.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._verdicts.clear()
