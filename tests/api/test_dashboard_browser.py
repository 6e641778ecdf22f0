"""The dashboard in headless Chromium (Debian's ``chromium``, driven by Playwright) against a
uvicorn server started once for this module, on the real embedded Postgres.

Each flow checks what the page shows and what the database holds afterwards (read back
through a second, synchronous MemoryService on the same schema), and saves a screenshot under
``bench/out/`` (ignored by git).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from langgraph.graph import START, StateGraph

from langmem_vault.api import LocalOnlyAuth, create_app
from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver
from langmem_vault.db._connection import aopen_pool, open_pool
from langmem_vault.graphs._state import MemoryState
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.nodes._respond import create_respond_node
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
from langmem_vault.service import MemoryService
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.embeddings import TrigramEmbeddings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(
        "Debian's chromium is not installed: apt-get install chromium", allow_module_level=True
    )
sync_api = pytest.importorskip("playwright.sync_api")

OUT = Path(__file__).resolve().parents[2] / "bench" / "out"
PREFIX = "/vault"
USER = "alice"


def index() -> dict[str, Any]:
    return {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text", "summary"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def db(pg_uri: str) -> Iterator[MemoryService]:
    """A schema for this module and a sync service on it (seeding and checking the DB)."""
    schema = f"t_dash_{uuid.uuid4().hex[:10]}"
    pool = open_pool(pg_uri, max_size=2)
    store = VaultStore(pool, schema=schema, index=index())  # type: ignore[arg-type]
    store.setup()
    saver = VaultSaver(pool, schema=schema)
    saver.setup()
    audit = AuditLog(pool, schema=schema)
    audit.setup()
    yield MemoryService(store, saver=saver, audit=audit, component="test")
    pool.close()
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(scope="module")
def server(pg_uri: str, db: MemoryService) -> Iterator[str]:
    """uvicorn serving the app (no auth: local clients only) in a thread; yields its URL."""
    import uvicorn

    schema = db.store.schema  # type: ignore[attr-defined]

    @asynccontextmanager
    async def open_service() -> AsyncIterator[MemoryService]:
        pool = await aopen_pool(pg_uri, max_size=4)
        try:
            yield MemoryService(
                AsyncVaultStore(pool, schema=schema, index=index()),  # type: ignore[arg-type]
                saver=AsyncVaultSaver(pool, schema=schema),
                audit=AsyncAuditLog(pool, schema=schema),
                component="api",
            )
        finally:
            await pool.close()

    app = create_app(open_service, prefix=PREFIX, auth=LocalOnlyAuth())
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(uv.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the dashboard server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}{PREFIX}"
    uv.should_exit = True
    thread.join(timeout=30)


@pytest.fixture(scope="module")
def seeded(db: MemoryService) -> dict[str, str]:
    """alice's memories (one pending), two instructions and one answered thread."""
    keys = {
        "tea": db.add_memory(USER, "Prefers green tea", category="preference").key,
        "job": db.add_memory(USER, "Works at Acme", category="company", tags=["work"]).key,
        "lyon": db.add_memory(USER, "Moved to Lyon", category="personal").key,
        "french": db.add_instruction(USER, "Answer in French", priority=5).key,
    }
    db.add_instruction(USER, "Keep answers short", priority=3)
    db.edit_memory(USER, keys["lyon"], status="pending")
    model = FakeListChatModel(responses=["You prefer green tea [M1]."])
    graph = (
        StateGraph(MemoryState)
        .add_node("inject", create_inject_node(max_pending=0))
        .add_node("respond", create_respond_node(model))
        .add_edge(START, "inject")
        .add_edge("inject", "respond")
        .compile(store=db.store, checkpointer=db.saver)
    )
    config = {"configurable": {"thread_id": "chat-1", "user_id": USER}}
    graph.invoke({"messages": [HumanMessage("Which tea do I like?")]}, config)  # type: ignore[arg-type]
    return keys


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    refused: list[str] = []  # the Content-Security-Policy must never block our own page
    tab.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    yield tab
    context.close()
    assert not refused, refused


def shot(page: Any, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"dashboard-{name}.png"), full_page=True)


def row(page: Any, key: str) -> Any:
    return page.locator(f'tr[data-key="{key}"]')


def test_memory_list_loads_with_badges_and_confidence(
    page: Any, server: str, seeded: dict[str, str], db: MemoryService
) -> None:
    page.goto(f"{server}/?user_id={USER}")
    assert page.locator("h1").inner_text() == f"Memories of {USER}"
    assert "No auth is configured" in page.locator(".notice").inner_text()
    shown = page.locator("#memories tbody tr .text").all_inner_texts()
    active = db.list_memories(USER, kind="semantic", status=["active"]).items
    assert sorted(shown) == sorted(m.text for m in active)
    badge = row(page, seeded["tea"]).locator(".badge")
    assert badge.inner_text() == "preference"
    assert "rgb(37, 99, 235)" in badge.evaluate("e => getComputedStyle(e).backgroundColor")
    assert page.locator('[data-tab="pending"] .n').inner_text() == "1"
    shot(page, "memories")


def test_dashboard_fits_a_tablet(page: Any, server: str, seeded: dict[str, str]) -> None:
    page.set_viewport_size({"width": 820, "height": 1180})
    page.goto(f"{server}/?user_id={USER}")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    assert row(page, seeded["tea"]).locator("[data-action=edit]").is_visible()
    shot(page, "memories-tablet")


def test_search(page: Any, server: str, seeded: dict[str, str], db: MemoryService) -> None:
    page.goto(f"{server}/?user_id={USER}")
    page.fill("#search", "green tea")
    page.select_option("select[name=search_type]", "text")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**q=green+tea**")
    texts = page.locator("#memories tbody tr .text").all_inner_texts()
    assert texts == ["Prefers green tea"]
    assert "relevance 1.00 · text" in row(page, seeded["tea"]).inner_text()
    hits = db.search_memories(USER, "green tea", search_type="text", status=["active"]).items
    assert [h.key for h in hits] == [seeded["tea"]]
    shot(page, "search")


def test_edit_a_memory_inline(
    page: Any, server: str, seeded: dict[str, str], db: MemoryService
) -> None:
    key = seeded["job"]
    page.goto(f"{server}/?user_id={USER}")
    row(page, key).locator("[data-action=edit]").click()
    row(page, key).locator("textarea[name=text]").fill("Works at Initech as a designer")
    row(page, key).locator("input[name=confidence]").fill("0.8")
    row(page, key).locator("[data-action=save]").click()
    page.wait_for_selector(f'tr[data-key="{key}"]:not(.editing)')
    assert row(page, key).locator(".text").inner_text() == "Works at Initech as a designer"
    stored = db.get_memory(USER, key)
    assert (stored.text, stored.confidence) == ("Works at Initech as a designer", 0.8)
    events = db.audit_log(USER, memory_key=key, actions=["edit"])
    assert [e.actor for e in events] == ["local"]
    shot(page, "edit")


def test_confirm_a_pending_memory(
    page: Any, server: str, seeded: dict[str, str], db: MemoryService
) -> None:
    key = seeded["lyon"]
    page.goto(f"{server}/?user_id={USER}&status=pending")
    assert row(page, key).get_attribute("data-status") == "pending"
    shot(page, "pending")
    row(page, key).locator("[data-action=confirm]").click()
    page.wait_for_selector(f'tr[data-key="{key}"][data-status=active]')
    assert row(page, key).locator("[data-action=confirm]").count() == 0
    assert db.get_memory(USER, key).status == "active"


def test_change_an_instructions_priority_and_toggle_it(
    page: Any, server: str, seeded: dict[str, str], db: MemoryService
) -> None:
    key = seeded["french"]
    page.goto(f"{server}/instructions?user_id={USER}")
    line = row(page, key)
    assert line.locator("output").inner_text() == "5"
    line.locator("[data-action=up]").click()
    # a locator, not wait_for_function: the page's CSP runs no string as script (no eval)
    row(page, key).locator("output", has_text="6").wait_for()
    assert db.get_memory(USER, key).priority == 6
    row(page, key).locator("[data-action=toggle]").click()
    page.wait_for_selector(f'tr[data-key="{key}"][data-status=disabled]')
    assert db.get_memory(USER, key).status == "disabled"
    shot(page, "instructions")


def test_analytics_page_draws_its_charts(
    page: Any, server: str, seeded: dict[str, str], db: MemoryService
) -> None:
    page.goto(f"{server}/analytics?user_id={USER}")
    page.wait_for_selector("body[data-charts-ready]")
    for chart in ("growth", "categories"):
        size = page.locator(f"canvas#{chart}").bounding_box()
        assert size is not None and size["width"] > 100 and size["height"] > 100
    active = db.list_memories(USER, kind="semantic", status=["active"], exact_total=True).total
    assert page.locator('[data-stat="active"] b').inner_text() == str(active)
    stats = db.stats(USER)
    shown = page.evaluate("JSON.parse(document.getElementById('chart-data').textContent)")
    assert shown["categories"]["labels"] == list(stats.by_category)
    assert shown["growth"]["cumulative"][-1] == stats.growth[-1].total
    shot(page, "analytics")


def test_thread_view_shows_the_injection_trace(
    page: Any, server: str, seeded: dict[str, str]
) -> None:
    page.goto(f"{server}/threads?user_id={USER}")
    page.click("text=chat-1")
    page.wait_for_selector("#trace")
    cited = page.locator("#trace tr.cited")
    assert cited.count() == 1
    assert "Prefers green tea" in cited.inner_text()
    assert page.locator('#trace tr[data-alias="M1"] td').nth(3).inner_text() != "–"
    shot(page, "thread")


def test_erase_asks_for_the_user_id_first(page: Any, server: str, db: MemoryService) -> None:
    user = "carol"
    db.add_memory(user, "Carol collects stamps")
    page.goto(f"{server}/privacy?user_id={user}")
    assert page.locator("#export-json").get_attribute("href").endswith(f"user_id={user}")
    page.fill("#erase-confirm", "not-carol")
    page.click("#erase-button")
    assert "does not match" in page.locator(".error").inner_text()
    assert db.list_memories(user).total == 1
    page.fill("#erase-confirm", user)
    page.click("#erase-button")
    assert "Erased" in page.locator("#erased").inner_text()
    shot(page, "erase")
    assert not db.user_exists(user)


# -- a planted key never turns an admin's click against another user ----------------------


def _planted(target: str) -> dict[str, str]:
    """Keys that, spliced raw into a URL, resolve to an action on one of bob's records;
    stored the way data written before the key rule may hold them (a raw store put: every
    write path now refuses such keys, see test_import_refuses_a_planted_key)."""
    return {
        # from /vault/ui/memories/<key>/<action> to /vault/ui/instructions/<bob's>/delete
        "instruction": f"x/*/../../../instructions/{target}/delete?user_id=bob#*/",
        # from /vault/ui/memories/<key>/<action> to /vault/ui/memories/<bob's>/delete
        "memory": "x/*/../../{memory}/delete?user_id=bob#*/",
    }


def test_a_planted_key_reaches_no_other_user_through_any_action(
    page: Any, server: str, db: MemoryService
) -> None:
    from langmem_vault.memory._models import Instruction, SemanticFact
    from langmem_vault.memory._namespaces import MemoryNamespaces

    bob_rule = db.add_instruction("bob", "Bob's standing rule", priority=4).key
    bob_fact = db.add_memory("bob", "Bob likes chess").key
    ns = MemoryNamespaces().resolve({"configurable": {"user_id": "mallory"}})
    templates = _planted(bob_rule)
    planted = [templates["instruction"], templates["memory"].format(memory=bob_fact)]
    for key in planted:
        fact = SemanticFact(text=f"Planted {len(key)}", status="pending_confirmation")
        db.store.put(ns.semantic, key, fact.to_store())
        db.store.put(ns.instructions, key, Instruction(text=f"Planted rule {len(key)}").to_store())

    sent: list[str] = []
    page.on("request", lambda r: sent.append(f"{r.method} {r.url}") if "/ui/" in r.url else None)
    page.on("dialog", lambda d: d.accept())

    def click(locator: Any) -> None:
        with page.expect_response(lambda r: "/ui/" in r.url):
            locator.click()

    for key in planted:
        for action in ("confirm", "reject", "edit", "delete"):
            page.goto(f"{server}/?user_id=mallory&status=pending")
            click(row(page, key).locator(f"[data-action={action}]"))
        page.goto(f"{server}/instructions?user_id=mallory")
        for action in ("up", "toggle"):
            click(row(page, key).locator(f"[data-action={action}]"))
        click(row(page, key).locator("button.danger"))

    assert len(sent) == 2 * 7
    for request in sent:  # each went to mallory's row, the key one encoded path segment
        url = urlsplit(request.split(" ", 1)[1])
        assert parse_qs(url.query)["user_id"] == ["mallory"], request
        assert url.path.startswith((f"{PREFIX}/ui/memories/x%2F", f"{PREFIX}/ui/instructions/x%2F"))
    rule, fact = db.get_memory("bob", bob_rule), db.get_memory("bob", bob_fact)
    assert (rule.status, rule.priority, fact.status) == ("active", 4, "active")
    assert db.audit_log("bob", actions=["edit", "delete"]) == []
