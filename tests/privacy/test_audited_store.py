"""AuditedStore: every memory read, edit and delete through a wrapped store is logged."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.privacy._audit.buffer import AsyncAuditBuffer, AuditBuffer
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
from langmem_vault.privacy._audit.store import AuditedStore
from langmem_vault.privacy._subject_rights.consent import set_consent
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.stores import thread


def test_reads_edits_and_deletes_are_logged(store: VaultStore, audit: AuditLog) -> None:
    audited = AuditedStore(store, audit=audit, component="api", actor="ops@acme")
    vault = MemoryVault(audited, user_id="alice")
    key = vault.remember("Likes green tea").key
    assert [m.key for m in vault.recall("green tea")] == [key]
    vault.forget(key, hard=True)
    set_consent(audited, "alice", allow_extraction=False)
    audited.put(("langmem_vault", "watermarks", "extract"), "t1", {"ids": []})  # not a memory
    MemoryVault(audited, user_id="bob").remember("Bob's fact")
    events = list(reversed(audit.query("alice")))
    assert [(e.action.value, e.detail["op"]) for e in events] == [
        ("edit", "put"),  # remember
        ("read", "search"),  # recall
        ("read", "get"),  # forget reads first
        ("delete", "put"),
        ("edit", "put"),  # set_consent (its read found nothing: not logged)
    ]
    assert {e.memory_key for e in events[:4]} == {key}
    assert {(e.component, e.actor) for e in events} == {("api", "ops@acme")}
    assert events[0].namespace == ("memories", "alice", "semantic")
    assert [e.action.value for e in audit.query("bob")] == ["edit"]
    assert store.get(("langmem_vault", "watermarks", "extract"), "t1") is not None


def test_buffered_audit(store: VaultStore, audit: AuditLog) -> None:
    with AuditBuffer(audit, flush_interval=10) as buf:
        vault = MemoryVault(AuditedStore(store, audit=buf, component="inject"), user_id="alice")
        vault.remember("x")
        vault.recall()
        buf.flush()
        assert len(audit.query("alice")) == 2


def test_bad_setup(store: VaultStore, aaudit: AsyncAuditLog) -> None:
    with pytest.raises(ValueError, match="audit"):
        AuditedStore(store, audit=None, component="api")
    with pytest.raises(ValueError, match="component"):
        AuditedStore(store, audit=aaudit, component="")
    with pytest.raises(TypeError, match="async"):
        AuditedStore(store, audit=aaudit, component="api").get(("memories", "a", "semantic"), "k")


async def test_async(astore: AsyncVaultStore, aaudit: AsyncAuditLog) -> None:
    audited = AuditedStore(astore, audit=aaudit, component="respond")
    vault = MemoryVault(audited, user_id="alice")
    key = (await vault.aremember("Likes jazz")).key
    await vault.aget(key)
    assert [e.action.value for e in await aaudit.query("alice")] == ["read", "edit"]
    async with AsyncAuditBuffer(aaudit) as buf:
        buffered = MemoryVault(AuditedStore(astore, audit=buf, component="x"), user_id="alice")
        await buffered.aget(key)
    assert len(await aaudit.query("alice")) == 3


def test_inject_through_it_logs_the_facts_it_reads(store: VaultStore, audit: AuditLog) -> None:
    # The inject node reads facts with their usage records in one statement on VaultStore
    # (MirrorSearchOp); through an AuditedStore it must still log each fact it reads.
    key = MemoryVault(store, user_id="alice").remember("Likes green tea", confidence=0.9).key
    node = create_inject_node(
        store=AuditedStore(store, audit=audit, component="inject"), record_access=False
    ).node
    out = node.invoke({"messages": [HumanMessage("tea?")]}, thread("alice", "t1"))
    assert key in out["memory_refs"].values()
    reads = [(e.action.value, e.detail["op"], e.memory_key) for e in audit.query("alice")]
    assert ("read", "search", key) in reads


async def test_async_inject_through_it_logs_the_facts_it_reads(
    astore: AsyncVaultStore, aaudit: AsyncAuditLog
) -> None:
    vault = MemoryVault(astore, user_id="alice")
    key = (await vault.aremember("Likes green tea", confidence=0.9)).key
    node = create_inject_node(
        store=AuditedStore(astore, audit=aaudit, component="inject"), record_access=False
    ).node
    out = await node.ainvoke({"messages": [HumanMessage("tea?")]}, thread("alice", "t1"))
    assert key in out["memory_refs"].values()
    reads = [(e.action.value, e.detail["op"], e.memory_key) for e in await aaudit.query("alice")]
    assert ("read", "search", key) in reads
