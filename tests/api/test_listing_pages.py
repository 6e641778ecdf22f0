"""The REST listing and the dashboard page their memories in SQL (service/_listing.py): with the
old path (read every memory, sort, cut) made to fail, both still answer, and the API's ``next``
cursor walks every memory once."""

from __future__ import annotations

import re
from html import unescape as html_unescape
from typing import Any

import pytest

from langmem_vault.api import _dashboard as dashboard
from langmem_vault.service._memories import MemoriesMixin
from tests.api.conftest import PREFIX, Api
from tests.api.test_api import add, new_user


async def test_the_api_and_dashboard_never_read_every_memory(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = new_user()
    keys = [await add(api, user, f"Fact number {n}") for n in range(5)]

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the listing read every memory of the user")

    monkeypatch.setattr(MemoriesMixin, "_records_plan", refuse)
    seen: list[str] = []
    params: dict[str, Any] = {"user_id": user, "limit": 2}
    async with api.client("admin-key") as c:
        while True:
            r = await c.get("/memories", params=params)
            assert r.status_code == 200, r.text
            body = r.json()
            seen += [m["key"] for m in body["items"]]
            if body["next"] is None:
                break
            params["after"] = body["next"]
        bad = await c.get("/memories", params={"user_id": user, "after": "x"})
        assert bad.status_code == 422 and bad.json()["field"] == "after"
        html = await c.get(f"http://test{PREFIX}/", params={"user_id": user})
        # The dashboard's pages of 2: each links the next by its cursor, the count stays.
        monkeypatch.setattr(dashboard, "PAGE", 2)
        shown: list[list[str]] = []
        url: str | None = f"http://test{PREFIX}/?user_id={user}"
        while url is not None:
            page = (await c.get(url)).text
            assert "5 memories" in page
            shown.append(re.findall(r"Fact number (\d)", page))
            link = re.search(r'href="([^"]*after=[^"]*)">Next page', page)
            url = f"http://test{html_unescape(link.group(1))}" if link else None
    assert seen == list(reversed(keys))
    assert html.status_code == 200 and "Fact number 4" in html.text
    assert shown == [["4", "3"], ["2", "1"], ["0"]]


async def test_the_dashboard_s_pages_never_count_the_categories(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every dashboard page needs the categories' names and colours, never their counts:
    counting reads every current fact of the user (0.4 s at 10,000 facts), and each row
    action and the analytics page did it for their colours (View.load_colours)."""
    from langmem_vault.service._categories import CategoriesMixin

    user = new_user()
    key = await add(api, user, "Likes chess")
    real = CategoriesMixin.alist_categories
    calls: list[bool] = []

    async def spy(self: Any, user_id: str, *, counted: bool = True) -> Any:
        calls.append(counted)
        return await real(self, user_id, counted=counted)

    monkeypatch.setattr(CategoriesMixin, "alist_categories", spy)
    params = {"user_id": user}
    async with api.client("admin-key") as c:
        pages = [
            await c.get(f"http://test{PREFIX}/", params=params),
            await c.get(f"http://test{PREFIX}/ui/memories/{key}/row", params=params),
            await c.post(f"http://test{PREFIX}/ui/memories/{key}/delete", params=params),
            await c.post(f"http://test{PREFIX}/ui/memories/{key}/restore", params=params),
            await c.get(f"http://test{PREFIX}/analytics", params=params),
        ]
    assert [p.status_code for p in pages] == [200] * 5, [p.text[:200] for p in pages]
    assert calls and not any(calls), calls
