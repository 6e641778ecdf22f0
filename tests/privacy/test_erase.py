"""Erase per user: after it, no row of any table in the schema mentions the user.

The scan reads every table of the schema as JSON (``row_to_json``) and looks for the user id
as text and as hex (bytea columns print as hex), so a table added later is covered too.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import MessagesState, StateGraph
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver
from langmem_vault.extraction._payload import WATERMARK_NAMESPACE
from langmem_vault.jobs import AsyncJobQueue, JobQueue
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.privacy._audit.buffer import AuditBuffer
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditEvent, AuditLog
from langmem_vault.privacy._audit.store import AuditedStore
from langmem_vault.privacy._subject_rights.consent import get_consent, set_consent
from langmem_vault.privacy._subject_rights.erase import (
    aerase_user,
    erase_user,
    pseudonym,
    purge_erased,
    restore_user,
)
from langmem_vault.store import AsyncVaultStore, VaultStore

USERS = ("alice", "bob")


ALL_PARTS = ("store_items", "saver_threads", "vault_jobs", "vault_audit")


def scan(
    pg_uri: str, schema: str, needle: str, require: tuple[str, ...] = ALL_PARTS
) -> dict[str, int]:
    """Rows per table whose JSON form contains ``needle`` (as text or as hex bytes)."""
    hexed = needle.encode().hex()
    found: dict[str, int] = {}
    with psycopg.connect(pg_uri) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = %s AND table_type = 'BASE TABLE'",
                (schema,),
            )
        ]
        assert set(require) <= set(tables)
        for table in tables:
            row = conn.execute(
                f'SELECT count(*) FROM {schema}."{table}" AS r '
                "WHERE strpos(row_to_json(r)::text, %s) > 0"
                " OR strpos(row_to_json(r)::text, %s) > 0",
                (needle, hexed),
            ).fetchone()
            if row and row[0]:
                found[table] = row[0]
    return found


def _graph(saver: Any) -> Any:
    def respond(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"noted: {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("respond", respond)
    builder.set_entry_point("respond")
    return builder.compile(checkpointer=saver)


def _payload(user: str) -> Any:
    def build(ids: list[str]) -> dict[str, Any]:
        return {
            "messages": [
                {"type": "human", "data": {"content": f"hi from {user}", "id": i}} for i in ids
            ],
            "message_ids": ids,
            "namespaces": {
                kind: ["memories", user, kind] for kind in ("semantic", "episodes", "instructions")
            },
        }

    return build


def populate(store: VaultStore, saver: VaultSaver, queue: JobQueue, audit: AuditLog) -> None:
    graph = _graph(saver)
    for user in USERS:
        vault = MemoryVault(store, user_id=user)
        fact = vault.remember(f"{user} likes green tea", evidence=f"{user} said so")
        vault.add_instruction("Answer briefly")
        vault.add_episode(f"Talked with {user}", thread_id=f"{user}-t1")
        set_consent(store, user, allow_sensitive_facts=True)
        for n in (1, 2):
            cfg = {"configurable": {"thread_id": f"{user}-t{n}", "user_id": user}}
            graph.invoke({"messages": [("user", f"I am {user}")]}, cfg)
        store.put(WATERMARK_NAMESPACE, f"{user}-t1", {"message_ids": ["m1"]}, index=False)
        queue.enqueue_span("extract", f"{user}-t1", ["m1", "m2"], _payload(user))
        # a job whose thread is not in the saver's index: found by its target namespaces
        queue.enqueue_span("extract", f"orphan-{len(user)}", ["m9"], _payload(user))
        audit.record(
            [
                AuditEvent(user, "inject", "inject", memory_key=fact.key),
                AuditEvent(user, "read", "api", actor="support"),
            ]
        )


@pytest.fixture
def parts(
    pool: ConnectionPool[Any], store: VaultStore, audit: AuditLog, schema: str
) -> tuple[VaultStore, VaultSaver, JobQueue, AuditLog]:
    saver = VaultSaver(pool, schema=schema)
    saver.setup()
    queue = JobQueue(pool, schema=schema)
    queue.setup()
    populate(store, saver, queue, audit)
    return store, saver, queue, audit


def test_erase_leaves_no_row_of_the_user_anywhere(
    parts: tuple[VaultStore, VaultSaver, JobQueue, AuditLog], pg_uri: str, schema: str
) -> None:
    store, saver, queue, audit = parts
    before = scan(pg_uri, schema, "alice")
    assert {
        "store_items",
        "saver_threads",
        "saver_checkpoints",
        "vault_jobs",
        "vault_audit",
    } <= set(before)
    report = erase_user(store, "alice", saver=saver, jobs=queue, audit=audit, actor="dpo")
    assert scan(pg_uri, schema, "alice") == {}
    assert report.store_items == 4  # fact, instruction, episode, consent
    assert report.extract_watermarks == 1
    assert sorted(report.threads) == ["alice-t1", "alice-t2"] and report.checkpoints > 0
    assert report.jobs == 2 and report.job_watermarks == 2
    assert report.audit_events == 2
    # the orphan job's watermark went with it (its thread id does not name alice)
    assert [j.thread_id for j in queue.list()] == ["bob-t1", "orphan-3"]
    # bob is untouched
    after_bob = scan(pg_uri, schema, "bob")
    assert after_bob == scan(pg_uri, schema, "bob") and after_bob["store_items"] == 5
    assert [m.value.text for m in MemoryVault(store, user_id="bob").list()] == [
        "bob likes green tea"
    ]
    assert len(saver.list_threads("bob")) == 2 and len(audit.query("bob")) == 2
    # the erase is logged without the user id
    [event] = audit.query(pseudonym("alice"))
    assert event.action == "erase" and event.actor == "dpo"
    assert event.detail["store_items"] == 4 and event.detail["threads"] == 2
    # erasing again is harmless and finds nothing
    again = erase_user(store, "alice", saver=saver, jobs=queue, audit=audit)
    assert (again.store_items, again.checkpoints, again.jobs) == (0, 0, 0)


def test_soft_erase_restore_and_purge(
    parts: tuple[VaultStore, VaultSaver, JobQueue, AuditLog], pg_uri: str, schema: str
) -> None:
    store, saver, queue, audit = parts
    report = erase_user(store, "alice", saver=saver, jobs=queue, audit=audit, soft_days=30)
    assert report.soft and report.store_items == 4 and report.jobs == 2
    assert report.purge_after is not None
    assert report.purge_after > datetime.now(UTC) + timedelta(days=29)
    assert MemoryVault(store, user_id="alice").list() == []  # out of reach of every node
    assert get_consent(store, "alice").updated_at is None  # defaults again
    assert len(saver.list_threads("alice")) == 2  # kept during the grace period
    assert restore_user(store, "alice") == 4
    assert [m.value.text for m in MemoryVault(store, user_id="alice").list()] == [
        "alice likes green tea"
    ]
    assert store.search(("memories", "alice", "semantic"), query="green tea")[0].score is not None
    with pytest.raises(KeyError, match="not soft-erased"):
        restore_user(store, "alice")

    erase_user(store, "alice", saver=saver, jobs=queue, audit=audit, soft_days=30)
    assert purge_erased(store, saver=saver, jobs=queue, audit=audit) == {}  # not due yet
    later = datetime.now(UTC) + timedelta(days=31)
    purged = purge_erased(store, saver=saver, jobs=queue, audit=audit, now=later)
    assert list(purged) == ["alice"] and purged["alice"].store_items == 4
    assert scan(pg_uri, schema, "alice") == {}
    assert len(saver.list_threads("bob")) == 2


def test_erase_takes_usage_records_and_restore_brings_them_back(
    parts: tuple[VaultStore, VaultSaver, JobQueue, AuditLog], pg_uri: str, schema: str
) -> None:
    store, saver, queue, audit = parts
    recorder = AccessRecorder(inline=True)
    keys = {}
    for user in USERS:
        ns = ("memories", user, "semantic")
        keys[user] = MemoryVault(store, user_id=user).list()[0].key
        recorder.record(store, [(ns, keys[user])], cited=[(ns, keys[user])])
    alice = MemoryVault(store, user_id="alice")
    erase_user(store, "alice", soft_days=30)
    assert restore_user(store, "alice") == 4 + 1  # the memories and the fact's usage record
    restored = alice.get(keys["alice"])
    assert restored is not None and restored.value.access_count == 1
    assert restored.value.utility > 0.5
    erase_user(store, "alice", saver=saver, jobs=queue, audit=audit)
    assert scan(pg_uri, schema, "alice") == {}
    assert not [ns for ns in store.list_namespaces() if "alice" in ns]
    bob = MemoryVault(store, user_id="bob").get(keys["bob"])
    assert bob is not None and bob.value.access_count == 1


def test_erase_through_an_audited_store_leaves_no_audit_rows(
    store: VaultStore, audit: AuditLog, pg_uri: str, schema: str
) -> None:
    with AuditBuffer(audit, flush_interval=10) as buf:
        audited = AuditedStore(store, audit=buf, component="api")
        MemoryVault(audited, user_id="alice").remember("Likes tea")
        report = erase_user(audited, "alice", audit=audit)
        assert report.store_items == 1
        MemoryVault(audited, user_id="bobby").remember("Likes coffee")
        assert erase_user(store, "bobby", audit=buf).audit_events == 1  # a buffer as the log
    for user in ("alice", "bobby"):
        assert scan(pg_uri, schema, user, require=("store_items", "vault_audit")) == {}


def test_erase_refuses_bad_arguments(store: VaultStore) -> None:
    MemoryVault(store, user_id="alice").remember("x")
    with pytest.raises(ValueError, match="user_id"):
        erase_user(store, "")
    with pytest.raises(ValueError, match="soft_days"):
        erase_user(store, "alice", soft_days=-1)
    with pytest.raises(ValueError, match="does not contain the user id"):
        erase_user(store, "alice", extra_prefixes=[("memories",)])
    assert len(MemoryVault(store, user_id="alice").list()) == 1


def test_a_user_id_equal_to_a_label_erases_only_that_user(store: VaultStore) -> None:
    MemoryVault(store, user_id="semantic").remember("odd id")
    MemoryVault(store, user_id="memories").remember("odder id")
    MemoryVault(store, user_id="bob").remember("bob's")
    assert erase_user(store, "semantic").store_items == 1
    assert erase_user(store, "memories").store_items == 1
    assert [m.value.text for m in MemoryVault(store, user_id="bob").list()] == ["bob's"]


async def test_async_erase(
    apool: AsyncConnectionPool[Any], astore: AsyncVaultStore, pg_uri: str, schema: str
) -> None:
    saver = AsyncVaultSaver(apool, schema=schema)
    await saver.setup()
    queue = AsyncJobQueue(apool, schema=schema)
    await queue.setup()
    audit = AsyncAuditLog(apool, schema=schema)
    await audit.setup()
    graph = _graph(saver)
    for user in USERS:
        await MemoryVault(astore, user_id=user).aremember(f"{user} likes tea")
        cfg = {"configurable": {"thread_id": f"{user}-t1", "user_id": user}}
        await graph.ainvoke({"messages": [("user", "hello")]}, cfg)
        await queue.enqueue_span("extract", f"{user}-t1", ["m1"], _payload(user))
        await audit.record(AuditEvent(user, "read", "api"))
    report = await aerase_user(astore, "alice", saver=saver, jobs=queue, audit=audit)
    assert (report.store_items, report.jobs, report.audit_events) == (1, 1, 1)
    assert report.threads == ["alice-t1"] and report.checkpoints > 0
    assert scan(pg_uri, schema, "alice") == {}
    assert scan(pg_uri, schema, "bob")["store_items"] == 1


def _expire(pg_uri: str, schema: str, user: str) -> int:
    """Let the TTL of every item of ``user`` pass, without a sweep: they stay as rows."""
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        cur = conn.execute(
            f"UPDATE {schema}.store_items SET ttl_minutes = 1, expires_at = now() - interval '1s' "
            "WHERE prefix LIKE %s OR key LIKE %s",
            (f"%{user}%", f"%{user}%"),
        )
        return cur.rowcount


def _common_words(pg_uri: str, schema: str) -> set[str]:
    with psycopg.connect(pg_uri) as conn:
        rows = conn.execute(
            "SELECT unnest(most_common_elems::text::text[]) FROM pg_stats "
            "WHERE schemaname = %s AND tablename = 'store_items' AND attname = 'search_tsv'",
            (schema,),
        ).fetchall()
    return {r[0] for r in rows}


def _remember_many(vault: MemoryVault, user: str, word: str) -> None:
    for n in range(30):
        vault.remember(f"{user} {word} fact number {n}")


def test_erase_takes_expired_items_and_the_statistics_forget_the_words(
    parts: tuple[VaultStore, VaultSaver, JobQueue, AuditLog], pg_uri: str, schema: str
) -> None:
    store, saver, queue, audit = parts
    _remember_many(MemoryVault(store, user_id="alice"), "alice", "zanzibarite")
    _remember_many(MemoryVault(store, user_id="bob"), "bob", "kettle")
    store.analyze()
    assert {"zanzibarit", "kettl"} <= _common_words(pg_uri, schema)
    # expired but not swept: a search no longer finds them, yet they are rows with vectors
    assert _expire(pg_uri, schema, "alice") > 30
    assert MemoryVault(store, user_id="alice").list() == []
    report = erase_user(store, "alice", saver=saver, jobs=queue, audit=audit)
    assert scan(pg_uri, schema, "alice") == {}
    assert report.store_items == 34 and report.extract_watermarks == 0
    words = _common_words(pg_uri, schema)
    assert "zanzibarit" not in words and "kettl" in words
    assert len(MemoryVault(store, user_id="bob").list(limit=100)) == 31


async def test_async_erase_takes_expired_items(
    apool: AsyncConnectionPool[Any], astore: AsyncVaultStore, pg_uri: str, schema: str
) -> None:
    saver = AsyncVaultSaver(apool, schema=schema)
    await saver.setup()
    for user in USERS:
        for n in range(3):
            await MemoryVault(astore, user_id=user).aremember(f"{user} fact {n}")
        cfg = {"configurable": {"thread_id": f"{user}-t1", "user_id": user}}
        await _graph(saver).ainvoke({"messages": [("user", "hello")]}, cfg)
    await astore.aput(WATERMARK_NAMESPACE, "alice-t1", {"message_ids": ["m1"]}, index=False)
    assert _expire(pg_uri, schema, "alice") == 4
    report = await aerase_user(astore, "alice", saver=saver)
    assert report.store_items == 3
    assert scan(pg_uri, schema, "alice", require=("store_items", "saver_threads")) == {}
    assert scan(pg_uri, schema, "bob", require=("store_items",))["store_items"] == 3
