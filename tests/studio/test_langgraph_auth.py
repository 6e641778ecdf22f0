"""``langgraph dev`` with API keys: the server's own endpoints (``/store``, ``/threads``,
``/runs``) authenticate with the REST API's keys and scope everything to the caller's user
(``langmem_vault.api.langgraph_auth``, named in langgraph.json).

One server for the module, with two user keys and an admin key. Alice's run states a fact
while naming Bob in its context (the key, not the request, decides who the run acts for);
every test reads what it left.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from tests.support.langgraph_dev import DevServer, running_dev_server

KEYS = {"alice": "key-alice-0123456789", "bob": "key-bob-0123456789"}
ADMIN_KEY = "key-admin-0123456789"
FACT = "User works at Acme Robotics"


@pytest.fixture(scope="module")
def keyed_server(pg_uri: str) -> Iterator[DevServer]:
    environ = {
        "LANGMEM_VAULT_API_KEYS": ",".join(f"{user}={key}" for user, key in KEYS.items()),
        "LANGMEM_VAULT_ADMIN_KEY": ADMIN_KEY,
    }
    with running_dev_server(pg_uri, environ) as server:
        yield server


def _client(server: DevServer, key: str) -> Any:
    return get_client(url=server.url, headers={"Authorization": f"Bearer {key}"})


@pytest.fixture(scope="module")
async def alice_thread(keyed_server: DevServer) -> AsyncIterator[str]:
    """A thread of Alice's whose run stated a fact (asking, in vain, to act for Bob)."""
    alice = _client(keyed_server, KEYS["alice"])
    thread = await alice.threads.create()
    said = {"messages": [{"role": "user", "content": "I work at Acme Robotics."}]}
    run = await alice.runs.create(
        thread["thread_id"], "memory_graph", input=said, context={"user_id": "bob"}
    )
    await alice.runs.join(thread["thread_id"], run["run_id"])
    assert (await alice.runs.get(thread["thread_id"], run["run_id"]))["status"] == "success"
    yield thread["thread_id"]
    await alice.http.client.aclose()


@pytest.fixture
async def alice(keyed_server: DevServer) -> AsyncIterator[Any]:
    client = _client(keyed_server, KEYS["alice"])
    yield client
    await client.http.client.aclose()


@pytest.fixture
async def bob(keyed_server: DevServer) -> AsyncIterator[Any]:
    client = _client(keyed_server, KEYS["bob"])
    yield client
    await client.http.client.aclose()


def _texts(found: dict[str, Any]) -> list[str]:
    return [item["value"].get("text", item["value"].get("summary")) for item in found["items"]]


def test_the_start_does_not_claim_local_only(keyed_server: DevServer) -> None:
    assert "no API keys configured" not in keyed_server.log_text()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/store/items/search", {"namespace_prefix": []}),
        ("/store/namespaces", {}),
        ("/threads/search", {}),
        ("/assistants/search", {}),
    ],
)
@pytest.mark.parametrize("key", [None, "not-a-key"])
def test_no_key_or_a_wrong_key_is_refused(
    keyed_server: DevServer, path: str, body: dict[str, Any], key: str | None
) -> None:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    answer = httpx.post(keyed_server.url + path, json=body, headers=headers, trust_env=False)
    assert answer.status_code == 401, answer.text
    assert "API key" in answer.json()["detail"]


async def test_a_user_reads_their_own_memories_and_threads(alice: Any, alice_thread: str) -> None:
    everything = await alice.store.search_items([])  # narrowed to Alice's namespaces
    assert FACT in _texts(everything)
    assert {tuple(item["namespace"][:2]) for item in everything["items"]} == {("memories", "alice")}
    own = await alice.store.search_items(["memories", "alice", "semantic"], query="work")
    assert FACT in _texts(own)
    assert alice_thread in [t["thread_id"] for t in await alice.threads.search()]
    state = await alice.threads.get_state(alice_thread)
    assert state["values"]["messages"][0]["content"] == "I work at Acme Robotics."


async def test_a_run_acts_for_the_key_not_for_the_user_it_names(
    keyed_server: DevServer, alice_thread: str
) -> None:
    admin = _client(keyed_server, ADMIN_KEY)
    bobs = await admin.store.search_items(["memories", "bob"])
    await admin.http.client.aclose()
    assert bobs["items"] == []


async def test_another_user_cannot_read_those_memories(
    keyed_server: DevServer, bob: Any, alice_thread: str
) -> None:
    for prefix in ([], ["memories"], ["memories", "bob"]):
        assert FACT not in _texts(await bob.store.search_items(prefix, query="work"))
    for namespace in (["memories", "alice"], ["memories", "alice", "semantic"]):
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await bob.store.search_items(namespace)
        assert refused.value.response.status_code == 403
    found = await bob.store.list_namespaces()
    assert all(ns[:2] == ["memories", "bob"] for ns in found["namespaces"]), found
    admin = _client(keyed_server, ADMIN_KEY)
    alices = await admin.store.search_items(["memories", "alice", "semantic"])
    await admin.http.client.aclose()
    item = alices["items"][0]  # the admin key reads every user's memories
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await bob.store.get_item(item["namespace"], item["key"])
    assert refused.value.response.status_code == 403


async def test_another_user_cannot_see_or_run_that_thread(bob: Any, alice_thread: str) -> None:
    assert alice_thread not in [t["thread_id"] for t in await bob.threads.search()]
    for read in (bob.threads.get, bob.threads.get_state, bob.threads.get_history):
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await read(alice_thread)
        assert refused.value.response.status_code == 404, read
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await bob.runs.wait(
            alice_thread, "memory_graph", input={"messages": [{"role": "user", "content": "hi"}]}
        )
    assert refused.value.response.status_code == 404


async def test_a_thread_of_another_user_is_refused_readably(
    keyed_server: DevServer, alice_thread: str
) -> None:
    """The admin may name any user, but the checkpointer refuses Bob on Alice's thread: the
    client reads why, not "An internal error occurred"."""
    admin = _client(keyed_server, ADMIN_KEY)
    hi = {"messages": [{"role": "user", "content": "hi"}]}
    events = [
        part
        async for part in admin.runs.stream(
            alice_thread, "memory_graph", input=hi, context={"user_id": "bob"}
        )
    ]
    await admin.http.client.aclose()
    errors = [part.data for part in events if part.event == "error"]
    assert errors, events
    assert errors[0]["error"] == "ThreadRefused"
    assert "belongs to another user than 'bob'" in errors[0]["message"]
