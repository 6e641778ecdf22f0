"""The MCP server through the SDK's own clients: in memory (the tools and the profile
resource), over streamable HTTP at /vault/mcp (the API's keys: a user never reaches another's
memories), and over stdio (``python -m langmem_vault mcp --user-id u``)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from langmem_vault.api import ApiKeyAuth, create_app
from langmem_vault.db._connection import aopen_pool
from langmem_vault.extraction._reconcile import aapply_extraction
from langmem_vault.mcp._server import PROFILE_URI, Caller, build_server
from langmem_vault.memory._models import Extraction, ProposedFact
from langmem_vault.privacy._audit.log import AsyncAuditLog
from langmem_vault.service import Identity, MemoryService
from langmem_vault.store import AsyncVaultStore
from tests.support.embeddings import TrigramEmbeddings

TOOLS = {
    "remember",
    "search_memories",
    "list_memories",
    "forget_memory",
    "confirm_memory",
    "reject_memory",
    "add_instruction",
    "list_instructions",
}
KEYS = {
    "admin-key": Identity.admin("ops"),
    "alice-key": Identity.for_user("alice", name="user:alice"),
    "bob-key": Identity.for_user("bob", name="user:bob"),
}


@pytest.fixture
async def service(pg_uri: str, schema: str) -> AsyncIterator[MemoryService]:
    pool = await aopen_pool(pg_uri, max_size=4)
    index = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}
    store = AsyncVaultStore(pool, schema=schema, index=index)  # type: ignore[arg-type]
    audit = AsyncAuditLog(pool, schema=schema)
    await store.setup()
    await audit.setup()
    # Redaction off here: the service tests cover it (tests/service/test_agent.py), and
    # loading Presidio would double this module's time.
    yield MemoryService(store, audit=audit, component="mcp", redaction=None)
    await pool.close()


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def texts(client: Client, query: str) -> list[str]:
    found = await call(client, "search_memories", query=query)
    return [hit["text"] for hit in found["items"]]


async def test_tools_remember_search_forget(service: MemoryService) -> None:
    async with Client(build_server(Caller(service, "alice"))) as client:
        listed = await client.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        added = await call(client, "remember", text="Alice prefers green tea")
        assert added["outcome"] == "added"
        again = await call(client, "remember", text="Alice prefers green tea")
        assert again["outcome"] == "reinforced"
        assert await texts(client, "green tea") == ["Alice prefers green tea"]
        forgot = await call(client, "forget_memory", key=added["memory"]["key"])
        assert forgot["status"] == "forgotten"
        assert await texts(client, "green tea") == []
        too_long = await client.call_tool("remember", {"text": "x" * 5000})
        assert too_long.is_error and "text" in too_long.content[0].text  # type: ignore[union-attr]
        missing = await client.call_tool("forget_memory", {"key": "nope"})
        assert missing.is_error and "no memory 'nope'" in missing.content[0].text  # type: ignore[union-attr]
    events = await service.audit.query("alice")  # type: ignore[union-attr]
    assert {e.action for e in events} >= {"create", "edit", "delete"}


async def test_pending_confirm_reject_instructions_profile(service: MemoryService) -> None:
    shaky = Extraction(
        facts=[
            ProposedFact(text="Works at Acme", confidence=0.5),
            ProposedFact(text="Owns a red bicycle", confidence=0.5),
        ]
    )
    await aapply_extraction(service.store, shaky, namespaces=service._ns("alice"))
    async with Client(build_server(Caller(service, "alice"))) as client:
        pending = await call(client, "list_memories", status=["pending"])
        by_text = {m["text"]: m["key"] for m in pending["items"]}
        assert set(by_text) == {"Works at Acme", "Owns a red bicycle"}
        confirmed = await call(client, "confirm_memory", key=by_text["Works at Acme"])
        rejected = await call(client, "reject_memory", key=by_text["Owns a red bicycle"])
        assert (confirmed["status"], rejected["status"]) == ("active", "forgotten")
        assert (await call(client, "list_memories", status=["pending"]))["items"] == []

        added = await call(client, "add_instruction", text="Answer in French", priority=8)
        listed = await call(client, "list_instructions")
        assert [i["key"] for i in listed["result"]] == [added["key"]]

        resources = await client.list_resources()
        assert [str(r.uri) for r in resources.resources] == [PROFILE_URI]
        read = await client.read_resource(PROFILE_URI)
        profile = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        assert [f["text"] for f in profile["facts"]] == ["Works at Acme"]
        assert [i["text"] for i in profile["instructions"]] == ["Answer in French"]


# -- over HTTP, with the API's keys -------------------------------------------------------


@asynccontextmanager
async def http_clients(service: MemoryService) -> AsyncIterator[Any]:
    app = create_app(service, auth=ApiKeyAuth(KEYS))

    def connect(key: str | None, query: str = "") -> Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        http = httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), headers=headers, base_url="http://test"
        )
        return Client(streamable_http_client(f"http://test/vault/mcp{query}", http_client=http))

    async with app.router.lifespan_context(app):
        yield connect, app


async def test_http_keys_isolate_users(service: MemoryService) -> None:
    async with http_clients(service) as (connect, app):
        async with connect("alice-key") as alice:
            added = await call(alice, "remember", text="Alice lives in Lyon")
            key = added["memory"]["key"]
            assert await texts(alice, "Lyon") == ["Alice lives in Lyon"]
        async with connect("bob-key") as bob:
            assert await texts(bob, "Lyon") == []
            assert (await call(bob, "list_memories"))["total"] == 0
            taken = await bob.call_tool("forget_memory", {"key": key})
            assert taken.is_error
            read = await bob.read_resource(PROFILE_URI)
            assert json.loads(read.contents[0].text)["facts"] == []  # type: ignore[union-attr]
        async with connect("admin-key", "?user_id=alice") as admin:
            assert await texts(admin, "Lyon") == ["Alice lives in Lyon"]
        assert (await service.aget_memory("alice", key)).status == "active"

        raw = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://test")
        ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        refused = await raw.post("/vault/mcp", json=ping)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        other = await raw.post(
            "/vault/mcp?user_id=alice", json=ping, headers={"Authorization": "Bearer bob-key"}
        )
        assert other.status_code == 403
        nobody = await raw.post(
            "/vault/mcp", json=ping, headers={"Authorization": "Bearer admin-key"}
        )
        assert nobody.status_code == 400 and nobody.json()["field"] == "user_id"


# -- over stdio ---------------------------------------------------------------------------


async def test_stdio_serves_the_configured_user(pg_uri: str, schema: str) -> None:
    env = {
        "LANGMEM_VAULT_DSN": pg_uri,
        "LANGMEM_VAULT_SCHEMA": schema,
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "langmem_vault", "mcp", "--user-id", "u"], env=env
    )
    async with Client(params, read_timeout_seconds=60) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        added = await call(client, "add_instruction", text="Answer briefly")
        assert added["user_id"] == "u"
        read = await client.read_resource(PROFILE_URI)
        profile = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        assert profile["user_id"] == "u"
        assert [i["text"] for i in profile["instructions"]] == ["Answer briefly"]
    pool = await aopen_pool(pg_uri, max_size=1)
    try:
        events = await AsyncAuditLog(pool, schema=schema).query("u")
    finally:
        await pool.close()
    assert [(e.action, e.actor, e.component) for e in events] == [("create", "mcp:u", "mcp")]
