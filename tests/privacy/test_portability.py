"""Export and import per user on VaultStore: an exact round trip; bad documents write nothing."""

from __future__ import annotations

import copy
import csv
import io
import json
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from langmem_vault.memory._models import SemanticFact
from langmem_vault.memory._namespaces import tails_namespace
from langmem_vault.memory._sealing import Keyring, encrypt_fact
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
from langmem_vault.privacy._subject_rights.consent import aset_consent, set_consent
from langmem_vault.privacy._subject_rights.erase import aerase_user, erase_user
from langmem_vault.privacy._subject_rights.portability import (
    EXPORT_FORMAT,
    InvalidExportError,
    aexport_user,
    aimport_user,
    export_user,
    import_user,
    memories_csv,
)
from langmem_vault.store import AsyncVaultStore, VaultStore

NS = ("memories", "alice", "semantic")


def _fill(vault: MemoryVault, ring: Keyring) -> None:
    vault.remember("Prefers green tea", category="preference", tags=["drinks"], confidence=0.8)
    old = vault.remember("Works at Acme", category="company")
    vault.forget(old.key)  # superseded, kept for history
    vault.remember('Likes, "quoted" text; and commas', evidence="said on 2026-01-01")
    vault.add_instruction("Answer in French", priority=8, condition="topic contains paris")
    ins = vault.add_instruction("Use metric units")
    vault.deactivate_instruction(ins.key)
    vault.add_episode("Planned the Rome trip", importance=0.7, thread_id="alice-t1")
    # a private fact, sealed the way the facade hook will store it
    value = SemanticFact(text="Born in Porto", category="personal", private=True).to_store()
    private_key = "private-1"
    vault.store.put(NS, private_key, encrypt_fact(value, ring, NS, private_key), index=False)


def _strip(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out.pop("exported_at")
    return out


def test_round_trip_is_exact(store: VaultStore) -> None:
    ring = Keyring.generate()
    _fill(MemoryVault(store, user_id="alice"), ring)
    set_consent(store, "alice", allow_sensitive_facts=True)
    MemoryVault(store, user_id="bob").remember("Bob likes chess")
    before = export_user(store, "alice", keyring=ring)
    assert before["format"] == EXPORT_FORMAT and before["version"] == 1
    assert len(before["memories"]) == 4 and len(before["instructions"]) == 2
    assert len(before["episodes"]) == 1 and before["consent"]["allow_sensitive_facts"] is True
    private = next(m for m in before["memories"] if m["key"] == "private-1")
    assert private["value"]["text"] == "Born in Porto" and "enc" not in private["value"]

    text = json.dumps(before)
    report = erase_user(store, "alice")
    assert report.store_items == 8  # 4 facts, 2 instructions, 1 episode, consent
    assert export_user(store, "alice")["memories"] == []

    result = import_user(store, text, keyring=ring)
    assert (result.memories, result.instructions, result.episodes, result.consent) == (
        4,
        2,
        1,
        True,
    )
    after = export_user(store, "alice", keyring=ring)
    assert _strip(after) == _strip(before)
    # stored sealed again, and out of search; active facts searchable again
    raw = store.get(NS, "private-1")
    assert raw is not None and "Porto" not in json.dumps(raw.value)
    hits = store.search(NS, query="green tea")
    assert hits[0].value["text"] == "Prefers green tea" and hits[0].score is not None
    # the facade reads what was imported
    vault = MemoryVault(store, user_id="alice")
    assert [m.value.text for m in vault.instructions(applicable_to="paris trip")] == [
        "Answer in French"
    ]
    assert [m.value.text for m in MemoryVault(store, user_id="bob").list()] == ["Bob likes chess"]


def test_export_without_a_key_keeps_private_facts_sealed(store: VaultStore) -> None:
    ring = Keyring.generate()
    _fill(MemoryVault(store, user_id="alice"), ring)
    doc = export_user(store, "alice")
    assert "Porto" not in json.dumps(doc)
    opened = export_user(store, "alice", keyring=ring)
    erase_user(store, "alice")
    import_user(store, doc)  # sealed values go back as they were
    assert _strip(export_user(store, "alice")) == _strip(doc)
    assert _strip(export_user(store, "alice", keyring=ring)) == _strip(opened)


def test_import_to_another_user_id(store: VaultStore) -> None:
    MemoryVault(store, user_id="alice").remember("Likes jazz")
    doc = export_user(store, "alice")
    import_user(store, doc, user_id="alice2")
    assert [m.value.text for m in MemoryVault(store, user_id="alice2").list()] == ["Likes jazz"]


def test_memories_as_csv(store: VaultStore) -> None:
    ring = Keyring.generate()
    _fill(MemoryVault(store, user_id="alice"), ring)
    rows = list(
        csv.DictReader(io.StringIO(memories_csv(export_user(store, "alice", keyring=ring))))
    )
    assert len(rows) == 4
    quoted = next(r for r in rows if r["text"].startswith("Likes,"))
    assert quoted["text"] == 'Likes, "quoted" text; and commas'
    assert quoted["evidence"] == "said on 2026-01-01"
    tea = next(r for r in rows if r["text"] == "Prefers green tea")
    assert tea["tags"] == "drinks" and tea["category"] == "preference"
    assert {r["status"] for r in rows} == {"active", "superseded"}


def _doc(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "version": 1,
        "user_id": "alice",
        "memories": [{"key": "k1", "value": {"text": "Likes tea", "kind": "semantic"}}],
    }
    return {**base, **changes}


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ("not json", "not JSON"),
        ([1, 2], "JSON object"),
        (_doc(format="other"), "format"),
        (_doc(version=2), "newer"),
        (_doc(version="1"), "version"),
        (_doc(user_id=""), "user_id"),
        (_doc(memories={"k": 1}), "memories must be a list"),
        (_doc(memories=[{"key": "", "value": {"text": "x"}}]), r"memories\[1\].key"),
        (_doc(memories=[{"key": "k", "value": {"text": ""}}]), r"memories\[1\].value.text"),
        (
            _doc(memories=[{"key": "k", "value": {"text": "x", "confidence": 7}}]),
            r"memories\[1\].value.confidence",
        ),
        (
            _doc(memories=[{"key": "k", "value": {"text": "x", "kind": "episode"}}]),
            r"memories\[1\].value.kind",
        ),
        (
            _doc(
                memories=[
                    {"key": "k", "value": {"text": "a"}},
                    {"key": "k", "value": {"text": "b"}},
                ]
            ),
            "twice",
        ),
        (_doc(episodes=[{"key": "e", "value": {"summary": "x" * 5000}}]), r"episodes\[0\]"),
        (_doc(consent={"allow_extraction": "yes"}), "consent"),
        (_doc(memories=[{"key": "k", "value": {"text": "x" * 3000}}]), r"memories\[1\].value.text"),
        # keys are identifiers, not paths (the planted-key attack on the dashboard)
        (
            _doc(memories=[{"key": "x/../../instructions/k/delete?user_id=bob#", "value": {}}]),
            r"memories\[1\].key: must be 1..128 characters",
        ),
        (_doc(memories=[{"key": "a b", "value": {"text": "x"}}]), r"memories\[1\].key"),
        (_doc(memories=[{"key": "..", "value": {"text": "x"}}]), r"memories\[1\].key"),
        # strict types, unknown fields refused
        (
            _doc(instructions=[{"key": "i", "value": {"text": "x", "active": "false"}}]),
            r"instructions\[0\].value.active",
        ),
        (
            _doc(memories=[{"key": "k", "value": {"text": "x", "blob": "y" * 1000}}]),
            r"memories\[1\].value.blob: not a field",
        ),
        (_doc(memories=[{"key": "k", "value": {"text": "x", "confidence": "1"}}]), "confidence"),
        # a file of another shape: say what it lacks
        ({"memories": []}, 'lacks "format", "version"'),
        (_doc(user_id=None), "user_id: the document names no user"),
    ],
)
def test_bad_documents_write_nothing(store: VaultStore, doc: Any, field: str) -> None:
    MemoryVault(store, user_id="alice").remember("Existing fact")
    before = export_user(store, "alice")
    # a valid item first, so a partial write would show
    if isinstance(doc, dict) and isinstance(doc.get("memories"), list):
        doc = {**doc, "memories": [{"key": "ok", "value": {"text": "fine"}}, *doc["memories"]]}
        if field == "twice":
            doc["memories"] = doc["memories"][1:]
    with pytest.raises(InvalidExportError, match=field):
        import_user(store, doc)
    assert _strip(export_user(store, "alice")) == _strip(before)


def test_import_stores_values_as_their_model_writes_them(store: VaultStore) -> None:
    """Missing fields get the model's defaults (not null), dates their parsed form."""
    doc = _doc(
        memories=[
            {"key": "k1", "value": {"text": "Likes tea", "created_at": "2026-01-02T00:00:00Z"}}
        ],
        instructions=[{"key": "i1", "value": {"text": "Be brief", "active": False}}],
    )
    import_user(store, doc)
    fact = store.get(NS, "k1")
    assert fact is not None
    assert fact.value["status"] == "active" and fact.value["confidence"] == 1.0
    assert fact.value["created_at"].startswith("2026-01-02T00:00:00")
    instruction = store.get(("memories", "alice", "instructions"), "i1")
    assert instruction is not None and instruction.value["active"] is False


def test_oversized_import_is_refused(store: VaultStore) -> None:
    rows = [{"key": f"k{i}", "value": {"text": "x"}} for i in range(100_001)]
    with pytest.raises(InvalidExportError, match="split"):
        import_user(store, _doc(memories=rows))


def test_works_on_inmemory_store() -> None:
    store = InMemoryStore()
    MemoryVault(store, user_id="alice").remember("Likes jazz")
    doc = export_user(store, "alice")
    erase_user(store, "alice")
    import_user(store, doc)
    assert _strip(export_user(store, "alice")) == _strip(doc)


async def test_async_round_trip(astore: AsyncVaultStore) -> None:
    vault = MemoryVault(astore, user_id="alice")
    await vault.aremember("Prefers green tea", category="preference")
    await vault.aadd_episode("Planned the Rome trip", started_at=datetime(2026, 1, 1, tzinfo=UTC))
    await aset_consent(astore, "alice", allow_extraction=False)
    before = await aexport_user(astore, "alice")
    report = await aerase_user(astore, "alice")
    assert report.store_items == 3
    await aimport_user(astore, before)
    assert _strip(await aexport_user(astore, "alice")) == _strip(before)


def test_export_and_import_are_audited(store: VaultStore, audit: AuditLog) -> None:
    MemoryVault(store, user_id="alice").remember("Likes jazz")
    doc = export_user(store, "alice", audit=audit, actor="alice")
    import_user(store, doc, user_id="alice2", audit=audit, actor="ops")
    [exported] = audit.query("alice")
    assert exported.action == "export" and exported.actor == "alice"
    assert exported.detail == {
        "memories": 1,
        "instructions": 0,
        "episodes": 0,
        "threads": 0,
        "pending": 0,
    }
    [imported] = audit.query("alice2")
    assert imported.action == "import" and imported.detail["memories"] == 1
    with pytest.raises(InvalidExportError):
        import_user(store, {"format": "x"}, audit=audit)
    assert len(audit.query("alice")) == 1  # a refused import is not logged as one


async def test_async_export_is_audited(astore: AsyncVaultStore, aaudit: AsyncAuditLog) -> None:
    await MemoryVault(astore, user_id="alice").aremember("Likes jazz")
    doc = await aexport_user(astore, "alice", audit=aaudit)
    await aimport_user(astore, doc, audit=aaudit)
    assert [e.action.value for e in await aaudit.query("alice")] == ["import", "export"]


def test_export_does_not_extend_what_a_ttl_expires(
    store: VaultStore, pg_uri: str, schema: str
) -> None:
    # A pending tail is kept 30 days; reading it for an export must not restart that clock.
    tails = tails_namespace(NS)
    store.batch([PutOp(tails, "t1", {"messages": [], "message_ids": []}, index=False, ttl=60.0)])
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(
            f"UPDATE {schema}.store_items SET expires_at = now() + interval '1 minute'"
            " WHERE prefix = %s",
            (".".join(tails),),
        )
        assert [p["thread_id"] for p in export_user(store, "alice")["pending"]] == ["t1"]
        row = conn.execute(
            f"SELECT expires_at - now() FROM {schema}.store_items WHERE prefix = %s",
            (".".join(tails),),
        ).fetchone()
    assert row is not None and row[0].total_seconds() < 120  # not reset to 60 minutes
