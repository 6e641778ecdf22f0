"""Privacy wired into the facade, inject and extract: sealed private facts, consent."""

from __future__ import annotations

import json
from typing import Any

import psycopg
from langgraph.graph import StateGraph

from langmem_vault.extraction._apply import apply
from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory._models import Extraction, ProposedFact
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._sealing import Keyring, is_sealed
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.privacy._subject_rights.consent import set_consent
from langmem_vault.store import VaultStore

NS = ("memories", "alice", "semantic")


def test_private_facts_are_sealed_and_opened_by_the_facade(
    store: VaultStore, pg_uri: str, schema: str
) -> None:
    ring = Keyring.generate()
    vault = MemoryVault(store, user_id="alice", keyring=ring)
    key = vault.remember("Was born in Porto", category="personal", private=True).key
    vault.remember("Likes tea", category="preference")
    raw = store.get(NS, key)
    assert raw is not None and is_sealed(raw.value) and "Porto" not in json.dumps(raw.value)
    with psycopg.connect(pg_uri) as conn:
        row = conn.execute(
            f"SELECT count(*) FROM {schema}.store_vectors WHERE key = %s", (key,)
        ).fetchone()
    assert row == (0,)
    got = vault.get(key)
    assert got is not None and got.value.text == "Was born in Porto"
    assert {m.value.text for m in vault.list()} == {"Was born in Porto", "Likes tea"}
    vault.update(key, confidence=0.4)
    raw = store.get(NS, key)
    assert raw is not None and is_sealed(raw.value) and raw.value["confidence"] == 0.4
    no_key = MemoryVault(store, user_id="alice")
    assert {m.value.text for m in no_key.list()} == {"[private]", "Likes tea"}


def test_inject_never_renders_a_sealed_fact(store: VaultStore) -> None:
    ring = Keyring.generate()
    vault = MemoryVault(store, user_id="alice", keyring=ring)
    vault.remember("Was born in Porto", category="personal", private=True)
    vault.remember("Likes tea", category="preference")
    builder = StateGraph(MemoryState)
    builder.add_node("inject", create_inject_node(record_access=False))
    builder.add_edge("__start__", "inject")
    graph: Any = builder.compile(store=store)
    out = graph.invoke({"messages": [("user", "hello")]}, {"configurable": {"user_id": "alice"}})
    assert "Likes tea" in out["memory_context"] and "[private]" not in out["memory_context"]


def test_extraction_obeys_consent(store: VaultStore) -> None:
    ns = MemoryNamespaces().resolve({"configurable": {"user_id": "alice"}})
    set_consent(store, "alice", allow_extraction=False)
    apply(store, Extraction(facts=[ProposedFact(text="Likes tea", confidence=0.9)]), ns)
    assert MemoryVault(store, user_id="alice").list(status=None) == []
