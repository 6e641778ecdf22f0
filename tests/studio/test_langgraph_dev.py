"""``langgraph dev`` serving the repository's langgraph.json: VaultStore and VaultSaver are the
server's store and checkpointer, seen through ``langgraph-sdk`` and the server's store API.

One server per module (it takes seconds to start; tests/support/langgraph_dev.py), without
API keys: the local-only rule lets this machine's clients in.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from langmem_vault import AsyncVaultStore
from tests.support.langgraph_dev import DevServer, running_dev_server

USER = {"user_id": "dana.k@example.com"}
SEMANTIC = ["memories", "dana%2Ek@example%2Ecom", "semantic"]


@pytest.fixture(scope="module")
def dev_server(pg_uri: str) -> Iterator[DevServer]:
    with running_dev_server(pg_uri) as server:
        yield server


@pytest.fixture
async def client(dev_server: DevServer) -> AsyncIterator[Any]:
    sdk = get_client(url=dev_server.url)
    yield sdk
    await sdk.http.client.aclose()


def _turn(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_studio_form_asks_for_messages_and_a_user_id(client: Any) -> None:
    assistants = await client.assistants.search(graph_id="memory_graph")
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    assert sorted(schemas["input_schema"]["properties"]) == ["messages"]
    assert "user_id" in schemas["context_schema"]["properties"]
    assert "extraction" not in schemas["output_schema"]["properties"]


async def test_memory_from_one_thread_is_injected_in_the_next(
    client: Any, dev_server: DevServer, pg_uri: str
) -> None:
    first = await client.threads.create()
    said = _turn("I live in Lyon and I work at Acme Robotics.")
    run = await client.runs.create(first["thread_id"], "memory_graph", input=said, context=USER)
    await client.runs.join(first["thread_id"], run["run_id"])
    assert (await client.runs.get(first["thread_id"], run["run_id"]))["status"] == "success"

    second = await client.threads.create()
    events = [
        part
        async for part in client.runs.stream(
            second["thread_id"],
            "memory_graph",
            input=_turn("Where do I work?"),
            context=USER,
            stream_mode=["custom", "values"],
        )
    ]
    injected = [e.data for e in events if e.event == "custom"]
    assert injected and injected[0]["type"] == "memory_injected"
    assert "User works at Acme Robotics" in injected[0]["preview"]

    state = (await client.threads.get_state(second["thread_id"]))["values"]
    assert "User works at Acme Robotics" in state["memory_context"]
    assert state["cited"], state["messages"][-1]
    cited_key = state["memory_refs"][state["cited"][0]]
    assert "Acme Robotics" in state["messages"][-1]["content"]

    # The fact the first thread taught, through the server's own store API...
    found = await client.store.search_items(SEMANTIC, query="where does the user work")
    by_key = {item["key"]: item["value"]["text"] for item in found["items"]}
    assert by_key[cited_key] == "User works at Acme Robotics"
    # ...is a VaultStore row in Postgres (not the in-memory store of the dev server).
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=dev_server.schema) as store:
        item = await store.aget(tuple(SEMANTIC), cited_key)
    assert item is not None and item.value["text"] == "User works at Acme Robotics"


def test_vault_redirects_and_its_docs_load_nothing_from_another_site(
    dev_server: DevServer,
) -> None:
    with httpx.Client(base_url=dev_server.url, trust_env=False) as http:
        bare = http.get("/vault")
        assert bare.status_code in (307, 308) and bare.headers["location"].endswith("/vault/")
        assert http.get("/vault", follow_redirects=True).status_code == 200
        page = http.get("/vault/docs").text
        assets = re.findall(r'(?:href|src)="([^"]+)"', page)
        assert "://" not in page  # no CDN: Swagger UI's files come from the server itself
        assert {a.rsplit("/", 1)[-1] for a in assets} >= {"swagger-ui.css", "swagger-ui-bundle.js"}
        for asset in assets:
            assert http.get(asset).status_code == 200, asset
        (bundle,) = [a for a in assets if a.endswith("/swagger-ui-bundle.js")]
        assert "SwaggerUIBundle" in http.get(bundle).text


def test_the_start_says_it_serves_local_clients_only_and_no_more(dev_server: DevServer) -> None:
    log = dev_server.log_text()
    assert "no API keys configured" in log and "serves only local clients" in log
    assert "Loaded recognizer" not in log  # Presidio's per-recognizer lines are DEBUG


def test_stopped_by_pid_without_blocking_network_or_orphans(dev_server: DevServer) -> None:
    dev_server.stop()
    log = dev_server.log_text()
    assert "Blocking call" not in log, log
    assert dev_server.network.seen == [], dev_server.network.seen
    assert dev_server.survivors == []
    assert dev_server.process.returncode is not None
