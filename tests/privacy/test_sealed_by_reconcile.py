"""Private facts that extraction proposes are sealed by reconcile when a key is configured."""

from __future__ import annotations

import base64
import os

import pytest
from langgraph.store.memory import InMemoryStore

from langmem_vault.extraction.reconcile import apply_extraction
from langmem_vault.memory.models import Extraction, ProposedFact
from langmem_vault.memory.sealing import ENV_KEY, is_sealed
from langmem_vault.memory.vault import MemoryVault

CONFIG = {"configurable": {"user_id": "u1"}}
NS = ("memories", "u1", "semantic")


def test_private_fact_sealed_with_the_environment_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, base64.b64encode(os.urandom(32)).decode())
    store = InMemoryStore()
    facts = [
        ProposedFact(text="User's sister is Anna Weber", confidence=0.9, private=True),
        ProposedFact(text="User prefers tea", confidence=0.9),
    ]
    apply_extraction(store, Extraction(facts=facts), config=CONFIG)
    stored = {i.value.get("text"): i.value for i in store.search(NS)}
    assert "User prefers tea" in stored and not is_sealed(stored["User prefers tea"])
    [sealed] = [v for v in stored.values() if is_sealed(v)]
    assert "Anna" not in str(sealed)
    # The facade opens it with the same environment key.
    texts = {m.value.text for m in MemoryVault(store, user_id="u1").list(status=None)}
    assert "User's sister is Anna Weber" in texts
