"""What the dashboard's analytics add to ``MemoryService.stats`` (counts, growth, category
and kind distribution): the most used memories, extraction figures, the confirmation rate
and search latency percentiles.

Usage counts come from the usage records (how often inject put a memory in front of the
model, how often the answer cited it); the confirmation rate from the audit log, where the
service records every confirm and reject with ``detail={"op": "confirm" | "reject"}``;
latency from the calls timed where they run (:class:`LatencyLog`, in process, the last
1,000 calls per operation).

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.db.store_plans import run_store_plan
>>> from langmem_vault.memory.vault import MemoryVault
>>> store = InMemoryStore()
>>> _ = MemoryVault(store, user_id="u1").remember("Likes tea", source="conversation")
>>> usage = run_store_plan(store, usage_plan("u1"))
>>> usage.extracted, usage.most_used
(1, [])
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel

from langmem_vault.db.store_plans import Step, Steps, StorePlan
from langmem_vault.memory.namespaces import MemoryNamespaces
from langmem_vault.memory.recall.retrieval import scan_plan
from langmem_vault.memory.recall.usage import read_usage_plan
from langmem_vault.service.errors import InvalidInput
from langmem_vault.service.stats import StatsMixin, StatsReport

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


class Confirmations(BaseModel):
    """Confirm and reject decisions on pending facts (``rate`` None before the first)."""

    confirmed: int
    rejected: int
    rate: float | None


def usage_plan(
    user_id: str, namespaces: MemoryNamespaces | None = None, *, top: int = 10
) -> StorePlan[Usage]:
    """The ``top`` most cited (then most injected) facts of ``user_id`` and the sources."""
    if not isinstance(top, int) or not 1 <= top <= 100:
        raise InvalidInput("top", f"must be in 1..100, got {top!r}")
    ns = (namespaces or MemoryNamespaces()).resolve({"configurable": {"user_id": user_id}})
    facts = [i for i in (yield from scan_plan(ns.semantic)) if tuple(i.namespace) == ns.semantic]
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
    """The durations of the last ``size`` calls of each operation, in process.

    >>> log = LatencyLog()
    >>> for ms in (10, 20, 30, 40): log.add("search", ms / 1000)
    >>> log.summary()["search"]["p50"]
    25.0
    """

    def __init__(self, size: int = 1000) -> None:
        self.size = size
        self._samples: dict[str, deque[float]] = {}

    def add(self, operation: str, seconds: float) -> None:
        self._samples.setdefault(operation, deque(maxlen=self.size)).append(seconds * 1000.0)

    @contextmanager
    def timed(self, operation: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(operation, time.perf_counter() - start)

    def summary(self) -> dict[str, dict[str, float | int | None]]:
        """``{operation: {"count", "p50", "p95"}}`` in milliseconds."""
        out: dict[str, dict[str, float | int | None]] = {}
        for operation, samples in self._samples.items():
            ordered = sorted(samples)
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
    latency_ms: dict[str, dict[str, float | int | None]]


class AnalyticsMixin(StatsMixin):
    """Analytics of :class:`~langmem_vault.service.MemoryService`."""

    def _analytics_steps(
        self, user_id: str, days: int, top: int, latency: LatencyLog | None
    ) -> Steps[Analytics]:
        stats = yield from self._stats_steps(user_id, days)
        usage = yield Step.store(self.store, usage_plan(user_id, self.namespaces, top=top))
        records: list[Any] = []
        audit = self.audit
        if audit is not None:
            query = {"actions": ["edit"], "limit": CONFIRMATION_WINDOW}
            records = yield Step.same(lambda: audit.query(user_id, **query))
        return Analytics(
            stats=stats,
            usage=usage,
            confirmations=confirmations(records),
            latency_ms=latency.summary() if latency is not None else {},
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
