"""The REST API over httpx (ASGI transport) against the real embedded Postgres: auth, user
isolation, errors that name the field with nothing written, audited writes, and the main
flows (list, search, edit, confirm, instructions, categories, trace, analytics, export and
erase)."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from langgraph.graph import START, StateGraph

from langmem_vault.api import LocalOnlyAuth, create_app
from langmem_vault.graphs._state import MemoryState
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.nodes._respond import create_respond_node
from langmem_vault.service import _records as records
from tests.api.conftest import PREFIX, Api


def new_user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


async def add(api: Api, user: str, text: str, **fields: Any) -> str:
    async with api.client("admin-key") as c:
        r = await c.post("/memories", params={"user_id": user}, json={"text": text, **fields})
    assert r.status_code == 201, r.text
    return str(r.json()["key"])


# -- auth --------------------------------------------------------------------------------


async def test_requests_without_a_valid_key_are_refused(api: Api) -> None:
    for key in (None, "wrong-key"):
        async with api.client(key) as c:
            r = await c.get("/memories")
        assert r.status_code == 401
        assert r.json()["field"] == "authorization"
        assert r.headers["www-authenticate"] == "Bearer"


async def test_a_user_key_acts_for_its_user_and_an_admin_must_name_one(api: Api) -> None:
    async with api.client("alice-key") as c:
        assert (await c.get("/memories")).status_code == 200
    async with api.client("admin-key") as c:
        r = await c.get("/memories")
        assert r.status_code == 400
        assert r.json()["field"] == "user_id"
        assert (await c.get("/memories", params={"user_id": "alice"})).status_code == 200


# -- isolation ---------------------------------------------------------------------------


async def test_a_user_never_reads_or_changes_another_users_memories(api: Api) -> None:
    async with api.client("alice-key") as alice:
        r = await alice.post("/memories", json={"text": "Alice's secret plan", "tags": ["x"]})
        assert r.status_code == 201
        key = r.json()["key"]
    async with api.client("bob-key") as bob:
        # Naming alice is refused; her key under bob's own namespace is not found.
        assert (await bob.get("/memories", params={"user_id": "alice"})).status_code == 403
        assert (await bob.get(f"/memories/{key}")).status_code == 404
        r = await bob.patch(f"/memories/{key}", json={"text": "hijacked"})
        assert r.status_code == 404
        assert (await bob.delete(f"/memories/{key}", params={"hard": True})).status_code == 404
        assert (await bob.post(f"/memories/{key}/confirm")).status_code == 404
        listed = (await bob.get("/memories")).json()
        assert key not in [m["key"] for m in listed["items"]]
        found = (await bob.get("/memories/search", params={"q": "secret plan"})).json()
        assert found["items"] == []
    async with api.client("alice-key") as alice:
        mine = (await alice.get(f"/memories/{key}")).json()
    assert mine["text"] == "Alice's secret plan"
    assert mine["status"] == "active"


async def test_a_user_cannot_read_another_users_thread_or_its_trace(api: Api) -> None:
    thread = await run_turn(api, "alice", f"t-{uuid.uuid4().hex[:6]}", "What tea do I like?")
    async with api.client("bob-key") as bob:
        assert (await bob.get(f"/threads/{thread}")).status_code == 404
        assert (await bob.get(f"/threads/{thread}/trace")).status_code == 404
    async with api.client("alice-key") as alice:
        assert (await alice.get(f"/threads/{thread}/trace")).status_code == 200


# -- errors ------------------------------------------------------------------------------


async def test_bad_input_names_the_field_and_writes_nothing(api: Api) -> None:
    user = new_user()
    async with api.client("admin-key") as c:
        params = {"user_id": user}
        cases = [
            ({"text": "Likes tea", "confidence": 2}, "confidence"),
            ({"text": ""}, "text"),
            ({"text": "Likes tea", "category": "nonsense"}, "category"),
            ({"text": "Likes tea", "colour": "red"}, "colour"),
        ]
        for body, field in cases:
            r = await c.post("/memories", params=params, json=body)
            assert r.status_code == 422, body
            assert r.json()["field"] == field
            assert r.json()["error"] == "InvalidInput"
        assert (await c.get("/memories", params=params)).json()["total"] == 0
        r = await c.get("/memories/search", params={**params, "q": "tea", "search_type": "fuzzy"})
        assert (r.status_code, r.json()["field"]) == (422, "search_type")

        r = await c.post("/instructions", params=params, json={"text": "Be brief", "priority": 3})
        key = r.json()["key"]
        r = await c.patch(f"/instructions/{key}", params=params, json={"priority": 11})
        assert (r.status_code, r.json()["field"]) == (422, "priority")
        r = await c.patch(f"/instructions/{key}", params=params, json={"condition": "when ??"})
        assert r.status_code in (400, 422)
        assert r.json()["field"] == "condition"
        shown = (await c.get("/instructions", params=params)).json()
        assert [(i["priority"], i["value"]["condition"]) for i in shown] == [(3, None)]

        r = await c.put("/categories/trip", params=params, json={"colour": "blue"})
        assert (r.status_code, r.json()["field"]) == (422, "colour")
        names = [x["name"] for x in (await c.get("/categories", params=params)).json()]
        assert "trip" not in names


async def test_erase_needs_the_user_id_repeated(api: Api) -> None:
    user = new_user()
    key = await add(api, user, "Keeps bees")
    async with api.client("admin-key") as c:
        r = await c.post("/erase", params={"user_id": user}, json={"confirm": "someone-else"})
        assert (r.status_code, r.json()["field"]) == (400, "confirm")
        assert (await c.get(f"/memories/{key}", params={"user_id": user})).status_code == 200
        r = await c.post("/erase", params={"user_id": user}, json={"confirm": user})
        assert r.status_code == 200
        assert r.json()["store_items"] >= 1
        assert (await c.get(f"/memories/{key}", params={"user_id": user})).status_code == 404


# -- audit -------------------------------------------------------------------------------


async def test_writes_are_audited_with_the_acting_identity(api: Api) -> None:
    async with api.client("bob-key") as bob:
        key = (await bob.post("/memories", json={"text": "Bob rides a bike"})).json()["key"]
        r = await bob.patch(f"/memories/{key}", json={"confidence": 0.4})
        assert r.status_code == 200
        log = (await bob.get("/audit", params={"memory_key": key})).json()
    actions = {(e["action"], e["actor"], e["component"]) for e in log}
    assert ("create", "user:bob", "api") in actions
    assert ("edit", "user:bob", "api") in actions
    # The admin's writes carry the admin's name, not the user's.
    user = new_user()
    key = await add(api, user, "Admin wrote this")
    records = await api.service.audit.query(user, memory_key=key)  # type: ignore[union-attr]
    assert {(r.action.value, r.actor) for r in records} >= {("create", "ops")}


# -- flows -------------------------------------------------------------------------------


async def test_list_filters_search_update_and_soft_delete(api: Api) -> None:
    user = new_user()
    params = {"user_id": user}
    tea = await add(api, user, "Prefers green tea in the morning", category="preference")
    job = await add(api, user, "Works at Acme as an engineer", category="company", tags=["work"])
    async with api.client("admin-key") as c:
        page = (
            await c.get("/memories", params={**params, "category": "company", "exact_total": True})
        ).json()
        assert (page["total"], [m["key"] for m in page["items"]]) == (1, [job])
        page = (await c.get("/memories", params={**params, "tags": ["work"]})).json()
        assert [m["key"] for m in page["items"]] == [job]
        page = (await c.get("/memories", params={**params, "limit": 1})).json()
        assert (page["total"], len(page["items"])) == (2, 1)

        found = (await c.get("/memories/search", params={**params, "q": "green tea"})).json()
        assert found["items"][0]["key"] == tea
        assert found["items"][0]["match_type"] in ("text", "both")
        only_text = await c.get(
            "/memories/search", params={**params, "q": "green tea", "search_type": "text"}
        )
        assert {h["match_type"] for h in only_text.json()["items"]} == {"text"}

        r = await c.patch(f"/memories/{tea}", params=params, json={"text": "Prefers oolong tea"})
        assert r.json()["text"] == "Prefers oolong tea"
        found = await c.get(
            "/memories/search", params={**params, "q": "oolong", "search_type": "semantic"}
        )
        assert tea in [h["key"] for h in found.json()["items"]]  # re-embedded

        r = await c.delete(f"/memories/{job}", params=params)
        assert r.json()["status"] == "forgotten"
        active = (await c.get("/memories", params={**params, "status": "active"})).json()
        assert [m["key"] for m in active["items"]] == [tea]
        r = await c.post(f"/memories/{job}/restore", params=params)
        assert r.json()["status"] == "active"


async def test_confirm_and_reject_pending_memories(api: Api) -> None:
    user = new_user()
    params = {"user_id": user}
    keep = await add(api, user, "Moved to Lyon")
    drop = await add(api, user, "Owns a boat")
    for key in (keep, drop):
        await api.service.aedit_memory(user, key, status="pending")
    async with api.client("admin-key") as c:
        pending = (
            await c.get("/memories", params={**params, "status": "pending", "exact_total": True})
        ).json()
        assert pending["total"] == 2
        assert (await c.post(f"/memories/{keep}/confirm", params=params)).json()["status"] == (
            "active"
        )
        assert (await c.post(f"/memories/{drop}/reject", params=params)).json()["status"] == (
            "forgotten"
        )
        r = await c.post(f"/memories/{keep}/confirm", params=params)
        assert (r.status_code, r.json()["field"]) == (422, "status")
        report = (await c.get("/analytics", params=params)).json()
    assert report["confirmations"] == {"confirmed": 1, "rejected": 1, "rate": 0.5}


async def test_instructions_priority_range_and_active_toggle(api: Api) -> None:
    user = new_user()
    params = {"user_id": user}
    async with api.client("admin-key") as c:
        for text, priority in (("Answer in French", 8), ("Be brief", 3)):
            r = await c.post(
                "/instructions", params=params, json={"text": text, "priority": priority}
            )
            assert r.status_code == 201
        listed = (await c.get("/instructions", params=params)).json()
        assert [i["priority"] for i in listed] == [8, 3]
        high = (await c.get("/instructions", params={**params, "min_priority": 5})).json()
        assert [i["text"] for i in high] == ["Answer in French"]
        key = listed[1]["key"]
        r = await c.patch(f"/instructions/{key}", params=params, json={"active": False})
        assert r.json()["status"] == "disabled"
        active = (await c.get("/instructions", params={**params, "active_only": True})).json()
        assert [i["text"] for i in active] == ["Answer in French"]
        assert (await c.delete(f"/instructions/{key}", params=params)).status_code == 200
        assert len((await c.get("/instructions", params=params)).json()) == 1


async def test_user_categories_count_facts_by_tag(api: Api) -> None:
    user = new_user()
    params = {"user_id": user}
    await add(api, user, "Booked the hotel near the Pantheon", category="project", tags=["rome"])
    async with api.client("admin-key") as c:
        r = await c.put(
            "/categories/rome",
            params=params,
            json={"colour": "#ff0000", "description": "Rome trip", "parent": "project"},
        )
        assert r.status_code == 200
        r = await c.put("/categories/project", params=params, json={"parent": "rome"})
        assert (r.status_code, r.json()["field"]) == (422, "parent")
        cats = {x["name"]: x for x in (await c.get("/categories", params=params)).json()}
    assert (cats["rome"]["count"], cats["rome"]["colour"], cats["rome"]["parent"]) == (
        1,
        "#ff0000",
        "project",
    )
    assert cats["project"]["count"] == 1
    assert cats["project"]["last_used"] is not None


async def run_turn(api: Api, user: str, thread: str, question: str) -> str:
    """One real turn: inject (on the API's store) then respond citing [M1], checkpointed by
    the API's saver."""
    service = api.service
    if not (await service.alist_memories(user, kind="semantic")).total:
        await service.aadd_memory(user, "Likes jasmine tea", category="preference")
        await service.aadd_memory(user, "Works at Acme", category="company")
    model = FakeListChatModel(responses=["You like jasmine tea [M1]."])
    graph = (
        StateGraph(MemoryState)
        .add_node("inject", create_inject_node())
        .add_node("respond", create_respond_node(model))
        .add_edge(START, "inject")
        .add_edge("inject", "respond")
        .compile(store=service.store, checkpointer=service.saver)
    )
    config = {"configurable": {"thread_id": thread, "user_id": user}}
    await graph.ainvoke({"messages": [HumanMessage(question)]}, config)  # type: ignore[arg-type]
    return thread


async def test_injection_trace_shows_scores_and_citations(api: Api) -> None:
    user = new_user()
    thread = await run_turn(api, user, f"t-{uuid.uuid4().hex[:6]}", "Which tea do I like?")
    async with api.client("admin-key") as c:
        threads = (await c.get("/threads", params={"user_id": user})).json()
        assert [t["thread_id"] for t in threads] == [thread]
        trace = (await c.get(f"/threads/{thread}/trace", params={"user_id": user})).json()
    assert trace["question"] == "Which tea do I like?"
    assert trace["answer"] == "You like jasmine tea [M1]."
    assert trace["cited"] == ["M1"]
    first = trace["memories"][0]
    assert (first["alias"], first["text"], first["cited"]) == ("M1", "Likes jasmine tea", True)
    for part in ("relevance", "confidence", "recency", "utility", "score"):
        assert isinstance(first[part], float), part
    assert first["confidence"] == 1.0
    assert not any(m["cited"] for m in trace["memories"][1:])


async def test_analytics_and_csv_export(api: Api) -> None:
    user = new_user()
    params = {"user_id": user}
    await add(api, user, "Plays the cello", category="skill")
    await add(api, user, "Has two cats", category="personal")
    async with api.client("admin-key") as c:
        await c.get("/memories/search", params={**params, "q": "cello"})
        report = (await c.get("/analytics", params={**params, "days": 7})).json()
        csv = await c.get("/export.csv", params=params)
    assert report["stats"]["by_category"] == {"skill": 1, "personal": 1}
    assert len(report["stats"]["growth"]) == 7
    assert report["stats"]["growth"][-1]["total"] == 2
    assert report["usage"]["manual"] == 2
    assert report["latency_ms"]["search"]["count"] >= 1
    assert csv.headers["content-type"].startswith("text/csv")
    assert sorted(csv.text.splitlines()[1:])[0].split(",")[1] in ("Has two cats", "Plays the cello")


async def test_the_dashboards_tabs_count_each_status_capped(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = new_user()
    for n in range(3):
        await add(api, user, f"Fact {n}")
    closed = await add(api, user, "Old fact")
    async with api.client("admin-key") as c:
        assert (await c.delete(f"/memories/{closed}", params={"user_id": user})).status_code == 200
    monkeypatch.setattr(records, "TOTAL_LIMIT", 2)  # 3 active: more than the cap
    headers = {"Authorization": "Bearer admin-key"}
    transport = httpx.ASGITransport(app=api.app)
    async with httpx.AsyncClient(
        transport=transport, base_url=f"http://test{PREFIX}", headers=headers
    ) as c:
        html = (await c.get("/", params={"user_id": user})).text
    tabs = dict(re.findall(r'data-tab="(\w+)">\w+<span class="n">([^<]*)</span>', html))
    assert tabs == {"active": "2+", "pending": "0", "superseded": "1", "expired": "0"}
    assert 'id="total">2+ memories' in html


async def test_openapi_documents_the_routes_under_the_prefix(api: Api) -> None:
    transport = __import__("httpx").ASGITransport(app=api.app)
    async with __import__("httpx").AsyncClient(transport=transport, base_url="http://t") as c:
        spec = (await c.get("/vault/openapi.json")).json()
    paths = set(spec["paths"])
    for path in (
        "/vault/api/memories",
        "/vault/api/memories/search",
        "/vault/api/analytics",
        "/vault/api/threads/{thread_id}/trace",
        "/vault/api/instructions/{key}",
    ):
        assert path in paths
    assert not any(p.startswith("/vault/ui") for p in paths)  # the dashboard is not API


async def test_without_auth_only_local_clients_are_served(api: Api) -> None:
    app = create_app(api.service, auth=LocalOnlyAuth())
    for client, status in ((("127.0.0.1", 5000), 200), (("10.1.2.3", 5000), 403)):
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as c:
            r = await c.get("/memories", params={"user_id": new_user()})
        assert r.status_code == status, client
    assert "only local clients" in r.json()["message"]


LOCAL = "http://127.0.0.1:8765/vault/api"


def local_client(api: Api, base_url: str = LOCAL) -> httpx.AsyncClient:
    """A loopback client of an app without API keys (local-only access)."""
    app = create_app(api.service, auth=LocalOnlyAuth())
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
    return httpx.AsyncClient(transport=transport, base_url=base_url)


async def test_another_sites_page_cannot_write_through_the_operators_browser(api: Api) -> None:
    user = new_user()
    body = {"text": "Lives in Lyon"}
    async with local_client(api) as c:
        refused = [
            await c.post("/memories", params={"user_id": user}, json=body, headers=headers)
            for headers in (
                {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
                {"Sec-Fetch-Site": "same-site"},
                {"Origin": "https://evil.example"},  # a browser without Fetch Metadata
                {"Origin": "null"},  # a sandboxed frame
            )
        ]
        assert [r.status_code for r in refused] == [403] * 4, [r.text for r in refused]
        assert "cross-site request refused" in refused[0].json()["message"]
        assert (await c.get("/memories", params={"user_id": user})).json()["items"] == []
        # The dashboard's own pages, clients that are not browsers, and requests carrying
        # credentials a page cannot make a browser add (a CORS preflight would stop it) write.
        same = {"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8765"}
        keyed = {"Sec-Fetch-Site": "cross-site", "Authorization": "Bearer k"}
        for headers in (same, {"Origin": "http://127.0.0.1:8765"}, {}, keyed):
            r = await c.post("/memories", params={"user_id": user}, json=body, headers=headers)
            assert r.status_code == 201, (headers, r.text)


async def test_routes_outside_the_prefix_are_not_guarded(api: Api) -> None:
    # Mounted in a LangGraph server, the app's middleware sees the server's own routes too;
    # Studio posts to them from its own site.
    app = create_app(api.service, auth=LocalOnlyAuth())
    app.add_api_route("/runs", lambda: {"ok": True}, methods=["POST"])
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:2024") as c:
        studio = {"Sec-Fetch-Site": "cross-site", "Origin": "https://smith.langchain.com"}
        assert (await c.post("/runs", headers=studio)).status_code == 200
        assert (await c.post("/vault/ui/erase", headers=studio)).status_code == 403


async def test_local_only_access_refuses_names_that_are_not_local(api: Api) -> None:
    # DNS rebinding: a page's own name re-pointed at 127.0.0.1 reaches the server with its
    # name in Host; reads must be refused too, since the page could see the answer.
    async with local_client(api, "http://rebound.evil.example:8765/vault/api") as c:
        r = await c.get("/memories", params={"user_id": new_user()})
    assert r.status_code == 403
    assert "local address" in r.json()["message"]
    for base in ("http://localhost:8765/vault/api", "http://[::1]:8765/vault/api"):
        async with local_client(api, base) as c:
            assert (await c.get("/memories", params={"user_id": new_user()})).status_code == 200


def test_api_keys_from_the_environment() -> None:
    import pytest

    from langmem_vault.api import ApiKeyAuth

    assert ApiKeyAuth.from_env({}) is None
    auth = ApiKeyAuth.from_env(
        {"LANGMEM_VAULT_ADMIN_KEY": "a1", "LANGMEM_VAULT_API_KEYS": "alice=k1, bob=k2"}
    )
    assert auth is not None
    admin, alice = auth.identity_for("a1"), auth.identity_for("k1")
    assert admin is not None and admin.is_admin
    assert alice is not None and (alice.user_id, alice.is_admin) == ("alice", False)
    assert auth.identity_for("k3") is None
    with pytest.raises(ValueError, match="LANGMEM_VAULT_API_KEYS"):
        ApiKeyAuth.from_env({"LANGMEM_VAULT_API_KEYS": "alice"})
