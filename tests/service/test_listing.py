"""list_memories pages cut in SQL (service/_listing.py), sync and async: newest first across the
kinds, a cursor's page keeps its boundary when memories are added, filters on derived fields
walk the index. The old path (read every memory, sort, cut) is made to fail, so a test passes
only if the listing does not fall back to it."""

from __future__ import annotations

from typing import Any

import pytest

from langmem_vault.service import InvalidInput
from langmem_vault.service import _listing as listing
from langmem_vault.service._memories import MemoriesMixin
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


async def test_a_filtered_listing_walks_to_its_matches(drive: Driver) -> None:
    keys = [(await drive("add_memory", "cy", f"Fact {n}")).key for n in range(6)]
    for key in keys[1::2]:
        await drive("forget_memory", "cy", key)
    forgotten = list(reversed(keys[1::2]))
    page = await drive("list_memories", "cy", status=["forgotten"], limit=2)
    assert [m.key for m in page.items] == forgotten[:2] and page.total is None  # not asked
    page = await drive("list_memories", "cy", status=["forgotten"], limit=2, exact_total=True)
    assert [m.key for m in page.items] == forgotten[:2] and page.total == 3
    rest = await drive("list_memories", "cy", status=["forgotten"], limit=2, after=page.next)
    assert [m.key for m in rest.items] == forgotten[2:] and rest.total is None
    assert rest.next is None
    with pytest.raises(InvalidInput) as bad:
        await drive("list_memories", "cy", after="not-a-cursor")
    assert bad.value.field == "after"


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
