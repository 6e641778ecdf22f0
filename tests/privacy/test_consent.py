"""Consent per user: stored in the store, and obeyed by the extraction filter."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from langmem_vault.memory._models import (
    Extraction,
    ProposedEpisode,
    ProposedFact,
    ProposedInstruction,
)
from langmem_vault.privacy._subject_rights.consent import (
    ConsentSettings,
    aget_consent,
    aset_consent,
    filter_extraction,
    get_consent,
    set_consent,
)
from langmem_vault.store import AsyncVaultStore, VaultStore


def test_defaults_then_changes_are_stored_per_user(store: VaultStore) -> None:
    assert get_consent(store, "alice") == ConsentSettings()
    changed = set_consent(store, "alice", allow_extraction=False)
    assert changed.allow_extraction is False and changed.updated_at is not None
    again = set_consent(store, "alice", allow_sensitive_facts=True)
    assert (again.allow_extraction, again.allow_sensitive_facts) == (False, True)
    assert get_consent(store, "alice") == again
    assert get_consent(store, "bob") == ConsentSettings()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"allow_everything": True}, "allow_everything"),
        ({"allow_extraction": "no"}, "allow_extraction"),
        ({"allow_personal_facts": 1}, "allow_personal_facts"),
    ],
)
def test_bad_settings_write_nothing(
    store: VaultStore, changes: dict[str, object], field: str
) -> None:
    set_consent(store, "alice", allow_personal_facts=False)
    before = get_consent(store, "alice")
    with pytest.raises(ValueError, match=field):
        set_consent(store, "alice", **changes)  # type: ignore[arg-type]
    assert get_consent(store, "alice") == before
    with pytest.raises(ValueError, match="user_id"):
        get_consent(store, "")


async def test_async_consent(astore: AsyncVaultStore) -> None:
    await aset_consent(astore, "alice", allow_personal_facts=False)
    got = await aget_consent(astore, "alice")
    assert got.allow_personal_facts is False and got.allow_extraction is True


def _extraction() -> Extraction:
    return Extraction(
        facts=[
            ProposedFact(text="Prefers Python for data analysis", category="skill"),
            ProposedFact(text="Lives in Lyon", category="personal"),
            ProposedFact(text="Has a sister called Ana", category="general"),
            ProposedFact(text="Takes insulin for diabetes", category="general"),
            ProposedFact(text="Earns $85,000 a year", category="general"),
            ProposedFact(text="Goes to church on Sundays", category="general"),
            ProposedFact(text="Birthday is in May", category="general", private=True),
            ProposedFact(text="Ships the beta in March", category="project"),
        ],
        episode=ProposedEpisode(summary="Talked about the beta launch plan"),
        instructions=[
            ProposedInstruction(text="Answer in French"),
            ProposedInstruction(text="Remind me to take my medication"),
        ],
        thread_id="t1",
        message_ids=["m1", "m2"],
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def _texts(ex: Extraction) -> list[str]:
    return [f.text for f in ex.facts]


SENSITIVE = {"Takes insulin for diabetes", "Earns $85,000 a year", "Goes to church on Sundays"}


def test_default_consent_keeps_sensitive_facts_as_private_facts() -> None:
    out = filter_extraction(_extraction(), ConsentSettings())
    assert out.dropped == []
    private = {f.text for f in out.extraction.facts if f.private}
    assert private == SENSITIVE | {"Birthday is in May"}
    assert [i.text for i in out.extraction.instructions] == [
        "Answer in French",
        "Remind me to take my medication",
    ]
    assert out.extraction.episode is not None
    assert out.extraction.thread_id == "t1" and out.extraction.message_ids == ["m1", "m2"]


def test_refusing_sensitive_facts_drops_them_only() -> None:
    out = filter_extraction(_extraction(), ConsentSettings(allow_sensitive_facts=False))
    assert _texts(out.extraction) == [
        "Prefers Python for data analysis",
        "Lives in Lyon",
        "Has a sister called Ana",
        "Birthday is in May",
        "Ships the beta in March",
    ]
    assert out.dropped == [
        "fact: sensitive (medical)",
        "fact: sensitive (financial)",
        "fact: sensitive (religion)",
        "instruction: sensitive (medical)",
    ]
    assert [i.text for i in out.extraction.instructions] == ["Answer in French"]
    assert out.extraction.episode is not None
    assert "insulin" not in " ".join(out.dropped)  # reasons, never the text


def test_no_personal_facts() -> None:
    consent = ConsentSettings(allow_personal_facts=False, allow_sensitive_facts=True)
    out = filter_extraction(_extraction(), consent)
    assert _texts(out.extraction) == [
        "Prefers Python for data analysis",
        "Takes insulin for diabetes",
        "Earns $85,000 a year",
        "Goes to church on Sundays",
        "Ships the beta in March",
    ]
    assert len(out.extraction.instructions) == 2


def test_no_extraction_at_all() -> None:
    out = filter_extraction(_extraction(), ConsentSettings(allow_extraction=False))
    ex = out.extraction
    assert (ex.facts, ex.episode, ex.instructions) == ([], None, [])
    assert ex.thread_id == "t1" and ex.started_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert out.dropped == ["extraction not allowed (11 proposals)"]


def test_everything_allowed_keeps_everything() -> None:
    consent = ConsentSettings(allow_sensitive_facts=True)
    out = filter_extraction(_extraction(), consent)
    assert _texts(out.extraction) == _texts(_extraction()) and out.dropped == []
    assert out.extraction.instructions == _extraction().instructions


def test_sensitive_episode_is_dropped() -> None:
    ex = Extraction(episode=ProposedEpisode(summary="Discussed the chemo schedule"))
    assert filter_extraction(ex, ConsentSettings()).extraction.episode is None


def test_wrong_types_are_refused() -> None:
    with pytest.raises(TypeError, match="Extraction"):
        filter_extraction({"facts": []}, ConsentSettings())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ConsentSettings"):
        filter_extraction(Extraction(), {"allow_extraction": True})  # type: ignore[arg-type]


def test_the_extraction_hook_reads_the_owner_from_the_namespaces(store: VaultStore) -> None:
    from langmem_vault.extraction._apply import apply
    from langmem_vault.memory._namespaces import MemoryNamespaces
    from langmem_vault.memory._vault import MemoryVault
    from langmem_vault.privacy._subject_rights.consent import filter_for_namespaces

    ns = MemoryNamespaces().resolve({"configurable": {"user_id": "alice"}})
    set_consent(store, "alice", allow_personal_facts=False)
    out = filter_for_namespaces(store, _extraction(), ns)
    apply(store, out.extraction, ns)  # what reconcile stores obeys consent
    stored = {m.value.text for m in MemoryVault(store, user_id="alice").list(status=None)}
    # Sensitive facts are a switch of their own (default: kept, as private facts).
    assert stored == {"Prefers Python for data analysis", "Ships the beta in March"} | SENSITIVE
    shared = MemoryNamespaces(semantic=("team", "semantic"))
    team_ns = shared.resolve({"configurable": {"user_id": "alice"}})
    assert filter_for_namespaces(store, _extraction(), team_ns, templates=shared).dropped == []


async def test_the_async_extraction_hook(astore: AsyncVaultStore) -> None:
    from langmem_vault.memory._namespaces import MemoryNamespaces
    from langmem_vault.privacy._subject_rights.consent import afilter_for_namespaces

    ns = MemoryNamespaces().resolve({"configurable": {"user_id": "bob"}})
    await aset_consent(astore, "bob", allow_extraction=False)
    out = await afilter_for_namespaces(astore, _extraction(), ns)
    assert out.extraction.facts == [] and out.extraction.instructions == []
