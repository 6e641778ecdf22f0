"""MemoryVault on InMemoryStore and VaultStore, sync and async."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from langgraph.store.base import BaseStore
from pydantic import ValidationError

from langmem_vault.memory import MissingConfigKeyError
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.store import VaultStore
from tests.support.embeddings import TrigramEmbeddings, index_config


def test_remember_recall_list(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    vault.remember("Lives in Lyon", category="personal")
    vault.remember("Works at Acme Robotics", category="company")
    vault.remember("Prefers window seats on flights", category="preference", confidence=0.9)
    hits = vault.recall("which city does the user live in", limit=1)
    assert [h.value.text for h in hits] == ["Lives in Lyon"]
    assert hits[0].score is not None
    assert {m.value.text for m in vault.list()} == {
        "Lives in Lyon",
        "Works at Acme Robotics",
        "Prefers window seats on flights",
    }
    stored = store.search(("memories", "u1", "semantic"))
    assert all(item.value["kind"] == "semantic" for item in stored)


def test_users_are_partitioned(store: BaseStore) -> None:
    MemoryVault(store, user_id="u1").remember("Secret of u1")
    other = MemoryVault(store, user_id="u2")
    assert other.list() == []
    assert other.recall("secret") == []


def test_methods_take_no_user_id() -> None:
    # The vault is bound to one user at construction; no method names a user again.
    for name, method in inspect.getmembers(MemoryVault, inspect.isfunction):
        if not name.startswith("_"):
            assert "user_id" not in inspect.signature(method).parameters, name


def test_refuses_another_user(store: BaseStore) -> None:
    vault = MemoryVault(store, config={"configurable": {"user_id": "u1"}})
    with pytest.raises(PermissionError):
        MemoryVault(store, user_id="u2", config={"configurable": {"user_id": "u1"}})
    assert vault.list() == []  # nothing was written
    with pytest.raises(MissingConfigKeyError, match="user_id"):
        MemoryVault(store)


def test_bad_input_writes_nothing(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    with pytest.raises(ValidationError, match="confidence"):
        vault.remember("x", confidence=3)
    key = vault.remember("Likes tea").key
    with pytest.raises(ValidationError, match="category"):
        vault.update(key, category="nonsense")
    with pytest.raises(ValueError, match="unknown fact field"):
        vault.update(key, colour="red")
    with pytest.raises(KeyError, match="no fact"):
        vault.update("missing", confidence=0.2)
    with pytest.raises(ValidationError, match="condition"):
        vault.add_instruction("x", condition="when sunny")
    facts = vault.list(status=None)
    assert [(f.value.text, f.value.category) for f in facts] == [("Likes tea", "general")]
    assert vault.instructions(active_only=False) == []


def test_update_reindexes_changed_text(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    key = vault.remember("Drives a red bicycle").key
    vault.remember("Owns a sailboat")
    vault.update(key, text="Plays the cello in an orchestra")
    hits = vault.recall("musical instrument", limit=1)
    assert hits[0].key == key
    assert hits[0].value.text == "Plays the cello in an orchestra"


def test_forget_soft_and_hard(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    soft = vault.remember("Has a cat").key
    hard = vault.remember("Phone number is 555").key
    assert vault.forget(soft)
    closed = vault.get(soft)
    assert closed is not None and closed.value.status == "superseded"
    assert closed.value.valid_to is not None
    assert vault.recall("cat") == [] or all(m.key != soft for m in vault.recall("cat"))
    assert vault.forget(hard, hard=True)
    assert vault.get(hard) is None
    assert not vault.forget("missing")


def test_confirm_pending_closes_superseded(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    old = vault.remember("Lives in Lyon").key
    new = vault.remember("Lives in Berlin", confidence=0.6).key
    vault.update(new, status="pending_confirmation", supersedes=old)
    assert [m.key for m in vault.recall("where does the user live")] == [old]
    vault.confirm(new)
    got_old, got_new = vault.get(old), vault.get(new)
    assert got_old is not None and got_old.value.status == "superseded"
    assert got_old.value.superseded_by == new
    assert got_new is not None and got_new.value.status == "active"


def test_instructions(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    low = vault.add_instruction("Be concise", priority=2).key
    vault.add_instruction("Answer in French", priority=9)
    vault.add_instruction("Mention visas", priority=5, condition="topic contains travel")
    vault.add_instruction(
        "Old rule", priority=10, expires_at=datetime.now(UTC) - timedelta(minutes=1)
    )
    assert [i.value.text for i in vault.instructions()] == ["Answer in French", "Be concise"]
    travel = vault.instructions(applicable_to="travel plans")
    assert [i.value.text for i in travel] == ["Answer in French", "Mention visas", "Be concise"]
    assert vault.deactivate_instruction(low)
    assert [i.value.text for i in vault.instructions()] == ["Answer in French"]
    assert len(vault.instructions(active_only=False)) == 4


def test_episodes_recent_first(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    now = datetime.now(UTC)
    vault.add_episode(
        "Planned Rome trip", started_at=now - timedelta(days=3), ended_at=now - timedelta(days=3)
    )
    vault.add_episode("Debugged the robot arm", thread_id="t2", started_at=now, ended_at=now)
    assert [e.value.summary for e in vault.episodes()] == [
        "Debugged the robot arm",
        "Planned Rome trip",
    ]
    assert vault.episodes("holiday in Italy", limit=1)[0].value.summary == "Planned Rome trip"


async def test_async_twins(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    key = (await vault.aremember("Lives in Lyon", category="personal")).key
    await vault.aremember("Works at Acme", category="company")
    hits = await vault.arecall("home city", limit=1)
    assert hits[0].key == key
    await vault.aupdate(key, confidence=0.4)
    got = await vault.aget(key)
    assert got is not None and got.value.confidence == 0.4
    ins = await vault.aadd_instruction("Answer in French", priority=7)
    assert [i.key for i in await vault.ainstructions()] == [ins.key]
    assert await vault.adeactivate_instruction(ins.key)
    assert await vault.ainstructions() == []
    await vault.aadd_episode("Talked about Lyon", importance=0.7)
    assert len(await vault.aepisodes()) == 1
    assert await vault.aforget(key)
    assert [m.value.text for m in await vault.alist()] == ["Works at Acme"]
    with pytest.raises(TypeError, match="user_id"):  # the vault's user is the only one
        await vault.alist(user_id="intruder")


def _shuffled(n: int) -> list[int]:
    """0..n-1 in an order where neither the first nor the last 50 written hold the three
    newest: a store's own order (insertion, or last write first) then gives wrong answers."""
    return [n - 1, *range(n - 3), n - 2, n - 3]


def test_recent_episodes_by_their_own_time_among_60(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for n in _shuffled(60):
        when = base + timedelta(hours=n)
        vault.add_episode(f"Episode number {n}", started_at=when, ended_at=when)
    assert [e.value.summary for e in vault.episodes(limit=3)] == [
        "Episode number 59",
        "Episode number 58",
        "Episode number 57",
    ]
    assert len(vault.episodes(limit=60)) == 60


async def test_arecent_episodes_by_their_own_time_among_60(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for n in _shuffled(60):
        when = base + timedelta(hours=n)
        await vault.aadd_episode(f"Episode number {n}", started_at=when, ended_at=when)
    found = await vault.aepisodes(limit=3)
    assert [e.value.summary for e in found] == [f"Episode number {n}" for n in (59, 58, 57)]


def test_list_is_oldest_first_across_pages(store: BaseStore) -> None:
    from langmem_vault.memory._models import SemanticFact

    base = datetime(2026, 1, 1, tzinfo=UTC)
    for n in _shuffled(60):
        fact = SemanticFact(text=f"Fact number {n}", created_at=base + timedelta(hours=n))
        store.put(("memories", "u1", "semantic"), f"k{n}", fact.to_store())
    vault = MemoryVault(store, user_id="u1")
    assert [m.value.text for m in vault.list(limit=3)] == [f"Fact number {n}" for n in (0, 1, 2)]
    page = vault.list(limit=4, offset=10)
    assert [m.value.text for m in page] == [f"Fact number {n}" for n in (10, 11, 12, 13)]
    assert len(vault.list(limit=100)) == 60


# A fact made private loses the embedding and full-text vector it had while public.
def test_fact_made_private_is_no_longer_indexed(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(TrigramEmbeddings())
    ) as store:
        store.setup()
        vault = MemoryVault(store, user_id="u1")
        key = vault.remember("User sees a cardiologist every March").key
        [hit] = store.search(("memories", "u1", "semantic"), query="cardiologist")
        assert hit.score is not None and hit.score > 0.5
        vault.update(key, private=True)
        with psycopg.connect(pg_uri) as conn:
            row = conn.execute(
                f"SELECT (SELECT count(*) FROM {schema}.store_vectors), "
                f"(SELECT count(*) FROM {schema}.store_items WHERE search_tsv IS NOT NULL)"
            ).fetchone()
        assert row == (0, 0)
        [hit] = store.search(("memories", "u1", "semantic"), query="cardiologist")
        assert hit.score is None
