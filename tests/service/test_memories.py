"""MemoryService memories, instructions and stats against the real embedded Postgres, through
the sync methods and their async twins (the ``drive`` fixture runs each test in both modes)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from langmem_vault.service import (
    Forbidden,
    Identity,
    InvalidInput,
    MemoryQuery,
    NotFound,
)
from tests.service.conftest import Driver


async def _keys(drive: Driver, user: str, **filters: object) -> list[str]:
    page = await drive("list_memories", user, **filters)
    return [m.key for m in page.items]


async def test_add_list_filters_and_total(drive: Driver) -> None:
    tea = await drive(
        "add_memory", "ana", "Prefers green tea", category="preference", tags=["Drink"]
    )
    acme = await drive("add_memory", "ana", "Works at Acme", category="company")
    await drive("add_memory", "bob", "Lives in Lyon", category="personal")
    page = await drive("list_memories", "ana")
    assert page.total == 2
    assert [m.key for m in page.items] == [acme.key, tea.key]  # newest first
    assert await _keys(drive, "ana", category="preference") == [tea.key]
    assert await _keys(drive, "ana", tags=["drink"]) == [tea.key]
    assert await _keys(drive, "ana", kind="instruction") == []
    one = await drive("list_memories", "ana", limit=1, offset=1)
    assert (one.total, [m.key for m in one.items]) == (2, [tea.key])
    future = datetime.now(UTC) + timedelta(hours=1)
    assert await _keys(drive, "ana", since=future) == []
    assert await _keys(drive, "ana", until=future) == [acme.key, tea.key]
    created = await drive.events("ana")
    assert {(e.action, e.memory_key, e.actor) for e in created} == {
        ("create", tea.key, "admin"),
        ("create", acme.key, "admin"),
    }


async def test_edit_reembeds_and_validates(drive: Driver) -> None:
    fact = await drive("add_memory", "ana", "Prefers green tea", category="preference")
    edited = await drive(
        "edit_memory", "ana", fact.key, text="Prefers black coffee", confidence=0.4
    )
    assert (edited.text, edited.confidence) == ("Prefers black coffee", 0.4)
    # The index follows the new text: a search for the new words finds it semantically.
    hits = await drive("search_memories", "ana", "black coffee", search_type="semantic")
    assert [h.key for h in hits.items] == [fact.key]
    with pytest.raises(InvalidInput) as bad:
        await drive("edit_memory", "ana", fact.key, confidence=2)
    assert bad.value.field == "confidence"
    with pytest.raises(InvalidInput) as unknown:
        await drive("edit_memory", "ana", fact.key, colour="red")
    assert unknown.value.field == "colour"
    with pytest.raises(NotFound):
        await drive("edit_memory", "ana", "no-such-key", text="x")
    stored = await drive("get_memory", "ana", fact.key)
    assert (stored.text, stored.confidence) == ("Prefers black coffee", 0.4)
    assert [e.action for e in await drive.events("ana")] == ["edit", "create"]


async def test_bad_add_writes_nothing(drive: Driver) -> None:
    with pytest.raises(InvalidInput) as bad:
        await drive("add_memory", "ana", "x", category="nonsense")
    assert bad.value.field == "category"
    with pytest.raises(InvalidInput) as empty:
        await drive("add_memory", "ana", "   ")
    assert empty.value.field == "text"
    assert (await drive("list_memories", "ana")).total == 0
    assert await drive.events("ana") == []


async def test_forget_restore_and_hard(drive: Driver) -> None:
    fact = await drive("add_memory", "ana", "Likes jazz")
    gone = await drive("forget_memory", "ana", fact.key)
    assert gone.status == "forgotten"
    assert await _keys(drive, "ana", status=["active"]) == []
    assert await _keys(drive, "ana", status=["forgotten"]) == [fact.key]
    back = await drive("restore_memory", "ana", fact.key)
    assert (back.status, back.value["valid_to"]) == ("active", None)
    with pytest.raises(InvalidInput) as twice:
        await drive("restore_memory", "ana", fact.key)
    assert twice.value.field == "status"
    await drive("forget_memory", "ana", fact.key, hard=True)
    with pytest.raises(NotFound):
        await drive("get_memory", "ana", fact.key)


async def test_pending_queue_confirm_and_reject(drive: Driver) -> None:
    old = await drive("add_memory", "ana", "Lives in Lyon", category="personal")
    new = await drive("add_memory", "ana", "Lives in Berlin", category="personal")
    await drive("edit_memory", "ana", new.key, status="pending", supersedes=old.key)
    maybe = await drive("add_memory", "ana", "Owns a cat")
    await drive("edit_memory", "ana", maybe.key, status="pending")
    queue = await drive("list_memories", "ana", status=["pending"])
    assert sorted(m.key for m in queue.items) == sorted([new.key, maybe.key])
    confirmed = await drive("confirm_memory", "ana", new.key)
    assert confirmed.status == "active"
    assert (await drive("get_memory", "ana", old.key)).status == "superseded"
    rejected = await drive("reject_memory", "ana", maybe.key)
    assert rejected.status == "forgotten"
    assert (await drive("list_memories", "ana", status=["pending"])).items == []
    with pytest.raises(InvalidInput) as not_pending:
        await drive("confirm_memory", "ana", old.key)
    assert not_pending.value.field == "status"
    ops = [e.detail.get("op") for e in await drive.events("ana") if e.action == "edit"]
    assert ops[:2] == ["reject", "confirm"]


async def test_search_types_and_match(drive: Driver) -> None:
    tea = await drive("add_memory", "ana", "Prefers green tea in the morning")
    await drive("add_memory", "ana", "Works at Acme Robotics")
    secret = await drive("add_memory", "ana", "Sees a therapist on Mondays", private=True)
    text = await drive("search_memories", "ana", "green tea", search_type="text")
    assert [(h.key, h.match_type, h.relevance) for h in text.items] == [(tea.key, "text", 1.0)]
    hybrid = await drive("search_memories", "ana", "green tea", search_type="hybrid")
    assert hybrid.items[0].key == tea.key and hybrid.items[0].match_type == "both"
    # A private fact is never indexed: only the text search (in process) finds it.
    sem = await drive("search_memories", "ana", "therapist Mondays", search_type="semantic")
    assert secret.key not in [h.key for h in sem.items]
    txt = await drive("search_memories", "ana", "therapist", search_type="text")
    assert [h.key for h in txt.items] == [secret.key]
    strict = await drive(
        "search_memories", "ana", "green coffee", search_type="text", min_relevance=0.9
    )
    assert strict.items == []
    with pytest.raises(InvalidInput) as bad:
        await drive("search_memories", "ana", "tea", search_type="fuzzy")
    assert bad.value.field == "search_type"
    with pytest.raises(InvalidInput) as rel:
        await drive("search_memories", "ana", "tea", min_relevance=3)
    assert rel.value.field == "min_relevance"


async def test_instructions(drive: Driver) -> None:
    low = await drive("add_instruction", "ana", "Answer briefly", priority=3)
    high = await drive(
        "add_instruction", "ana", "Answer in French", priority=9, condition="topic contains paris"
    )
    listed = await drive("list_instructions", "ana")
    assert [i.key for i in listed] == [high.key, low.key]
    assert [i.key for i in await drive("list_instructions", "ana", min_priority=5)] == [high.key]
    edited = await drive("edit_instruction", "ana", low.key, priority=10)
    assert edited.priority == 10
    with pytest.raises(InvalidInput) as bad:
        await drive("edit_instruction", "ana", low.key, priority=11)
    assert bad.value.field == "priority"
    with pytest.raises(InvalidInput) as cond:
        await drive("add_instruction", "ana", "x", condition="moon is full")
    assert cond.value.field == "condition"
    off = await drive("disable_instruction", "ana", high.key)
    assert off.status == "disabled"
    assert [i.key for i in await drive("list_instructions", "ana", active_only=True)] == [low.key]
    assert (await drive("restore_memory", "ana", high.key)).status == "active"
    fact = await drive("add_memory", "ana", "Likes jazz")
    with pytest.raises(NotFound):
        await drive("edit_instruction", "ana", fact.key, priority=2)
    await drive("delete_instruction", "ana", low.key)
    assert [i.key for i in await drive("list_instructions", "ana")] == [high.key]
    assert len(await drive("list_instructions", "ana")) == 1


async def test_episodes_listed_newest_first(drive: Driver) -> None:
    from langmem_vault.memory._vault import MemoryVault

    vault = MemoryVault(drive.store, user_id="ana")
    now = datetime.now(UTC)
    for i, summary in enumerate(["Planned Rome", "Booked hotel"]):
        fields = {"started_at": now + timedelta(minutes=i), "ended_at": now + timedelta(minutes=i)}
        if drive.mode == "sync":
            vault.add_episode(summary, **fields)
        else:
            await vault.aadd_episode(summary, **fields)
    episodes = await drive("list_episodes", "ana")
    assert [e.text for e in episodes] == ["Booked hotel", "Planned Rome"]
    assert {e.kind for e in episodes} == {"episode"}
    with pytest.raises(InvalidInput):
        await drive("forget_memory", "ana", episodes[0].key)  # no soft delete for episodes


async def test_stats_users_and_identity(drive: Driver) -> None:
    await drive("add_memory", "ana", "Prefers green tea", category="preference")
    await drive("add_memory", "ana", "Works at Acme", category="company")
    pending = await drive("add_memory", "ana", "Owns a cat")
    await drive("edit_memory", "ana", pending.key, status="pending")
    await drive("add_instruction", "bob", "Be brief")
    stats = await drive("stats", "ana", days=7)
    assert (stats.total, stats.pending, stats.this_week) == (3, 1, 3)
    assert stats.by_category == {"preference": 1, "company": 1}
    assert stats.by_status == {"active": 2, "pending": 1}
    assert (len(stats.growth), stats.growth[-1].added, stats.growth[-1].total) == (7, 3, 3)
    everyone = await drive("stats")
    assert (everyone.users, everyone.total, everyone.by_kind) == (
        2,
        4,
        {"semantic": 3, "instruction": 1},
    )
    assert await drive("list_users") == ["ana", "bob"]
    assert await drive("user_exists", "ana") and not await drive("user_exists", "carl")
    with pytest.raises(NotFound) as unknown:
        await drive("require_user", "carl")
    assert unknown.value.field == "user_id"
    with pytest.raises(InvalidInput) as days:
        await drive("stats", "ana", days=0)
    assert days.value.field == "days"
    # A user identity: its own data only; no listing of users.
    drive.service = drive.service.acting_as(Identity.for_user("bob"))
    assert [i.text for i in await drive("list_instructions", "bob")] == ["Be brief"]
    with pytest.raises(Forbidden):
        await drive("list_memories", "ana")
    with pytest.raises(Forbidden):
        await drive("add_memory", "ana", "Sneaky")
    with pytest.raises(Forbidden):
        await drive("list_users")
    await drive("add_memory", "bob", "Likes chess")
    assert (await drive.events("bob"))[0].actor == "bob"


async def test_query_validation(drive: Driver) -> None:
    with pytest.raises(InvalidInput) as status:
        await drive("list_memories", "ana", status=["sleeping"])
    assert status.value.field == "status.0"
    with pytest.raises(InvalidInput) as limit:
        await drive("list_memories", "ana", limit=0)
    assert limit.value.field == "limit"
    await drive("list_memories", "ana", offset=500)
    with pytest.raises(InvalidInput, match=r"at most 500.*after") as deep:
        await drive("list_memories", "ana", offset=501)  # deeper pages: by cursor
    assert deep.value.field == "offset"
    with pytest.raises(InvalidInput) as user:
        await drive("list_memories", "")
    assert user.value.field == "user_id"
    with pytest.raises(InvalidInput):
        await drive("list_memories", "ana", MemoryQuery(), kind="semantic")


async def test_reembed_one_user_or_everyone(drive: Driver) -> None:
    await drive("add_memory", "ana", "Prefers green tea", category="preference")
    await drive("add_memory", "bob", "Lives in Lyon", category="personal")
    assert await drive("reembed", "ana") == 1
    assert await drive("reembed") == 2  # an admin, everyone
    with pytest.raises(NotFound) as unknown:
        await drive("reembed", "nobody")
    assert unknown.value.field == "user_id"
    ana = drive.service.acting_as(Identity.for_user("ana"))
    with pytest.raises(Forbidden):
        ana.reembed() if drive.mode == "sync" else await ana.areembed()


def test_reembed_needs_a_vault_store() -> None:
    from langgraph.store.memory import InMemoryStore

    from langmem_vault.service import MemoryService

    with pytest.raises(InvalidInput) as bad:
        MemoryService(InMemoryStore()).reembed()
    assert bad.value.field == "store"
