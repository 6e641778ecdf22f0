"""Inject and cite events from the real inject and respond nodes, through AccessRecorder."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.graph import StateGraph

from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.nodes._respond import create_respond_node
from langmem_vault.privacy._audit.access import AuditingAccessRecorder
from langmem_vault.privacy._audit.buffer import AsyncAuditBuffer, AuditBuffer
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
from langmem_vault.store import AsyncVaultStore, VaultStore


def _graph(store: Any, inject_rec: Any, respond_rec: Any) -> Any:
    builder = StateGraph(MemoryState)
    builder.add_node("inject", create_inject_node(record_access=inject_rec))
    model = FakeListChatModel(responses=["You like green tea [M1]."])
    builder.add_node("respond", create_respond_node(model, record_utility=respond_rec))
    builder.add_edge("__start__", "inject")
    builder.add_edge("inject", "respond")
    return builder.compile(store=store)


def test_inject_and_cite_are_logged(store: VaultStore, audit: AuditLog) -> None:
    vault = MemoryVault(store, user_id="alice")
    tea = vault.remember("Likes green tea", category="preference").key
    rule = vault.add_instruction("Answer briefly").key
    MemoryVault(store, user_id="bob").remember("Bob likes coffee")
    with AuditBuffer(audit, flush_interval=10) as buf:
        inject_rec = AuditingAccessRecorder(buf, component="inject", inline=True)
        respond_rec = AuditingAccessRecorder(buf, component="respond", actor="gpt", inline=True)
        graph = _graph(store, inject_rec, respond_rec)
        out = graph.invoke(
            {"messages": [("user", "What do I drink?")]},
            {"configurable": {"user_id": "alice", "thread_id": "t1"}},
        )
        assert out["cited"] == ["M1"]
    events = audit.query("alice")
    seen = {(e.action.value, e.component, e.memory_key) for e in events}
    assert seen == {("inject", "inject", tea), ("inject", "inject", rule), ("cite", "respond", tea)}
    assert audit.query("bob") == []
    # the access stamps still happen (AccessRecorder's own job)
    fact = vault.get(tea)
    assert fact is not None and fact.value.access_count == 1 and fact.value.utility > 0.5


def test_an_async_only_sink_refuses_sync_graphs(store: VaultStore, aaudit: AsyncAuditLog) -> None:
    rec = AuditingAccessRecorder(aaudit, component="inject")
    with pytest.raises(TypeError, match="AuditBuffer"):
        rec.record(store, [(("memories", "alice", "semantic"), "k")])
    with pytest.raises(ValueError, match="audit"):
        AuditingAccessRecorder(None, component="inject")


async def test_async_graph(astore: AsyncVaultStore, aaudit: AsyncAuditLog) -> None:
    tea = (await MemoryVault(astore, user_id="alice").aremember("Likes green tea")).key
    async with AsyncAuditBuffer(aaudit) as buf:
        rec = AuditingAccessRecorder(buf, component="inject", stamps=False)
        respond_rec = AuditingAccessRecorder(buf, component="respond")
        graph = _graph(astore, rec, respond_rec)
        await graph.ainvoke(
            {"messages": [("user", "What do I drink?")]},
            {"configurable": {"user_id": "alice", "thread_id": "t1"}},
        )
        # The utility stamp runs as a task; let it finish before the schema is dropped.
        await respond_rec.aflush()
    actions = sorted((e.action.value, e.memory_key) for e in await aaudit.query("alice"))
    assert actions == [("cite", tea), ("inject", tea)]
