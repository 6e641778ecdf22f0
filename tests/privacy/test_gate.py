"""The privacy gate: tiers, always-on rules, sanitised answers, every request logged."""

from __future__ import annotations

import pytest

from langmem_vault.memory._models import SemanticFact
from langmem_vault.memory._sealing import Keyring, encrypt_fact
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
from langmem_vault.privacy._subject_rights.gate import GateAnswer, PrivacyGate, Tier
from langmem_vault.store import AsyncVaultStore, VaultStore

GRANTS = {"min": "minimal", "ctx": "contextual", "all": Tier.FULL}


def _fill(vault: MemoryVault) -> dict[str, str]:
    keys = {
        "pref": vault.remember("Prefers window seats", category="preference").key,
        "skill": vault.remember("Writes Rust", category="skill").key,
        "project": vault.remember(
            "Leads the beta launch, emails ana@example.com about it", category="project"
        ).key,
        "salary": vault.remember("Earns $85,000 a year", category="personal").key,
        "kids": vault.remember("Has two kids at school", category="relationship").key,
        "medical": vault.remember("Was diagnosed with asthma", category="general").key,
        "company": vault.remember("Works at Acme", category="company").key,
        "old": vault.remember("Prefers aisle seats", category="preference").key,
    }
    vault.forget(keys["old"])
    vault.add_episode("Planned the beta launch party")
    vault.add_instruction("Answer in French")
    ring = Keyring.generate()
    ns = ("memories", "alice", "semantic")
    secret = SemanticFact(text="Secret preference", category="preference", private=True)
    vault.store.put(ns, "priv", encrypt_fact(secret.to_store(), ring, ns, "priv"), index=False)
    plain_private = vault.remember("Another private pref", category="preference", private=True)
    keys["plain_private"] = plain_private.key
    return keys


@pytest.fixture
def gate(store: VaultStore, audit: AuditLog) -> tuple[PrivacyGate, dict[str, str]]:
    keys = _fill(MemoryVault(store, user_id="alice"))
    MemoryVault(store, user_id="bob").remember("Bob prefers tea", category="preference")
    return PrivacyGate(store, audit=audit, grants=GRANTS), keys


def test_tiers_allow_growing_sets_of_categories(
    gate: tuple[PrivacyGate, dict[str, str]], audit: AuditLog
) -> None:
    g, keys = gate
    none = g.request("alice", "stranger", purpose="curious")
    assert none == GateAnswer(Tier.NONE, "", (), 0, ())
    minimal = g.request("alice", "min", purpose="seat choice")
    assert minimal.tier is Tier.MINIMAL
    # private facts (sealed or not) and the retired one never leave
    assert sorted(minimal.lines) == ["Preferences: Prefers window seats", "Skills: Writes Rust"]
    ctx = g.request("alice", "ctx", purpose="plan work", tier="full")  # capped at contextual
    assert ctx.tier is Tier.CONTEXTUAL
    assert "Projects: Leads the beta launch, emails <EMAIL> about it" in ctx.lines
    assert "Recent: Planned the beta launch party" in ctx.lines
    assert not any("Acme" in line or "French" in line for line in ctx.lines)
    full = g.request("alice", "all", purpose="assist")
    assert "Work: Works at Acme" in full.lines
    assert "Personal: Earns a five-figure amount a year" in full.lines
    assert "Instructions: Answer in French" in full.lines
    # always-on rules at every tier
    text = full.summary
    for banned in ("kids", "asthma", "85,000", "ana@example.com", "aisle", "private pref"):
        assert banned not in text
    assert full.withheld == 2  # family and medical facts removed
    assert keys["kids"] not in full.keys and keys["pref"] in full.keys
    assert not any(k in text for k in keys.values())  # no keys, no rows, only text
    lower = g.request("alice", "all", purpose="only basics", tier="minimal")
    assert lower.tier is Tier.MINIMAL
    # every request is in the audit log
    events = audit.query("alice", actions=["gate"])
    assert [e.actor for e in events] == ["all", "all", "ctx", "min", "stranger"]
    assert events[0].detail["tier_requested"] == "minimal"
    assert events[-1].detail == {
        "purpose": "curious",
        "tier_requested": "full",
        "tier_granted": "none",
        "shared": 0,
        "withheld": 0,
        "keys": [],
    }
    assert sorted(events[1].detail["keys"]) == sorted(full.keys)


def test_query_narrows_to_relevant_memories(gate: tuple[PrivacyGate, dict[str, str]]) -> None:
    g, _ = gate
    answer = g.request("alice", "all", purpose="travel", query="window seats")
    assert answer.lines[0] == "Preferences: Prefers window seats"


def test_one_user_only(gate: tuple[PrivacyGate, dict[str, str]]) -> None:
    g, _ = gate
    assert g.request("bob", "all", purpose="x").lines == ("Preferences: <PERSON> prefers tea",)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"user_id": ""}, "user_id"),
        ({"requester": ""}, "requester"),
        ({"purpose": "  "}, "purpose"),
        ({"purpose": "x" * 501}, "purpose"),
        ({"query": "q" * 5000}, "query"),
        ({"tier": "root"}, "tier"),
    ],
)
def test_bad_requests_are_refused_and_not_answered(
    gate: tuple[PrivacyGate, dict[str, str]],
    audit: AuditLog,
    kwargs: dict[str, str],
    field: str,
) -> None:
    g, _ = gate
    args = {"user_id": "alice", "requester": "all", "purpose": "p", **kwargs}
    user, requester = args.pop("user_id"), args.pop("requester")
    with pytest.raises(ValueError, match=field):
        g.request(user, requester, **args)
    assert audit.query("alice") == []


def test_bad_configuration(store: VaultStore, audit: AuditLog, aaudit: AsyncAuditLog) -> None:
    with pytest.raises(ValueError, match="audit"):
        PrivacyGate(store, audit=None, grants={})
    with pytest.raises(ValueError, match="grants"):
        PrivacyGate(store, audit=audit, grants={"p": "superuser"})
    with pytest.raises(ValueError, match="max_items"):
        PrivacyGate(store, audit=audit, grants={}, max_items=0)
    with pytest.raises(TypeError, match="arequest"):
        PrivacyGate(store, audit=aaudit, grants={}).request("alice", "p", purpose="x")


async def test_async_gate(astore: AsyncVaultStore, aaudit: AsyncAuditLog) -> None:
    vault = MemoryVault(astore, user_id="alice")
    await vault.aremember("Prefers window seats", category="preference")
    await vault.aremember("My daughter Ana loves maths", category="relationship")
    gate = PrivacyGate(astore, audit=aaudit, grants={"all": "full"})
    answer = await gate.arequest("alice", "all", purpose="assist")
    assert answer.lines == ("Preferences: Prefers window seats",) and answer.withheld == 1
    [event] = await aaudit.query("alice")
    assert event.action == "gate" and event.detail["shared"] == 1
