"""list_categories' counts (service/_categories.py): on VaultStore one TallyOp statement
(store/_tally_plan.py) leaves the facts and their usage records on the server; it must give
what the Python path gives, which InMemoryStore runs, sync and async, at the edges: tags
naming a user's own category, a fact in it both ways, facts without a category or with one
that is not a string, a superseded fact and a fact without a status (neither counts),
timestamps naive, impossible or in a form only Python reads, and another user's facts.
``max_rows`` bounds the facts counted, never the categories named: a capped count says so."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from langmem_vault.memory._recall.usage import usage_namespace
from langmem_vault.service import MemoryService
from langmem_vault.service import _categories as categories
from tests.service.conftest import Driver

#: (key, value, usage record's last_accessed or None)
FACTS: list[tuple[str, dict[str, Any], str | None]] = [
    ("f1", {"category": "preference", "tags": ["rome-trip", "preference", 5]}, None),
    ("f2", {"category": "rome-trip", "tags": ["rome-trip"], "updated_at": "2026-02-01T10:00:00"},
     "2026-03-01T00:00:00Z"),
    ("f3", {"updated_at": "2026-01-05"}, None),
    ("f4", {"category": "preference", "status": "superseded",
            "updated_at": "2027-01-01T00:00:00+00:00"}, "2027-06-01T00:00:00+00:00"),
    ("f5", {"category": "general", "status": None, "updated_at": "2028-01-01"}, None),
    ("f6", {"category": "hobbies", "tags": "rome-trip", "updated_at": "20260401T000000Z"}, ""),
    ("f7", {"category": 5, "tags": ["hobbies"], "updated_at": "2026-03-15T00:00:00+00:00"}, None),
    ("f8", {"category": None, "tags": ["nope"], "updated_at": "2029-01-01"}, None),
    ("f9", {"category": "skill", "updated_at": "2026-02-30T00:00:00"},
     "2026-05-05T05:05:05.123456+02:00"),
]  # fmt: skip


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


EXPECTED = {
    "preference": (1, _utc(2026, 1, 1)),
    "rome-trip": (2, _utc(2026, 3, 1)),
    "general": (1, _utc(2026, 1, 5)),
    "hobbies": (2, _utc(2026, 4, 1)),
    "skill": (1, datetime(2026, 5, 5, 3, 5, 5, 123456, tzinfo=UTC)),
}


def _ops(service: MemoryService, user: str) -> list[PutOp]:
    ns = service._namespace(user, "semantic")
    ops = []
    for key, value, used in FACTS:
        fact = {"text": key, "status": "active", "updated_at": "2026-01-01T00:00:00+00:00"}
        ops.append(PutOp(ns, key, {**fact, **value}, index=False))
        if used is not None:
            ops.append(PutOp(usage_namespace(ns), key, {"last_accessed": used}, index=False))
    other = service._namespace("dz", "semantic")
    ops.append(PutOp(other, "x", {"category": "preference", "status": "active"}, index=False))
    return ops


async def _listed(drive: Driver, user: str) -> dict[str, tuple[int, datetime | None]]:
    for name in ("rome-trip", "hobbies", "5", "r"):  # "5", "r": no fact is in them
        await drive("save_category", user, name, {})
    ops = _ops(drive.service, user)
    if drive.mode == "sync":
        drive.store.batch(ops)
    else:
        await drive.store.abatch(ops)
    return {c.name: (c.count, c.last_used) for c in await drive("list_categories", user)}


def _expected(names: Any) -> dict[str, tuple[int, datetime | None]]:
    return {name: EXPECTED.get(name, (0, None)) for name in names}


async def test_counted_in_sql_as_in_python(drive: Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    real = categories.read_usage_plan

    def refuse(*args: Any) -> Any:
        raise AssertionError("the counted listing read the facts' usage records")

    monkeypatch.setattr(categories, "read_usage_plan", refuse)
    in_sql = await _listed(drive, "cy")
    assert in_sql == _expected(in_sql)
    # The Python path on the same store, for the same user: the same answers.
    monkeypatch.setattr(categories, "read_usage_plan", real)
    monkeypatch.setattr(categories, "runs_pages", lambda store: False)
    in_python = {c.name: (c.count, c.last_used) for c in await drive("list_categories", "cy")}
    assert in_python == in_sql
    # Over the store's max_rows most recently stored facts only: one batch stored them all at
    # once, so its order is by key (f1, f2, f3, f6: the first 4 active).
    drive.service.max_rows = 4  # the facts counted, not the user's 4 categories
    listed = await drive("list_categories", "cy")
    capped = {c.name: (c.count, c.last_used) for c in listed}
    assert capped.keys() == in_sql.keys() and all(c.capped for c in listed)
    monkeypatch.setattr(categories, "runs_pages", lambda store: True)
    listed = await drive("list_categories", "cy")
    assert {c.name: (c.count, c.last_used) for c in listed} == capped
    assert all(c.capped for c in listed)
    assert {n: c for n, (c, _) in capped.items() if c} == {
        "preference": 1,
        "rome-trip": 2,
        "general": 1,
        "hobbies": 1,
    }


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_other_stores_count_in_python_the_same(mode: str) -> None:
    service = MemoryService(InMemoryStore())
    listed = await _listed(Driver(service, mode), "cy")
    assert listed == _expected(listed)


@pytest.mark.parametrize("in_sql", [True, False])
async def test_max_rows_caps_the_counts_not_the_categories(
    drive: Driver, monkeypatch: pytest.MonkeyPatch, in_sql: bool
) -> None:
    """A user with more of their own categories and facts than ``max_rows``: every category
    is named (counted or not), and the counts say they are capped; under the cap they do not."""
    monkeypatch.setattr(categories, "runs_pages", lambda store: in_sql)
    own = [f"trip-{i}" for i in range(5)]
    for name in own:
        await drive("save_category", "cz", name, {})
    ns = drive.service._namespace("cz", "semantic")
    ops = [
        PutOp(ns, f"f{i}", {"text": "x", "status": "active", "category": "skill"}, index=False)
        for i in range(4)
    ]
    if drive.mode == "sync":
        drive.store.batch(ops)
    else:
        await drive.store.abatch(ops)
    drive.service.max_rows = 3
    for counted in (True, False):
        listed = await drive("list_categories", "cz", counted=counted)
        assert [c.name for c in listed if not c.builtin] == own
    listed = {c.name: c for c in await drive("list_categories", "cz")}
    assert listed["skill"].count == 3 and all(c.capped for c in listed.values())
    drive.service.max_rows = 4  # all 4 facts read: the count reached the cap, may be more
    assert all(c.capped for c in await drive("list_categories", "cz"))
    drive.service.max_rows = 5
    listed = {c.name: c for c in await drive("list_categories", "cz")}
    assert listed["skill"].count == 4 and not any(c.capped for c in listed.values())


async def test_analytics_usage_says_when_capped(drive: Driver) -> None:
    """The analytics' sources and most used facts come from the ``max_rows`` newest facts:
    ``capped`` when the user holds more, not when they hold exactly that many."""
    for i in range(3):
        await drive("add_memory", "ca", f"Fact number {i}")
    drive.service.max_rows = 2
    usage = (await drive("analytics", "ca")).usage
    assert usage.manual == 2 and usage.capped
    drive.service.max_rows = 3
    usage = (await drive("analytics", "ca")).usage
    assert usage.manual == 3 and not usage.capped


async def test_stats_say_when_capped(drive: Driver) -> None:
    """stats counts each user's ``max_rows`` most recently updated memories: ``capped`` when
    a user holds more (for that user and for everyone), not when they hold exactly that many."""
    for i in range(3):
        await drive("add_memory", "cs", f"Fact number {i}")
    await drive("add_memory", "ct", "Another user's fact")
    drive.service.max_rows = 2
    stats = await drive("stats", "cs")
    assert (stats.total, stats.capped) == (2, True)
    assert (await drive("stats")).capped
    drive.service.max_rows = 3
    stats = await drive("stats", "cs")
    assert (stats.total, stats.capped) == (3, False)
    assert not (await drive("stats")).capped
