"""The memory tools on VaultStore, InMemoryStore and langgraph's PostgresStore (real Postgres),
sync and async; LangMem's own tools on VaultStore; the tools inside a real create_agent."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from pydantic import ValidationError

from langmem_vault.integrations import create_manage_memory_tool, create_search_memory_tool
from langmem_vault.memory._vault import MemoryVault

CONFIG = {"configurable": {"user_id": "ana"}}
NS = ("memories", "{user_id}")  # a LangMem-style template (facts straight under the user)


@pytest.fixture(params=["memory", "vault", "postgres"])
def any_store(request: pytest.FixtureRequest, index: dict[str, Any]) -> Iterator[BaseStore]:
    """InMemoryStore, VaultStore and langgraph's PostgresStore, all with the same index."""
    if request.param == "memory":
        yield InMemoryStore(index=index)  # type: ignore[arg-type]
        return
    pg_uri = request.getfixturevalue("pg_uri")
    schema = request.getfixturevalue("schema")
    if request.param == "vault":
        from langmem_vault.store import VaultStore

        with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as vault:  # type: ignore[arg-type]
            vault.setup()
            yield vault
        return
    from langgraph.store.postgres import PostgresStore

    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    uri = f"{pg_uri}{'&' if '?' in pg_uri else '?'}options=-csearch_path%3D{schema}%2Cpublic"
    with PostgresStore.from_conn_string(uri, index=index) as pg:  # type: ignore[arg-type]
        pg.setup()
        yield pg


def _id(reply: str) -> str:
    match = re.search(r"[0-9a-f]{8}-[0-9a-f-]{27}$", reply)
    assert match, reply
    return match.group()


def _vault(store: BaseStore) -> MemoryVault:
    from langmem_vault.memory._namespaces import MemoryNamespaces

    ns = ("memories", "{user_id}")
    return MemoryVault(store, user_id="ana", namespaces=MemoryNamespaces(ns, ns, ns))


def test_remember_update_forget_search_sync(any_store: BaseStore) -> None:
    manage = create_manage_memory_tool(NS, store=any_store)
    search = create_search_memory_tool(NS, store=any_store)
    created = manage.invoke({"content": "Ana prefers green tea", "action": "create"}, CONFIG)
    key = _id(created)
    again = manage.invoke({"content": "Ana prefers green tea"}, CONFIG)
    assert again == f"already remembered as memory {key}"  # reconcile: no duplicate
    (hit,) = search.invoke({"query": "what does Ana drink"}, CONFIG)
    assert (hit["id"], hit["text"], hit["status"]) == (key, "Ana prefers green tea", "active")
    assert hit["score"] is not None

    updated = manage.invoke(
        {"content": "Ana prefers black coffee", "action": "update", "id": key}, CONFIG
    )
    new_key = _id(updated)
    assert new_key != key
    old = _vault(any_store).get(key)
    assert old is not None and old.value.status == "superseded"  # kept for history
    found = search.invoke({"query": "what does Ana drink"}, CONFIG)
    assert [h["text"] for h in found] == ["Ana prefers black coffee"]

    assert manage.invoke({"action": "delete", "id": new_key}, CONFIG) == (
        f"deleted memory {new_key}"
    )
    assert search.invoke({"query": "what does Ana drink"}, CONFIG) == []
    missing = manage.invoke({"action": "delete", "id": str(uuid.uuid4())}, CONFIG)
    assert missing.startswith("no memory with id")


async def test_private_and_users_async(any_store: BaseStore) -> None:
    """Redaction marks a medical fact private: stored (sealed where a key is set), never
    returned by search; another user sees nothing."""
    manage = create_manage_memory_tool(NS, store=any_store)
    search = create_search_memory_tool(NS, store=any_store, response_format="content_and_artifact")
    await manage.ainvoke({"content": "Ana lives in Porto"}, CONFIG)
    secret = await manage.ainvoke({"content": "Ana was diagnosed with diabetes"}, CONFIG)
    private = await _vault(any_store).aget(_id(secret))
    assert private is not None and private.value.private
    call = {"name": "search_memory", "args": {"query": "diabetes"}, "id": "c1", "type": "tool_call"}
    message = await search.ainvoke(call, CONFIG)
    assert "diabetes" not in str(message.content)
    assert all(not m.value.private for m in message.artifact)
    other = {"configurable": {"user_id": "bob"}}
    assert await search.ainvoke({"query": "Porto"}, other) == []


def test_actions_permitted(any_store: BaseStore) -> None:
    manage = create_manage_memory_tool(NS, store=any_store, actions_permitted=("create",))
    key = _id(manage.invoke({"content": "Ana plays chess"}, CONFIG))
    action = manage.tool_call_schema.model_json_schema()["properties"]["action"]
    assert action.get("enum", [action.get("const")]) == ["create"]  # what the model sees
    with pytest.raises(ValidationError):
        manage.invoke({"action": "delete", "id": key}, CONFIG)
    fact = _vault(any_store).get(key)
    assert fact is not None and fact.value.status == "active"  # unchanged
    with pytest.raises(ValueError, match="content is required"):
        manage.invoke({"content": "  "}, CONFIG)


def test_an_id_outside_the_key_rule_is_refused_naming_id() -> None:
    store = InMemoryStore()
    manage = create_manage_memory_tool(NS, store=store)
    for action in ("update", "delete"):
        with pytest.raises(ValueError, match=r"id: must be 1\.\.128 characters"):
            manage.invoke({"action": action, "content": "x", "id": "../../bob/semantic/k"}, CONFIG)
    assert list(store.search(("memories",))) == []


def test_langmem_tools_on_vault_store(pg_uri: str, schema: str, index: dict[str, Any]) -> None:
    """LangMem's own tools on VaultStore with the README's index (fields ["text"]): LangMem
    stores {"content": ...}, and it is still embedded and scored."""
    from langmem import create_manage_memory_tool as langmem_manage
    from langmem import create_search_memory_tool as langmem_search

    from langmem_vault.store import VaultStore

    assert index["fields"] == ["text"]
    config = {"configurable": {"langgraph_user_id": "ana"}}
    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        manage = langmem_manage(("memories", "{langgraph_user_id}"), store=store)
        search = langmem_search(("memories", "{langgraph_user_id}"), store=store)
        manage.invoke({"content": "Ana prefers green tea", "action": "create"}, config)
        manage.invoke({"content": "Ana's cat is called Miso", "action": "create"}, config)
        found = search.invoke({"query": "favourite drink"}, config)
        assert '"score": null' not in found
        hits = store.search(("memories", "ana"), query="favourite drink")
        assert hits[0].value == {"content": "Ana prefers green tea"}
        assert all(h.score is not None for h in hits)


def test_memories_written_by_langmems_tools_are_injected_and_found(store: BaseStore) -> None:
    """LangMem's manage tool and ours share the semantic namespace: its {"content": ...}
    values are facts to inject, recall and the search tool; other shapes there are skipped.
    (On InMemoryStore and VaultStore: PostgresStore does not index a value without the index's
    fields, so a query never finds LangMem's values there.)"""
    from langchain_core.messages import HumanMessage
    from langmem import create_manage_memory_tool as langmem_manage

    from langmem_vault.nodes._inject import create_inject_node

    config = {"configurable": {"langgraph_user_id": "ana", "thread_id": "t1"}}
    manage = langmem_manage(("memories", "{langgraph_user_id}", "semantic"), store=store)
    manage.invoke({"content": "Ana prefers green tea", "action": "create"}, config)
    store.put(("memories", "ana", "semantic"), "stats", {"rows": [1, 2]})  # not a memory
    MemoryVault(store, user_id="ana").remember("Ana lives in Porto")

    inject = create_inject_node(store=store).node
    state = {"messages": [HumanMessage("What do I drink?")]}
    block = inject.invoke(state, config)["memory_context"]
    lines = [line for line in block.splitlines() if line.startswith("- [M")]
    shown = sorted(line.split("] ", 1)[1] for line in lines)  # no empty line for "stats"
    # The vault's fact says when it was said; LangMem's value does not know: no date.
    today = datetime.now(UTC)
    assert shown == [
        f"Ana lives in Porto (general; said {today.day} {today:%B} {today.year})",
        "Ana prefers green tea (general)",
    ]
    assert asyncio.run(inject.ainvoke(state, config))["memory_context"] == block

    found = create_search_memory_tool(store=store).invoke({"query": "tea"}, config)
    assert sorted(r["text"] for r in found) == ["Ana lives in Porto", "Ana prefers green tea"]


class _ToolAgentModel(BaseChatModel):
    """Calls manage_memory for a statement, search_memory for a question, then answers with
    the tool's result."""

    @property
    def _llm_type(self) -> str:
        return "scripted-memory-tools"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(f"tool said: {last.content}")
        else:
            text = str(last.content)
            if text.endswith("?"):
                call = {"name": "search_memory", "args": {"query": text}, "id": "s"}
            else:
                call = {"name": "manage_memory", "args": {"content": text}, "id": "m"}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


async def test_tools_in_create_agent_use_the_agent_store(store: BaseStore) -> None:
    """No store= given: the tools use the agent's store and the run's user."""
    agent = create_agent(
        _ToolAgentModel(),
        [create_manage_memory_tool(), create_search_memory_tool()],
        checkpointer=InMemorySaver(),
        store=store,
    )
    cfg = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
    await agent.ainvoke({"messages": [("user", "Ana works at Acme Robotics")]}, cfg)
    cfg2 = {"configurable": {"thread_id": "t2", "user_id": "ana"}}
    out = await agent.ainvoke({"messages": [("user", "Where does Ana work?")]}, cfg2)
    assert "Ana works at Acme Robotics" in str(out["messages"][-1].content)
    facts = await MemoryVault(store, user_id="ana").alist()  # the default namespace: inject's
    assert [f.value.text for f in facts] == ["Ana works at Acme Robotics"]


def test_tools_take_any_text(any_store: BaseStore) -> None:
    """What a model writes into a tool call is read as memory reads any text (issue 22): NUL
    and lone surrogates cleaned, an over-long query bounded to what search accepts."""
    manage = create_manage_memory_tool(("memories", "{user_id}"), store=any_store, redaction=None)
    search = create_search_memory_tool(("memories", "{user_id}"), store=any_store)
    config = {"configurable": {"user_id": "ana"}}
    assert manage.invoke({"content": "Ana prefers\x00 tea \ud800", "action": "create"}, config)
    found = search.invoke({"query": "tea\x00 " + "x" * 20_000}, config)
    assert [f["text"] for f in found] == ["Ana prefers tea \ufffd"]
    assert search.invoke({"query": "\x00"}, config)[0]["text"] == "Ana prefers tea \ufffd"
