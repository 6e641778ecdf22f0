"""Counts, growth per day and the category and kind distribution, per user or for everyone.

Computed from the same records the listings show (:mod:`langmem_vault.service._records`), so
a count and a listing never disagree.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, timedelta

from pydantic import BaseModel

from langmem_vault.db._steps import Steps, Within
from langmem_vault.memory._models import utcnow
from langmem_vault.service._errors import InvalidInput
from langmem_vault.service._memories import MemoriesMixin
from langmem_vault.service._records import MemoryRecord

__all__ = ["DayCount", "StatsMixin", "StatsReport"]

MAX_DAYS = 3660


class DayCount(BaseModel):
    """How many memories were created on one day (UTC)."""

    day: date
    added: int
    total: int


class StatsReport(BaseModel):
    """Counts for one user (``user_id``) or every user (``user_id`` None)."""

    user_id: str | None
    users: int
    total: int
    by_kind: dict[str, int]
    by_status: dict[str, int]
    #: current (active) facts per category
    by_category: dict[str, int]
    pending: int
    this_week: int
    this_month: int
    #: one row per day of the last ``days`` days, oldest first (``total``: running count)
    growth: list[DayCount]
    #: a user holds more memories than the service's ``max_rows``: the counts cover only
    #: that many of their most recently updated
    capped: bool = False


def build_stats(
    user_id: str | None,
    users: int,
    records: list[MemoryRecord],
    days: int,
    now: datetime,
    *,
    capped: bool = False,
) -> StatsReport:
    """The report of ``records`` (pure: no I/O)."""
    created = [r.created_at for r in records if r.created_at is not None]
    first = (now - timedelta(days=days - 1)).date()
    per_day = Counter(c.date() for c in created if c.date() >= first)
    running = sum(1 for c in created if c.date() < first)
    growth = []
    for i in range(days):
        day = first + timedelta(days=i)
        running += per_day[day]
        growth.append(DayCount(day=day, added=per_day[day], total=running))
    facts = [r for r in records if r.kind == "semantic" and r.status == "active"]
    return StatsReport(
        user_id=user_id,
        users=users,
        total=len(records),
        by_kind=dict(Counter(r.kind for r in records)),
        by_status=dict(Counter(r.status for r in records)),
        by_category=dict(Counter(r.category or "general" for r in facts).most_common()),
        pending=sum(r.status == "pending" for r in records),
        this_week=sum(c >= now - timedelta(days=7) for c in created),
        this_month=sum(c >= now - timedelta(days=30) for c in created),
        growth=growth,
        capped=capped,
    )


class StatsMixin(MemoriesMixin):
    """Users and statistics of :class:`~langmem_vault.service.MemoryService`."""

    def _stats_steps(self, user_id: str | None, days: int) -> Steps[StatsReport]:
        if not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
            raise InvalidInput("days", f"must be in 1..{MAX_DAYS}, got {days!r}")
        if user_id is None:
            self._require_admin()
            users = yield from self._users_steps()
        else:
            users = [user_id]
        records: list[MemoryRecord] = []
        capped = False
        for uid in users:
            found, truncated = yield Within(self.store, self._records_plan(uid))
            records.extend(found)
            capped = capped or truncated
        return build_stats(user_id, len(users), records, days, utcnow(), capped=capped)

    def _users_steps(self) -> Steps[list[str]]:
        self._require_admin()
        return (yield Within(self.store, self._users_plan()))  # type: ignore[no-any-return]

    # -- public: sync and async twins ------------------------------------------------------

    def list_users(self) -> list[str]:
        """Every user with stored memories, sorted (admin only)."""
        return self._run(self._users_steps())

    async def alist_users(self) -> list[str]:
        """Async :meth:`list_users`."""
        return await self._arun(self._users_steps())

    def user_exists(self, user_id: str) -> bool:
        """Whether ``user_id`` has memories (or, with a saver, threads)."""
        return self._run(self._exists_steps(self._authorize(user_id)))

    async def auser_exists(self, user_id: str) -> bool:
        """Async :meth:`user_exists`."""
        return await self._arun(self._exists_steps(self._authorize(user_id)))

    def require_user(self, user_id: str) -> None:
        """:class:`NotFound` naming ``user_id`` unless the user has memories or threads."""
        self._run(self._require_user_steps(self._authorize(user_id)))

    async def arequire_user(self, user_id: str) -> None:
        """Async :meth:`require_user`."""
        await self._arun(self._require_user_steps(self._authorize(user_id)))

    def stats(self, user_id: str | None = None, *, days: int = 30) -> StatsReport:
        """Counts, growth over the last ``days`` days and distributions; ``user_id=None``
        aggregates every user (admin only)."""
        uid = None if user_id is None else self._authorize(user_id)
        return self._run(self._stats_steps(uid, days))

    async def astats(self, user_id: str | None = None, *, days: int = 30) -> StatsReport:
        """Async :meth:`stats`."""
        uid = None if user_id is None else self._authorize(user_id)
        return await self._arun(self._stats_steps(uid, days))
