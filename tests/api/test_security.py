"""The API's and dashboard's security guarantees (issue 29), over httpx against the real
embedded Postgres: headers on every route, auth before the body and body caps (the process's
memory stays flat), sessions, CSV escaping, 4xx instead of 500s, per-user latency,
unreadable private memories, bounded work per request, and keys that stay one path segment.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from html import unescape as html_unescape
from typing import Any
from urllib.parse import quote

import httpx
import psutil
import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langmem_vault.api import ApiKeyAuth, create_app
from langmem_vault.api import _dashboard as dashboard
from langmem_vault.api._app import API_MODULES
from langmem_vault.api._auth import USER_KEYS_ENV
from langmem_vault.api._guards import BODY_LIMIT, IMPORT_LIMIT
from langmem_vault.api._sessions import COOKIE
from langmem_vault.db._connection import aopen_pool
from langmem_vault.memory._keys import is_valid_key
from langmem_vault.memory._sealing import Keyring
from langmem_vault.service import MemoryService
from langmem_vault.store import AsyncVaultStore
from langmem_vault.store._pages import Page
from tests.api.conftest import KEYS, PREFIX, Api
from tests.support.embeddings import TrigramEmbeddings

MiB = 1 << 20


def new_user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def client(app: Any, key: str | None = None, base: str = "http://127.0.0.1") -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base, headers=headers)


# -- headers ------------------------------------------------------------------------------


def _paths(app: Any) -> list[tuple[str, str]]:
    """(method, path) of every route of the app, path parameters filled in: the routers the
    app includes (FastAPI keeps included routers behind a private wrapper) and its own."""
    routers = [(f"{PREFIX}/api", module.router) for module in API_MODULES]
    routers.append((PREFIX, dashboard.build_router()))
    found = []
    for prefix, router in routers:
        for route in router.routes:
            assert isinstance(route, APIRoute)
            path = prefix + re.sub(r"\{[^}]+\}", "k1", route.path)
            found.extend((m, path) for m in sorted(route.methods))
    files = {f"{PREFIX}/static": "htmx.min.js", f"{PREFIX}/docs/static": "swagger-ui.css"}
    for route in app.routes:  # docs, openapi.json, the /vault redirect, the static mounts
        path = getattr(route, "path", None) or ""
        if path.startswith(PREFIX):
            found.append(("GET", f"{path}/{files[path]}" if path in files else path))
    return found


async def test_every_route_sends_the_security_headers(api: Api) -> None:
    paths = _paths(api.app)
    assert len(paths) > 40 and ("GET", f"{PREFIX}/docs") in paths
    async with client(api.app, "admin-key") as c:
        for method, path in [*paths, ("GET", f"{PREFIX}/no-such-page")]:
            r = await c.request(method, path, params={"user_id": "alice"})
            h = r.headers
            csp = h.get("content-security-policy", "")
            assert "frame-ancestors 'none'" in csp, (method, path, r.status_code)
            assert h["x-frame-options"] == "DENY", (method, path)
            assert h["x-content-type-options"] == "nosniff", (method, path)
            assert h["referrer-policy"] == "same-origin", (method, path)
            if not path.startswith(f"{PREFIX}/docs"):  # Swagger UI's page starts inline
                script = next(p for p in csp.split(";") if p.strip().startswith("script-src"))
                assert script.strip() == "script-src 'self'", (method, path)
    async with client(api.app) as c:  # a refusal carries them too
        r = await c.get(f"{PREFIX}/api/memories")
        assert r.status_code == 401 and r.headers["x-frame-options"] == "DENY"


async def test_pages_run_no_inline_script(api: Api) -> None:
    async with client(api.app, "admin-key") as c:
        for page in ("", "instructions", "analytics", "threads", "privacy", "login"):
            html = (await c.get(f"{PREFIX}/{page}", params={"user_id": "alice"})).text
            for tag in re.findall(r"<script[^>]*>", html):
                assert "src=" in tag or 'type="application/json"' in tag, (page, tag)
            assert "hx-on" not in html and " onclick=" not in html, page


# -- bodies -------------------------------------------------------------------------------


class Body:
    """A streamed body of ``size`` bytes that counts how much of it was pulled."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunk = b"[" * MiB
        while self.pulled < self.size:
            self.pulled += len(chunk)
            yield chunk


def rss() -> int:
    return int(psutil.Process().memory_info().rss)


async def test_oversized_and_unauthenticated_bodies_are_refused_before_parsing(api: Api) -> None:
    before = rss()
    unauthenticated = Body(200 * MiB)
    async with client(api.app) as c:
        r = await c.post(f"{PREFIX}/api/import", content=unauthenticated)
    assert r.status_code == 401
    assert unauthenticated.pulled <= MiB  # nothing read past what the transport primes

    oversized = Body(200 * MiB)
    async with client(api.app, "alice-key") as c:
        r = await c.post(f"{PREFIX}/api/import", content=oversized)
        assert r.status_code == 413
        assert r.json()["field"] == "body" and str(IMPORT_LIMIT) in r.json()["message"]
        assert oversized.pulled <= IMPORT_LIMIT + 2 * MiB
        # any other route has the small cap; a declared length over it is refused unread
        small = Body(4 * MiB)
        r = await c.post(f"{PREFIX}/api/memories", content=small)
        assert r.status_code == 413 and str(BODY_LIMIT) in r.json()["message"]
        r = await c.post(
            f"{PREFIX}/api/memories",
            content=b"{}",
            headers={"content-length": str(BODY_LIMIT + 1)},
        )
        assert r.status_code == 413
    # 400 MiB were offered; the process grew by well under one import cap
    assert rss() - before < IMPORT_LIMIT + 16 * MiB, (rss() - before) / MiB


async def test_json_errors_name_the_body_not_a_character_offset(api: Api) -> None:
    async with client(api.app, "alice-key") as c:
        r = await c.post(
            f"{PREFIX}/api/memories",
            content=b'{"text": "x",,}',
            headers={"content-type": "application/json"},
        )
    assert r.status_code == 422
    assert r.json()["field"] == "body"
    assert "not valid JSON (at character" in r.json()["message"]


# -- sessions -----------------------------------------------------------------------------


async def test_sign_in_gives_a_signed_expiring_session_and_sign_out_ends_it(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def get_home(c: httpx.AsyncClient, jar: dict[str, str]) -> httpx.Response:
        c.cookies.clear()
        for name, value in jar.items():
            c.cookies.set(name, value)
        return await c.get(f"{PREFIX}/")

    async with client(api.app) as c:
        r = await c.post(f"{PREFIX}/login", data={"key": "alice-key"})
        assert r.status_code == 303
        cookie, value = r.headers["set-cookie"], r.cookies[COOKIE]
        assert "alice-key" not in cookie
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age=" in cookie
        assert "Secure" not in cookie  # plain HTTP
        page = await get_home(c, {COOKIE: value})
        assert page.status_code == 200 and "Sign out" in page.text
        # the raw key in a cookie, or a forged session, is no session
        for jar in ({"lmv_key": "alice-key"}, {COOKIE: value[:-2] + "xx"}):
            r = await get_home(c, jar)
            assert r.status_code == 303 and r.headers["location"] == f"{PREFIX}/login"
        c.cookies.clear()
        c.cookies.set(COOKIE, value)
        r = await c.post(f"{PREFIX}/logout")
        assert r.status_code == 303 and f'{COOKIE}=""' in r.headers["set-cookie"]
        assert (await get_home(c, {COOKIE: value})).status_code == 303  # a copy is dead too

        c.cookies.clear()
        later = (await c.post(f"{PREFIX}/login", data={"key": "bob-key"})).cookies[COOKIE]
        assert (await get_home(c, {COOKIE: later})).status_code == 200
        clock = time.monotonic() + api.app.state.vault_sessions.max_age + 1
        monkeypatch.setattr("langmem_vault.api._sessions.time.monotonic", lambda: clock)
        assert (await get_home(c, {COOKIE: later})).status_code == 303  # expired
    async with client(api.app, base="https://vault.example") as c:
        r = await c.post(f"{PREFIX}/login", data={"key": "alice-key"})
        assert "Secure" in r.headers["set-cookie"]


# -- exports, errors, environment ---------------------------------------------------------


async def test_csv_cells_that_start_a_formula_are_escaped(api: Api) -> None:
    user = new_user()
    async with client(api.app, "admin-key") as c:
        for text in ('=HYPERLINK("http://evil", "x")', "+1 555", "@SUM(A1)", "plain"):
            r = await c.post(
                f"{PREFIX}/api/memories", params={"user_id": user}, json={"text": text}
            )
            assert r.status_code == 201
        body = (await c.get(f"{PREFIX}/api/export.csv", params={"user_id": user})).text
    assert "'=HYPERLINK" in body and "'+1 555" in body and "'@SUM(A1)" in body
    assert ",plain," in body and "\n=HYPERLINK" not in body and ',"=HYPER' not in body


async def test_former_500s_are_4xx_naming_the_field(api: Api) -> None:
    async with client(api.app, "admin-key") as c:
        r = await c.get(f"{PREFIX}/api/audit", params={"user_id": "alice", "memory_key": "\x00"})
        assert r.status_code == 422 and r.json()["field"] == "memory_key", r.text
        r = await c.post(f"{PREFIX}/ui/memories/k1/confirm")  # admin, no user_id
        assert r.status_code == 400 and r.json()["field"] == "user_id"
        r = await c.post(f"{PREFIX}/api/memories", params={"user_id": "李"}, json={"text": "x"})
        assert r.status_code == 201
        r = await c.get(f"{PREFIX}/api/export.csv", params={"user_id": "李"})
        assert r.status_code == 200
        assert "filename*=UTF-8''%E6%9D%8E-memories.csv" in r.headers["content-disposition"]


def test_a_malformed_key_entry_is_named_by_position_only() -> None:
    with pytest.raises(ValueError, match="entry 2 is not a user=key pair") as caught:
        ApiKeyAuth.from_env({USER_KEYS_ENV: "alice=k1,s3cr3t-half-a-key"})
    assert "s3cr3t" not in str(caught.value)


async def test_a_user_sees_their_own_search_latency_and_an_admin_everyones(api: Api) -> None:
    app = create_app(api.service, prefix=PREFIX, auth=ApiKeyAuth(KEYS))  # a fresh log
    async with client(app, "alice-key") as alice, client(app, "bob-key") as bob:
        await alice.get(f"{PREFIX}/api/memories/search", params={"q": "tea"})
        for _ in range(3):
            await bob.get(f"{PREFIX}/api/memories/search", params={"q": "tea"})
        mine = (await alice.get(f"{PREFIX}/api/analytics")).json()
    assert mine["latency_scope"] == "user" and mine["latency_ms"]["search"]["count"] == 1
    async with client(app, "admin-key") as admin:
        everyone = (await admin.get(f"{PREFIX}/api/analytics", params={"user_id": "alice"})).json()
    assert everyone["latency_scope"] == "all" and everyone["latency_ms"]["search"]["count"] == 4


# -- unreadable private memories, bounded work --------------------------------------------


async def test_an_unreadable_private_memory_is_marked_not_fatal(api: Api) -> None:
    user, old, new = new_user(), Keyring.generate(), Keyring.generate()
    sealed = await MemoryService(api.service.store, keyring=old).aadd_memory(
        user, "Sees a therapist", private=True
    )
    await api.service.aadd_memory(user, "Likes tea")
    after = MemoryService(api.service.store, keyring=new)  # the sealing key changed
    page = await after.alist_memories(user)
    assert page.total == 2
    lost = next(r for r in page.items if r.key == sealed.key)
    assert lost.unreadable and old.current in lost.unreadable
    assert "LANGMEM_VAULT_OLD_KEYS" in lost.unreadable and "rotate-keys" in lost.unreadable
    assert any(r.text == "Likes tea" and r.unreadable is None for r in page.items)
    assert (await after.asearch_memories(user, "tea")).items
    await after.aanalytics(user)
    doc = await after.aexport_user(user)
    assert [u["key"] for u in doc["unreadable"]] == [sealed.key]
    app = create_app(after, prefix=PREFIX, auth=ApiKeyAuth(KEYS))
    async with client(app, "admin-key") as c:
        html = (await c.get(f"{PREFIX}/", params={"user_id": user})).text
    assert "unreadable: sealed with key" in html and "Likes tea" in html


async def test_no_request_reads_or_opens_more_than_max_rows(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    ring, user = Keyring.generate(), new_user()
    service = MemoryService(api.service.store, keyring=ring, max_rows=5)
    for i in range(12):
        await service.aadd_memory(user, f"Private fact number {i}", private=True)
    opened = 0
    import langmem_vault.service._memories as memories

    real = memories.open_or_mark

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal opened
        opened += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(memories, "open_or_mark", counting)
    read = 0
    store = service.store
    real_batch = store.abatch

    async def counting_batch(ops: Any) -> Any:
        nonlocal read
        results = await real_batch(ops)
        read += sum(len(r.items if isinstance(r, Page) else r) for r in results if r)
        return results

    monkeypatch.setattr(store, "abatch", counting_batch)
    page = await service.alist_memories(user, limit=1)
    # Cut in SQL (service/_listing.py): the page's one memory read and opened (and its usage
    # record looked up), the total counted there.
    assert not page.truncated and page.total == 12 and opened == 1 and len(page.items) == 1
    assert read <= 2
    opened = read = 0
    page = await service.alist_memories(user, status=["active"], limit=1, exact_total=True)
    # A status is judged in SQL: the page cut there, counted there when asked.
    assert not page.truncated and page.total == 12 and opened == 1 and read <= 2
    opened = read = 0
    page = await service.alist_memories(user, category="general", limit=1, exact_total=True)
    # A filter on another derived field counted on request walks the index, at most
    # max_rows rows, opening the page.
    assert page.truncated and page.total == 5 and opened == 1 and read <= 5 + 1
    opened = 0
    found = await service.asearch_memories(user, "number")
    assert found.truncated and len(found.items) == 5 and opened == 5
    opened = 0
    await service.aanalytics(user)
    assert opened == 5
    full = MemoryService(api.service.store, keyring=ring)  # the default cap: all 12
    assert (await full.alist_memories(user)).total == 12

    app = create_app(service, prefix=PREFIX, auth=ApiKeyAuth(KEYS))
    opened = 0
    async with client(app, "admin-key") as c:
        r = await c.get(f"{PREFIX}/", params={"user_id": user, "category": "preference"})
    assert r.status_code == 200 and 'id="truncated"' in r.text
    # the tab counts open nothing (one statement); the list walks at most max_rows
    assert opened == 0 and 'data-tab="active"' in r.text


# -- keys ---------------------------------------------------------------------------------


def _doc(key: str, user: str) -> dict[str, Any]:
    return {
        "format": "langmem-vault-export",
        "version": 1,
        "user_id": user,
        "memories": [
            {"key": key, "value": {"text": "Planted or not", "status": "pending_confirmation"}}
        ],
    }


@pytest.fixture(scope="module")
def sync_client(pg_uri: str, module_schema: str) -> Iterator[TestClient]:
    """The app in a TestClient (its own event loop and pool on this module's schema), for
    hypothesis, which drives sync tests."""

    @asynccontextmanager
    async def open_service() -> AsyncIterator[MemoryService]:
        pool = await aopen_pool(pg_uri, max_size=2)
        index = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text", "summary"]}
        store = AsyncVaultStore(pool, schema=module_schema, index=index)  # type: ignore[arg-type]
        await store.setup()
        try:
            yield MemoryService(store, component="api")
        finally:
            await pool.close()

    app = create_app(open_service, prefix=PREFIX, auth=ApiKeyAuth(KEYS))
    with TestClient(app, headers={"Authorization": "Bearer admin-key"}) as tc:
        yield tc


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    key=st.one_of(
        st.text(min_size=1, max_size=40),
        st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,30}", fullmatch=True),
        st.sampled_from(["x/*/../../../instructions/k/delete?user_id=bob#*/", "..", "a b", "é"]),
    )
)
def test_any_accepted_key_round_trips_and_reaches_only_its_row(
    sync_client: TestClient, key: str
) -> None:
    c, user = sync_client, new_user()
    other = c.post(f"{PREFIX}/api/instructions", params={"user_id": "bob"},
                   json={"text": f"Bob's rule {uuid.uuid4().hex[:6]}"})  # fmt: skip
    r = c.post(f"{PREFIX}/api/import", params={"user_id": user}, json=_doc(key, user))
    if not is_valid_key(key):
        assert r.status_code == 422 and r.json()["field"] == "memories[0].key", r.text
        return
    assert r.status_code == 201, r.text
    got = c.get(f"{PREFIX}/api/memories/{quote(key, safe='')}", params={"user_id": user})
    assert got.status_code == 200 and got.json()["key"] == key
    html = c.get(f"{PREFIX}/", params={"user_id": user, "status": "pending"}).text
    links = re.findall(r'hx-post="([^"]*/confirm[^"]*)"', html)
    assert len(links) == 1
    r = c.post(html_unescape(links[0]))
    assert r.status_code == 200 and f'data-key="{key}"' in r.text
    got = c.get(f"{PREFIX}/api/memories/{quote(key, safe='')}", params={"user_id": user})
    assert got.json()["status"] == "active"
    bob = c.get(f"{PREFIX}/api/memories/{other.json()['key']}", params={"user_id": "bob"})
    assert bob.json()["status"] == "active"
