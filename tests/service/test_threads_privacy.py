"""MemoryService threads, export/import/erase, consent and the audit log on the real
embedded Postgres (VaultSaver and AuditLog beside the store), sync and async."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_vault.service import Forbidden, Identity, InvalidInput, NotFound
from tests.service.conftest import Driver
from tests.support.savers import call, checkpoint, config, meta


async def converse(drive: Driver, thread_id: str, user_id: str, text: str) -> None:
    messages: list[Any] = [HumanMessage(text, id="m1"), AIMessage("Noted.", id="m2")]
    version = drive.saver.get_next_version(None, None)
    cp = checkpoint(
        {"messages": messages, "cited": ["F1"]}, {"messages": version, "cited": version}
    )
    cfg = config(thread_id, user_id=user_id)
    await call(drive.saver, "put", cfg, cp, meta(0), {"messages": version, "cited": version})


async def test_threads_list_show_delete(drive: Driver) -> None:
    await converse(drive, "t-ana", "ana", "I live in Lyon")
    await converse(drive, "t-bob", "bob", "I live in Rome")
    threads = await drive("list_threads", "ana")
    assert [(t.thread_id, t.message_count) for t in threads] == [("t-ana", 2)]
    shown = await drive("get_thread", "ana", "t-ana")
    assert [(m.role, m.content) for m in shown.messages] == [
        ("human", "I live in Lyon"),
        ("ai", "Noted."),
    ]
    assert shown.state == {"cited": ["F1"]}
    with pytest.raises(NotFound) as other:  # another user's thread is not found, not shown
        await drive("get_thread", "ana", "t-bob")
    assert other.value.field == "thread_id"
    with pytest.raises(NotFound):
        await drive("delete_thread", "ana", "t-bob")
    assert [t.thread_id for t in await drive("list_threads", "bob")] == ["t-bob"]
    deleted = await drive("delete_thread", "ana", "t-ana")
    assert deleted.thread_id == "t-ana"
    assert await drive("list_threads", "ana") == []
    assert [(e.action, e.detail["thread_id"]) for e in await drive.events("ana")] == [
        ("delete", "t-ana")
    ]


async def test_export_import_round_trip(drive: Driver) -> None:
    fact = await drive("add_memory", "ana", "Prefers green tea", category="preference")
    await drive("add_instruction", "ana", "Answer briefly", priority=7)
    await converse(drive, "t-ana", "ana", "hello")
    doc = await drive("export_user", "ana")
    assert [m["key"] for m in doc["memories"]] == [fact.key]
    assert [t["thread_id"] for t in doc["threads"]] == ["t-ana"]
    result = await drive("import_user", json.dumps(doc), user_id="carl")
    assert (result.user_id, result.memories, result.instructions) == ("carl", 1, 1)
    copied = await drive("list_memories", "carl")
    assert sorted(m.text for m in copied.items) == ["Answer briefly", "Prefers green tea"]
    actions = {(e.action, e.actor) for e in await drive.events("carl")}
    assert ("import", "admin") in actions
    assert ("export", "admin") in {(e.action, e.actor) for e in await drive.events("ana")}


async def test_bad_import_writes_nothing(drive: Driver) -> None:
    with pytest.raises(InvalidInput) as not_json:
        await drive("import_user", "{nope", user_id="dan")
    assert not_json.value.field == "document"
    doc = {
        "format": "langmem-vault-export",
        "version": 1,
        "user_id": "dan",
        "memories": [
            {"key": "a", "value": {"text": "Fine"}},
            {"key": "b", "value": {"text": "Bad", "confidence": 7}},
        ],
    }
    with pytest.raises(InvalidInput) as bad:
        await drive("import_user", doc)
    assert bad.value.field == "memories[1].value.confidence"
    assert not await drive("user_exists", "dan")
    assert await drive.events("dan") == []
    admin = drive.service
    drive.service = admin.acting_as(Identity.for_user("eve"))
    with pytest.raises(Forbidden):  # eve may not import into dan's account
        await drive("import_user", {**doc, "memories": doc["memories"][:1]})
    drive.service = admin
    assert not await drive("user_exists", "dan")


async def test_erase_soft_and_hard(drive: Driver) -> None:
    await drive("add_memory", "ana", "Prefers green tea")
    await converse(drive, "t-ana", "ana", "hello")
    with pytest.raises(NotFound) as unknown:
        await drive("erase_user", "nobody")
    assert unknown.value.field == "user_id"
    with pytest.raises(InvalidInput) as days:
        await drive("erase_user", "ana", soft_days=-1)
    assert days.value.field is None and "soft_days" in days.value.message
    assert (await drive("list_memories", "ana")).total == 1
    soft = await drive("erase_user", "ana", soft_days=7)
    assert (soft.soft, soft.store_items) == (True, 1)
    assert (await drive("list_memories", "ana")).total == 0
    assert await drive("unerase_user", "ana") >= 1
    assert (await drive("list_memories", "ana")).total == 1
    hard = await drive("erase_user", "ana")
    assert (hard.soft, hard.threads, hard.store_items >= 1) == (False, 1, True)
    assert not await drive("user_exists", "ana")


async def test_consent_and_audit_queries(drive: Driver) -> None:
    assert (await drive("consent", "ana")).allow_sensitive_facts is True  # kept, privately
    changed = await drive("consent", "ana", allow_extraction=False)
    assert changed.allow_extraction is False and changed.updated_at is not None
    with pytest.raises(InvalidInput) as bad:
        await drive("consent", "ana", allow_everything=True)
    assert bad.value.field == "allow_everything"
    fact = await drive("add_memory", "ana", "Likes jazz")
    await drive("edit_memory", "ana", fact.key, confidence=0.5)
    edits = await drive("audit_log", "ana", actions=["edit"])
    assert [(e.action, e.memory_key) for e in edits] == [("edit", fact.key)]
    everything = await drive("audit_log", "ana")
    assert [e.action for e in everything] == ["edit", "create", "consent"]
    assert [e.action for e in await drive("audit_log", "ana", memory_key=fact.key, limit=1)] == [
        "edit"
    ]
    with pytest.raises(InvalidInput) as action:
        await drive("audit_log", "ana", actions=["dance"])
    assert action.value.field == "action"
    with pytest.raises(InvalidInput) as limit:
        await drive("audit_log", "ana", limit=0)
    assert limit.value.field is None and "limit" in limit.value.message
