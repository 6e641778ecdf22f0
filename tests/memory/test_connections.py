"""Connections end to end on Postgres, sync and async: the facts a vault remembers name their
entities, expansion finds them by alias, and every lifecycle path (supersede, forget, erase,
export/import, key rotation, privacy) keeps the entity index right."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from langmem_vault.extraction._reconcile import aapply_extraction, apply_extraction
from langmem_vault.memory._entities import Entity
from langmem_vault.memory._models import Extraction, ProposedFact
from langmem_vault.memory._recall.expansion import aexpand, expand
from langmem_vault.memory._sealing import Keyring, decrypt_fact
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline import find_entities
from langmem_vault.privacy._rotation import arotate_keys, rotate_keys
from langmem_vault.privacy._subject_rights.erase import aerase_user, erase_user
from langmem_vault.privacy._subject_rights.portability import (
    aexport_user,
    aimport_user,
    export_user,
    import_user,
)
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.store.conftest import Driver
from tests.support.embeddings import TrigramEmbeddings

QUESTION = "what did my sister recommend?"


class Env:
    """One user's vault on VaultStore or AsyncVaultStore; ``await env.call(obj, "name")``
    runs ``obj.name`` or ``obj.aname``."""

    def __init__(self, store: Any, is_async: bool, pg_uri: str) -> None:
        self.store = store
        self.is_async = is_async
        self.pg_uri = pg_uri
        self.vault = MemoryVault(store, user_id="alice", entity_finder=find_entities)

    async def call(self, obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        return await Driver(obj, is_async=self.is_async, kind="").__getattr__(name)(*args, **kwargs)

    async def run(self, sync: Any, asyn: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyn(*args, **kwargs) if self.is_async else sync(*args, **kwargs)

    async def expand(self, query: str = QUESTION, **kwargs: Any) -> dict[str, int]:
        hits = await self.run(
            expand, aexpand, self.store, [self.vault.ns.semantic], query, **kwargs
        )
        return {h.item.value["text"]: h.hop for h in hits}

    def rows(self, table: str) -> int:
        with psycopg.connect(self.pg_uri) as conn:
            row = conn.execute(f"SELECT count(*) FROM {self.store.schema}.{table}").fetchone()
        return int(row[0]) if row else 0


@pytest.fixture(params=["sync", "async"])
async def env(request: pytest.FixtureRequest, pg_uri: str, schema: str) -> AsyncIterator[Env]:
    embeddings = TrigramEmbeddings()
    index = {"dims": embeddings.dims, "embed": embeddings, "fields": ["text"]}
    if request.param == "sync":
        with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:  # type: ignore[arg-type]
            store.setup()
            yield Env(store, False, pg_uri)
        return
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index) as astore:  # type: ignore[arg-type]
        await astore.setup()
        yield Env(astore, True, pg_uri)


async def _sister_and_dune(env: Env) -> tuple[str, str]:
    sister = await env.call(env.vault, "remember", "My sister is Priya.")
    dune = await env.call(env.vault, "remember", "Priya recommended Dune.")
    return sister.key, dune.key


async def test_my_sister_finds_the_fact_that_names_her_only_as_priya(env: Env) -> None:
    await _sister_and_dune(env)
    await env.call(env.vault, "remember", "Dune is a novel by Frank Herbert.")
    await env.call(env.vault, "remember", "I play chess on Sundays.")
    found = await env.expand()
    assert found["Priya recommended Dune."] == 0  # through the alias "my sister"
    assert found["My sister is Priya."] == 0
    assert found["Dune is a novel by Frank Herbert."] == 1  # a relation away
    assert "I play chess on Sundays." not in found
    # the question shares no word with the fact: a plain search of it does not find it first
    assert await env.expand("what did my brother recommend?") == {}


async def test_extraction_links_in_its_one_write(env: Env) -> None:
    """A model's (or the offline extractor's) entities reach the index through reconcile."""
    priya = Entity(name="Priya", kind="person", aliases=["my sister"])
    facts = [
        ProposedFact(text="User's sister is Priya", confidence=0.9, entities=[priya]),
        ProposedFact(
            text="Priya recommended Dune",
            confidence=0.9,
            entities=[Entity(name="Priya", kind="person"), Entity(name="Dune")],
        ),
    ]
    config = {"configurable": {"user_id": "alice"}}
    await env.run(
        apply_extraction, aapply_extraction, env.store, Extraction(facts=facts), config=config
    )
    assert await env.expand() == {"User's sister is Priya": 0, "Priya recommended Dune": 0}


async def test_supersede_and_forget_remove_the_mentions(env: Env) -> None:
    sister, dune = await _sister_and_dune(env)
    await env.call(env.vault, "forget", dune)  # closed (kept for history), not linked
    assert await env.expand() == {"My sister is Priya.": 0}
    assert (await env.call(env.vault, "get", dune)).value.entities  # the value keeps them
    await env.call(env.vault, "forget", sister, hard=True)
    assert await env.expand() == {}
    for table in ("entities", "entity_aliases", "entity_mentions", "entity_vectors"):
        assert env.rows(table) == 0, table


async def test_an_edit_relinks_what_the_new_text_names(env: Env) -> None:
    _, dune = await _sister_and_dune(env)
    await env.call(env.vault, "update", dune, text="Tom recommended Dune.")
    assert await env.expand() == {"My sister is Priya.": 0}
    assert await env.expand("did Tom recommend it?") == {"Tom recommended Dune.": 0}
    await env.call(env.vault, "update", dune, text="It was a good book.")  # names nobody
    assert await env.expand("did Tom recommend it?") == {}


async def test_a_private_facts_entities_are_never_indexed(env: Env) -> None:
    ring = Keyring.generate()
    vault = MemoryVault(env.store, user_id="alice", entity_finder=find_entities, keyring=ring)
    secret = await env.call(vault, "remember", "My therapist Dr Okafor helps me.", private=True)
    assert env.rows("entities") == 0 and env.rows("entity_mentions") == 0
    stored = await env.call(env.store, "get", vault.ns.semantic, secret.key)
    assert "Okafor" not in json.dumps(stored.value)  # sealed with the text
    opened = decrypt_fact(stored.value, ring, vault.ns.semantic, secret.key)
    assert [e["name"] for e in opened["entities"]] == ["Dr Okafor"]
    # a fact turned private loses its links
    public = await env.call(vault, "remember", "Priya recommended Dune.")
    assert env.rows("entity_mentions") == 2
    await env.call(vault, "update", public.key, private=True)
    assert env.rows("entity_mentions") == 0 and await env.expand("Priya") == {}


async def test_key_rotation_reseals_the_entities(env: Env) -> None:
    old, new = Keyring.generate(), Keyring.generate()
    vault = MemoryVault(env.store, user_id="alice", entity_finder=find_entities, keyring=old)
    secret = await env.call(vault, "remember", "My therapist Dr Okafor helps me.", private=True)
    both = Keyring({**old.keys, **new.keys}, current=new.current)
    await env.run(rotate_keys, arotate_keys, env.store, both)
    stored = await env.call(env.store, "get", vault.ns.semantic, secret.key)
    assert stored.value["enc_kid"] == new.current
    opened = decrypt_fact(stored.value, new, vault.ns.semantic, secret.key)
    assert [e["name"] for e in opened["entities"]] == ["Dr Okafor"]


async def test_erase_export_and_import_carry_the_entities(env: Env) -> None:
    await _sister_and_dune(env)
    bob = MemoryVault(env.store, user_id="bob", entity_finder=find_entities)
    await env.call(bob, "remember", "My boss Tom works at Acme.")
    doc = await env.run(export_user, aexport_user, env.store, "alice")
    assert {e["name"] for m in doc["memories"] for e in m["value"]["entities"]} == {"Priya", "Dune"}
    await env.run(erase_user, aerase_user, env.store, "alice")
    assert await env.expand() == {}
    assert env.rows("entities") == 2  # bob's Tom and Acme
    with psycopg.connect(env.pg_uri) as conn:
        assert conn.execute(
            f"SELECT count(*) FROM {env.store.schema}.entities WHERE scope LIKE 'memories.alice%%'"
        ).fetchone() == (0,)
    await env.run(import_user, aimport_user, env.store, doc)
    assert await env.expand() == {"My sister is Priya.": 0, "Priya recommended Dune.": 0}


async def test_a_relation_holds_when_its_fact_does(env: Env) -> None:
    # (Priya, recommended, Dune) states no time: it inherits the fact's 2021 validity
    await env.call(env.vault, "remember", "My sister is Priya.")
    await env.call(
        env.vault,
        "remember",
        "Priya recommended Dune.",
        valid_from=datetime(2021, 1, 1, tzinfo=UTC),
        valid_to=datetime(2022, 1, 1, tzinfo=UTC),
    )
    await env.call(env.vault, "remember", "Dune is a novel by Frank Herbert.")
    then = await env.expand(as_of=datetime(2021, 6, 1, tzinfo=UTC))
    assert then["Dune is a novel by Frank Herbert."] == 1  # through the relation, valid then
    later = await env.expand(as_of=datetime(2023, 6, 1, tzinfo=UTC))
    assert "Dune is a novel by Frank Herbert." not in later


async def test_an_episode_names_its_entities_and_expansion_finds_it(env: Env) -> None:
    hike = await env.call(env.vault, "add_episode", "Hiked in the Alps with Priya all weekend")
    assert "Priya" in [e.name for e in hike.value.entities]  # the vault's finder named her
    await env.call(env.vault, "add_episode", "Fixed the kitchen sink")
    hits = await env.run(
        expand, aexpand, env.store, [env.vault.ns.episodes], "what did I do with priya?"
    )
    assert [h.item.key for h in hits] == [hike.key]  # linked by the episode's own write
