"""What the dashboard's analytics add to ``MemoryService.stats`` (counts, growth, category
and kind distribution): the most used memories, extraction figures, the confirmation rate
and search latency percentiles.

Usage counts come from the usage records (how often inject put a memory in front of the
model, how often the answer cited it); the confirmation rate from the audit log, where the
service records every confirm and reject with ``detail={"op": "confirm" | "reject"}``;
latency from the calls timed where they run: the surface's own (:class:`LatencyLog`, in
process, the last 1,000 calls per operation) and the memory stages', inject's included,
from the histograms the graph process writes (``memory._recall.accounting``), with the
tokens and cost of each day's memory model calls.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.db._steps import run_steps
>>> from langmem_vault.memory._vault import MemoryVault
>>> store = InMemoryStore()
>>> _ = MemoryVault(store, user_id="u1").remember("Likes tea", source="conversation")
>>> usage = run_steps(usage_plan("u1"), store)
>>> usage.extracted, usage.most_used
(1, [])
"""

from __future__ import annotations

import statistics
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import BaseModel

from langmem_vault.db._steps import Call, Steps, Within
from langmem_vault.db._store_plans import StorePlan
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._recall.accounting import Accounting
from langmem_vault.memory._recall.retrieval import scan_plan
from langmem_vault.memory._recall.usage import read_usage_plan
from langmem_vault.service._accounting import AccountingMixin
from langmem_vault.service._errors import InvalidInput
from langmem_vault.service._stats import StatsReport

__all__ = [
    "Analytics",
    "AnalyticsMixin",
    "Confirmations",
    "LatencyLog",
    "Usage",
    "UsedMemory",
    "confirmations",
    "usage_plan",
]

#: how many of the latest edit events the confirmation rate is computed over
CONFIRMATION_WINDOW = 1000


class UsedMemory(BaseModel):
    """A fact with how many times it was injected and cited."""

    key: str
    text: str
    category: str
    injected: int
    cited: int


class Usage(BaseModel):
    """The most used facts, and how many facts came from conversations or by hand."""

    most_used: list[UsedMemory]
    extracted: int
    manual: int
    imported: int
    #: the figures come from the ``max_rows`` most recently updated facts, and the user holds
    #: more (show "N+")
    capped: bool = False


class Confirmations(BaseModel):
    """Confirm and reject decisions on pending facts (``rate`` None before the first)."""

    confirmed: int
    rejected: int
    rate: float | None


def usage_plan(
    user_id: str,
    namespaces: MemoryNamespaces | None = None,
    *,
    top: int = 10,
    max_rows: int | None = None,
) -> StorePlan[Usage]:
    """The ``top`` most cited (then most injected) facts of ``user_id`` and the sources
    (among the ``max_rows`` most recently updated facts, when given: ``capped`` when the
    user holds more)."""
    if not isinstance(top, int) or not 1 <= top <= 100:
        raise InvalidInput("top", f"must be in 1..100, got {top!r}")
    ns = (namespaces or MemoryNamespaces()).resolve({"configurable": {"user_id": user_id}})
    scanned = yield from scan_plan(ns.semantic, limit=None if max_rows is None else max_rows + 1)
    capped = max_rows is not None and len(scanned) > max_rows
    facts = [i for i in scanned[:max_rows] if tuple(i.namespace) == ns.semantic]
    usage = yield from read_usage_plan((ns.semantic, i.key) for i in facts)
    sources = {"conversation": 0, "manual": 0, "import": 0}
    used: list[UsedMemory] = []
    for item in facts:
        value = item.value
        source = str(value.get("source", "manual"))
        sources[source] = sources.get(source, 0) + 1
        record = usage.get((ns.semantic, item.key)) or {}
        injected = int(record.get("access_count", 0)) + int(value.get("access_count") or 0)
        cited = int(record.get("citations", 0))
        if injected or cited:
            used.append(
                UsedMemory(
                    key=item.key,
                    # Sealed (private) text is never shown in analytics.
                    text="(private)" if "enc" in value else str(value.get("text", "")),
                    category=str(value.get("category", "general")),
                    injected=injected,
                    cited=cited,
                )
            )
    used.sort(key=lambda m: (m.cited, m.injected, m.key), reverse=True)
    return Usage(
        most_used=used[:top],
        extracted=sources["conversation"],
        manual=sources["manual"],
        imported=sources["import"],
        capped=capped,
    )


def confirmations(records: Iterable[Any]) -> Confirmations:
    """Count the confirm and reject decisions among audit records (``AuditRecord``).

    >>> from types import SimpleNamespace as R
    >>> confirmations([R(detail={"op": "confirm"}), R(detail={"op": "reject"}), R(detail={})])
    Confirmations(confirmed=1, rejected=1, rate=0.5)
    """
    ops = [str((getattr(r, "detail", None) or {}).get("op", "")) for r in records]
    confirmed, rejected = ops.count("confirm"), ops.count("reject")
    decided = confirmed + rejected
    return Confirmations(
        confirmed=confirmed,
        rejected=rejected,
        rate=round(confirmed / decided, 4) if decided else None,
    )


class LatencyLog:
    """The durations of the last ``size`` calls of each operation, in process: of all users,
    and of each of the last ``users`` users apart (a user is shown only their own).

    >>> log = LatencyLog()
    >>> for ms in (10, 20, 30, 40): log.add("search", ms / 1000, user_id="alice")
    >>> log.add("search", 1.0, user_id="bob")
    >>> log.summary()["search"]["count"], log.summary("alice")["search"]["p50"]
    (5, 25.0)
    >>> log.summary("carol")
    {}
    """

    def __init__(self, size: int = 1000, *, users: int = 1000) -> None:
        self.size = size
        self.users = users
        self._samples: dict[str, deque[float]] = {}
        self._by_user: OrderedDict[str, dict[str, deque[float]]] = OrderedDict()

    def add(self, operation: str, seconds: float, *, user_id: str | None = None) -> None:
        ms = seconds * 1000.0
        self._samples.setdefault(operation, deque(maxlen=self.size)).append(ms)
        if user_id is None:
            return
        mine = self._by_user.pop(user_id, None) or {}
        self._by_user[user_id] = mine  # most recent last; the least recent goes first
        while len(self._by_user) > self.users:
            self._by_user.popitem(last=False)
        mine.setdefault(operation, deque(maxlen=self.size)).append(ms)

    @contextmanager
    def timed(self, operation: str, *, user_id: str | None = None) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(operation, time.perf_counter() - start, user_id=user_id)

    def summary(self, user_id: str | None = None) -> dict[str, dict[str, float | int | None]]:
        """``{operation: {"count", "p50", "p95"}}`` in milliseconds: of ``user_id``'s calls,
        or of everyone's when None."""
        samples = self._samples if user_id is None else self._by_user.get(user_id, {})
        out: dict[str, dict[str, float | int | None]] = {}
        for operation, found in samples.items():
            ordered = sorted(found)
            p50 = statistics.median(ordered)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            out[operation] = {"count": len(ordered), "p50": round(p50, 2), "p95": round(p95, 2)}
        return out


class Analytics(BaseModel):
    """Everything the analytics page shows: the service's stats plus usage, confirmations
    and latency."""

    stats: StatsReport
    usage: Usage
    confirmations: Confirmations
    #: milliseconds per operation: the surface's own calls (search...) timed in its process,
    #: and the memory stages (inject, extract...) timed where they ran
    latency_ms: dict[str, dict[str, float | int | None]]
    #: whose calls ``latency_ms`` counts: the user's own, or everyone's (an admin's view)
    latency_scope: Literal["user", "all"] = "user"
    #: tokens per day and operation, and their cost where priced
    accounting: Accounting | None = None


class AnalyticsMixin(AccountingMixin):
    """Analytics of :class:`~langmem_vault.service.MemoryService`."""

    def _analytics_steps(
        self, user_id: str, days: int, top: int, latency: LatencyLog | None
    ) -> Steps[Analytics]:
        stats = yield from self._stats_steps(user_id, days)
        plan = usage_plan(user_id, self.namespaces, top=top, max_rows=self.max_rows)
        usage = yield Within(self.store, plan)
        records: list[Any] = []
        # a user sees the latency of their own calls; only an admin sees everyone's
        scope_user = None if self.identity.is_admin else user_id
        audit = self.audit
        if audit is not None:
            query = {"actions": ["edit"], "limit": CONFIRMATION_WINDOW}
            records = yield Call.same(lambda: audit.query(user_id, **query))
        # tokens are the user's; stage latency has the scope of the surface's latency
        accounting = yield from self._accounting_steps(user_id, days)
        stages = accounting
        if scope_user is None:
            stages = yield from self._accounting_steps(None, days)
        surface = latency.summary(scope_user) if latency is not None else {}
        return Analytics(
            stats=stats,
            usage=usage,
            confirmations=confirmations(records),
            latency_ms={**stages.latency_ms, **surface},
            latency_scope="all" if scope_user is None else "user",
            accounting=accounting,
        )

    def analytics(
        self, user_id: str, *, days: int = 30, top: int = 10, latency: LatencyLog | None = None
    ) -> Analytics:
        """One user's analytics (``latency``: where the surface timed its calls)."""
        return self._run(self._analytics_steps(self._authorize(user_id), days, top, latency))

    async def aanalytics(
        self, user_id: str, *, days: int = 30, top: int = 10, latency: LatencyLog | None = None
    ) -> Analytics:
        """Async :meth:`analytics`."""
        steps = self._analytics_steps(self._authorize(user_id), days, top, latency)
        return await self._arun(steps)
