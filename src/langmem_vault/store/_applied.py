"""Whether a store's online migrations (db/_online.py) are applied, as its statements learn
it: an online migration finishes after setup()'s transaction, possibly in another process,
so a statement that relies on its result asks ``vault_migrations`` (one more round trip)
until the answer is yes, and never again after."""

from __future__ import annotations

from langmem_vault.db._runner import Plan, Query

__all__ = ["Applied", "OnlineState"]

_READY = "SELECT EXISTS (SELECT FROM {s}.vault_migrations WHERE track = %s AND version = %s)"


class Applied:
    """One migration of a track, applied once known.

    >>> Applied("store", 8).ready
    False
    """

    def __init__(self, track: str, version: int) -> None:
        self.track, self.version = track, version
        self.ready = False

    def ask(self, schema: str) -> Plan[bool]:
        """Whether it is applied: asked of the database until it is."""
        if not self.ready:
            (row,) = yield Query(_READY.format(s=schema), (self.track, self.version))
            self.ready = bool(row["exists"])
        return self.ready


class OnlineState:
    """What a store's statements wait for: store/0008's page time column (pages order by it,
    store/_page_plan.py), store/0009's ranking index (a namespace's search ranks its
    candidates from it, store/_search_sql.py), store/0010's status index (a count reads
    only the rows it holds, store/_page_plan.py) and store/0011's (a count reads only the
    rows whose status depends on the time)."""

    def __init__(self) -> None:
        self.page_at = Applied("store", 8)
        self.rank_index = Applied("store", 9)
        self.status_index = Applied("store", 10)
        self.status_counts = Applied("store", 11)
