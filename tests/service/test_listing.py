"""list_memories pages cut in SQL (service/_listing.py), sync and async: newest first across the
kinds, a cursor's page keeps its boundary when memories are added, a status is judged in SQL
(pages, offsets and totals cut there; every status counted in one statement, as Python judges
it), other filters on derived fields walk the index. The old path (read every memory, sort,
cut) is made to fail, so a test passes only if the listing does not fall back to it."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langmem_vault.service import InvalidInput
from langmem_vault.service import _listing as listing
from langmem_vault.service import _records as records
from langmem_vault.service._memories import MemoriesMixin
from langmem_vault.service._records import STATUSES
from langmem_vault.store import _plans as plans
from langmem_vault.store._page_plan import count_plan
from tests.service.conftest import Driver


@pytest.fixture(autouse=True)
def no_read_all(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the listing read every memory of the user")

    monkeypatch.setattr(MemoriesMixin, "_records_plan", refuse)


async def _walk(drive: Driver, user: str, **filters: Any) -> list[str]:
    keys: list[str] = []
    page = await drive("list_memories", user, **filters)
    while True:
        keys += [m.key for m in page.items]
        if page.next is None:
            return keys
        page = await drive("list_memories", user, after=page.next, **filters)


async def test_cursor_pages_are_stable_and_newest_first(drive: Driver) -> None:
    added = [(await drive("add_memory", "ana", f"Fact number {n}")).key for n in range(7)]
    rule = (await drive("add_instruction", "ana", "Answer briefly")).key
    await drive("add_memory", "bob", "Not ana's")
    newest = [rule, *reversed(added)]
    first = await drive("list_memories", "ana", limit=3)
    assert [m.key for m in first.items] == newest[:3] and first.total == 8
    second = await drive("list_memories", "ana", limit=3, after=first.next)
    assert [m.key for m in second.items] == newest[3:6]
    for n in range(3):  # new memories land before the cursor: the next page is unchanged
        await drive("add_memory", "ana", f"Later fact {n}")
    again = await drive("list_memories", "ana", limit=3, after=first.next)
    assert [m.key for m in again.items] == newest[3:6]
    assert (await _walk(drive, "ana", limit=3))[3:] == newest
    jump = await drive("list_memories", "ana", limit=2, offset=4, kind="semantic")
    assert [m.key for m in jump.items] == list(reversed(added))[1:3] and jump.total == 10


async def test_a_status_listing_is_cut_and_counted_in_sql(drive: Driver) -> None:
    keys = [(await drive("add_memory", "cy", f"Fact {n}")).key for n in range(6)]
    for key in keys[1::2]:
        await drive("forget_memory", "cy", key)
    forgotten = list(reversed(keys[1::2]))
    page = await drive("list_memories", "cy", status=["forgotten"], limit=2)
    assert [m.key for m in page.items] == forgotten[:2] and page.total is None  # not asked
    rest = await drive(
        "list_memories", "cy", status=["forgotten"], limit=2, after=page.next, exact_total=True
    )
    assert [m.key for m in rest.items] == forgotten[2:] and rest.total == 3  # in SQL
    assert rest.next is None
    jump = await drive(
        "list_memories", "cy", status=["active"], limit=2, offset=1, exact_total=True
    )
    assert [m.key for m in jump.items] == list(reversed(keys[0::2]))[1:] and jump.total == 3
    both = await drive("list_memories", "cy", status=["active", "forgotten"], exact_total=True)
    assert [m.key for m in both.items] == list(reversed(keys)) and both.total == 6
    with pytest.raises(InvalidInput) as bad:
        await drive("list_memories", "cy", after="not-a-cursor")
    assert bad.value.field == "after"


async def test_a_category_listing_walks_to_its_matches(drive: Driver) -> None:
    cats = ["preference", "general"] * 3
    keys = [
        (await drive("add_memory", "cz", f"Fact {n}", category=c)).key for n, c in enumerate(cats)
    ]
    liked = list(reversed(keys[0::2]))
    page = await drive("list_memories", "cz", category="preference", limit=2)
    assert [m.key for m in page.items] == liked[:2] and page.total is None  # not asked
    page = await drive("list_memories", "cz", category="preference", limit=2, exact_total=True)
    assert page.total == 3
    rest = await drive("list_memories", "cz", category="preference", limit=2, after=page.next)
    assert [m.key for m in rest.items] == liked[2:] and rest.next is None
    await drive("forget_memory", "cz", keys[0])
    live = await drive(
        "list_memories", "cz", category="preference", status=["active"], exact_total=True
    )
    assert [m.key for m in live.items] == liked[:2] and live.total == 2


async def test_a_listing_by_kind_counts_up_to_the_limit_unless_asked(
    drive: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "TOTAL_LIMIT", 4)
    for n in range(4):
        await drive("add_memory", "di", f"Fact {n}")
    four = await drive("list_memories", "di", limit=2)
    assert (four.total, four.total_capped) == (4, False)  # exactly the limit: exact
    await drive("add_memory", "di", "Fact 4")
    capped = await drive("list_memories", "di", limit=2)
    assert (capped.total, capped.total_capped, len(capped.items)) == (4, True, 2)
    later = await drive("list_memories", "di", limit=2, after=capped.next)
    assert (later.total, later.total_capped, len(later.items)) == (4, True, 2)
    exact = await drive("list_memories", "di", limit=2, exact_total=True)
    assert (exact.total, exact.total_capped) == (5, False)
    assert (await drive("list_memories", "di", kind="semantic", limit=9)).total == 4


async def _put_raw(drive: Driver, user: str, kind: str, key: str, value: dict[str, Any]) -> None:
    ns = drive.service._namespace(user, kind)
    ops = [PutOp(ns, key, {"text": key, "summary": key, **value}, index=False)]
    if drive.mode == "sync":
        drive.store.batch(ops)
    else:
        await drive.store.abatch(ops)


#: stored values at each status's edges: (kind, key, value)
EDGES: list[tuple[str, str, dict[str, Any]]] = [
    ("semantic", "plain", {}),
    ("semantic", "pending", {"status": "pending_confirmation"}),
    ("semantic", "closed-by-newer", {"status": "superseded", "superseded_by": "plain"}),
    ("semantic", "closed-by-hand", {"status": "superseded", "superseded_by": ""}),
    ("semantic", "closed-null", {"status": "superseded", "superseded_by": None}),
    ("semantic", "ended", {"valid_to": "2020-01-01T00:00:00+00:00"}),
    ("semantic", "ends-later", {"valid_to": "2999-01-01T00:00:00+00:00"}),
    ("semantic", "ended-naive", {"valid_to": "2020-01-01T00:00"}),
    ("semantic", "bad-date", {"valid_to": "2020-02-30"}),
    ("semantic", "pending-ended", {"status": "pending_confirmation", "valid_to": "2020-01-01"}),
    ("semantic", "private-closed", {"private": True, "status": "superseded", "superseded_by": "x"}),
    ("semantic", "private-ended", {"private": True, "valid_to": "2020-01-01T00:00:00Z"}),
    ("instruction", "rule", {}),
    ("instruction", "rule-off", {"active": False}),
    ("instruction", "rule-zero", {"active": 0}),
    ("instruction", "rule-over", {"expires_at": "2020-01-01T00:00:00+00:00"}),
    ("instruction", "rule-off-over", {"active": False, "expires_at": "2020-01-01"}),
    ("episode", "talk", {"status": "superseded", "valid_to": "2020-01-01"}),
]


async def test_every_status_is_counted_in_one_statement_as_python_judges_it(
    drive: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for kind, key, value in EDGES:
        await _put_raw(drive, "ed", kind, key, value)
    everything = await drive("list_memories", "ed", limit=100)  # judged in Python
    judged = {m.key: m.status for m in everything.items}
    assert len(judged) == len(EDGES) and set(judged.values()) == set(STATUSES)
    statements = _statements(drive, monkeypatch)
    counts = await drive("count_memories", "ed")
    assert len(statements) == 1 and not counts.capped
    assert counts.counts == Counter(judged.values())
    for status in STATUSES:  # each status's listing, cut in SQL, keeps what Python judged
        page = await drive("list_memories", "ed", status=[status], limit=100, exact_total=True)
        assert sorted(m.key for m in page.items) == sorted(
            k for k, s in judged.items() if s == status
        ), status
        assert page.total == len(page.items) and all(m.status == status for m in page.items)
    rules = await drive("count_memories", "ed", kind="instruction")
    assert rules.counts == {"active": 2, "disabled": 2, "expired": 1}  # 0 is not false
    monkeypatch.setattr(records, "TOTAL_LIMIT", 2)
    capped = await drive("count_memories", "ed", kind="semantic")
    assert capped.counts["active"] == 2 and "active" in capped.capped  # 3: plain, later, bad
    assert capped.total(["superseded", "forgotten"]) == (2, True)  # 2 + 2: more than 2
    assert capped.total(["pending"]) == (2, False)


async def test_counts_by_category_count_that_category_s_facts(drive: Driver) -> None:
    await drive("add_memory", "fy", "Likes tea", category="preference")
    await drive("add_memory", "fy", "Works at Acme", category="general")
    closed = await drive("add_memory", "fy", "Liked coffee", category="preference")
    await drive("forget_memory", "fy", closed.key)
    await drive("add_instruction", "fy", "Answer briefly")
    counts = await drive("count_memories", "fy", category="preference")
    assert counts.counts == {"active": 1, "forgotten": 1}
    assert (await drive("count_memories", "fy")).counts == {"active": 3, "forgotten": 1}
    assert (await drive("count_memories", "fy", kind="episode")).counts == {}


def _statements(drive: Driver, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The store statements the next calls run (appended as they run)."""
    seen: list[str] = []
    real = count_plan

    def spy(op: Any, *args: Any) -> Any:
        seen.append(type(op).__name__)
        return real(op, *args)

    monkeypatch.setattr(plans, "count_plan", spy)
    return seen


async def test_each_tab_s_count_is_what_paging_through_the_tab_returns(
    drive: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's tab counts (one CountOp: the rows that may not be active judged, the
    rest counted in an index) against a walk of each tab's pages, capped at 3 (as at 1,000)."""
    from langmem_vault.api._dashboard import TABS

    monkeypatch.setattr(listing, "TOTAL_LIMIT", 3)
    monkeypatch.setattr(records, "TOTAL_LIMIT", 3)
    mix = [
        ({}, 4),
        ({"status": "pending_confirmation"}, 2),
        ({"status": "superseded", "superseded_by": "x"}, 2),
        ({"status": "superseded"}, 2),  # forgotten: the superseded tab holds 4
        ({"valid_to": "2020-01-01T00:00:00Z"}, 1),
        ({"valid_to": "2999-01-01T00:00:00Z"}, 1),  # active until then
    ]
    for n, (value, times) in enumerate(mix):
        for k in range(times):
            await _put_raw(drive, "tab", "semantic", f"m{n}{k}", value)
    await _put_raw(drive, "tab", "instruction", "off", {"active": False})
    for kind in ("semantic", None):
        counts = await drive("count_memories", "tab", kind=kind)
        for tab, statuses in TABS.items():
            walked = await _walk(drive, "tab", kind=kind, status=statuses, limit=2)
            assert counts.total(statuses) == (min(len(walked), 3), len(walked) > 3), (kind, tab)
    counts = await drive("count_memories", "tab", kind="instruction")
    assert counts.counts == {"disabled": 1}


async def test_categories_without_counts_read_no_fact(
    drive: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the dashboard's memory page lists (its filter, the colours): the categories
    alone; counting them read every current fact of the user and its usage (0.4 s at 10k)."""
    from langmem_vault.service import _categories as categories

    await drive("save_category", "ca", "hobbies", {"colour": "#123456"})
    await drive("add_memory", "ca", "Likes chess", category="preference")
    counted = await drive("list_categories", "ca")
    assert {c.name: c.count for c in counted}["preference"] == 1
    scanned: list[tuple[str, ...]] = []
    real = categories.scan_plan

    def spy(namespace: tuple[str, ...], *args: Any, **kwargs: Any) -> Any:
        scanned.append(tuple(namespace))
        return real(namespace, *args, **kwargs)

    monkeypatch.setattr(categories, "scan_plan", spy)
    bare = await drive("list_categories", "ca", counted=False)
    assert [(c.name, c.colour) for c in bare] == [(c.name, c.colour) for c in counted]
    assert all(c.count == 0 and c.last_used is None for c in bare)
    assert scanned == [categories._namespace("ca")]  # the user's categories, not the facts
