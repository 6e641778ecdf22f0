"""remember (a stated fact: redaction, consent, reconcile) and profile, sync and async."""

from __future__ import annotations

import pytest

from langmem_vault.service import Forbidden, Identity, InvalidInput
from tests.service.conftest import Driver


async def test_remember_adds_then_reinforces_and_audits(drive: Driver) -> None:
    first = await drive("remember", "alice", "Prefers green tea", category="preference")
    assert first.outcome == "added" and first.memory is not None
    assert first.memory.text == "Prefers green tea" and first.memory.status == "active"
    again = await drive("remember", "alice", "Prefers green tea")
    assert again.outcome == "reinforced" and again.memory.key == first.memory.key
    assert again.memory.value["mentions"] == 2
    page = await drive("list_memories", "alice", kind="semantic")
    assert page.total == 1  # reconciled: one record, not two
    actions = [(e.action, e.detail.get("outcome")) for e in await drive.events("alice")]
    assert ("create", "added") in actions and ("edit", "reinforced") in actions


async def test_remember_redacts_and_respects_consent(drive: Driver) -> None:
    found = await drive("remember", "alice", "My email is jane@example.com")
    assert found.memory.text == "My email is <EMAIL>"
    await drive("consent", "bob", allow_extraction=False)
    refused = await drive("remember", "bob", "Prefers coffee")
    assert refused.outcome == "refused" and refused.memory is None
    assert (await drive("list_memories", "bob", kind="semantic")).total == 0


async def test_remember_checks_input_and_identity(drive: Driver) -> None:
    with pytest.raises(InvalidInput) as bad:
        await drive("remember", "alice", " ")
    assert bad.value.field == "text"
    drive.service = drive.service.acting_as(Identity.for_user("bob"))
    with pytest.raises(Forbidden):
        await drive("remember", "alice", "Likes tea")


async def test_profile_ranks_facts_without_private_and_active_instructions(
    drive: Driver,
) -> None:
    await drive("consent", "alice", allow_sensitive_facts=True)  # else a private fact is refused
    await drive("remember", "alice", "Lives in Lyon", category="personal")
    private = await drive("remember", "alice", "Takes insulin daily", private=True)
    assert private.outcome == "added" and private.memory.private
    kept = await drive("add_instruction", "alice", "Answer in French", priority=8)
    off = await drive("add_instruction", "alice", "Use emojis", priority=2)
    await drive("forget_memory", "alice", off.key)
    profile = await drive("profile", "alice")
    assert [f.text for f in profile.facts] == ["Lives in Lyon"]
    assert [i.key for i in profile.instructions] == [kept.key]
    with pytest.raises(InvalidInput) as bad:
        await drive("profile", "alice", limit=0)
    assert bad.value.field == "limit"
