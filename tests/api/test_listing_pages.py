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
