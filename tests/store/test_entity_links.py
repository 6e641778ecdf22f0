"""The entity tables through the store's own ops (store/_entities.py), sync and async."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from langmem_vault.db._steps import run_steps
from langmem_vault.db._store_plans import Batch
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._entities import (
    EntityLink,
    ExpandOp,
    LinkOp,
    RelationLink,
)
from langmem_vault.store._validation import InvalidValueError
from tests.store.conftest import Driver

NS = ("memories", "u1", "semantic")
PRIYA = EntityLink("Priya", "person", ("my sister",))
DUNE = EntityLink("Dune", "thing")


def _rows(pg_uri: str, schema: str, table: str) -> int:
    with psycopg.connect(pg_uri) as conn:
        return conn.execute(f"SELECT count(*) FROM {schema}.{table}").fetchone()[0]  # type: ignore[index]


def _fact(
    key: str, text: str, *links: EntityLink, relations: tuple[RelationLink, ...] = ()
) -> list[Any]:
    return [PutOp(NS, key, {"text": text}), LinkOp(NS, key, links, relations)]


@pytest.fixture(params=["vault", "avault"])
async def vault(
    request: pytest.FixtureRequest, pg_uri: str, schema: str, embeddings: Any
) -> AsyncIterator[Driver]:
    """VaultStore and AsyncVaultStore (other stores answer the ops without tables: below)."""
    index = {"dims": embeddings.dims, "embed": embeddings, "fields": ["text"]}
    if request.param == "vault":
        with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:  # type: ignore[arg-type]
            store.setup()
            yield Driver(store, is_async=False, kind="vault")
        return
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index) as astore:  # type: ignore[arg-type]
        await astore.setup()
        yield Driver(astore, is_async=True, kind="avault")


async def test_alias_finds_every_fact_of_the_entity(vault: Driver) -> None:
    await vault.batch(_fact("f1", "My sister is Priya.", PRIYA))
    await vault.batch(
        _fact(
            "f2",
            "Priya recommended Dune.",
            EntityLink("Priya", "person"),
            DUNE,
            relations=(RelationLink("Priya", "recommended", "Dune"),),
        )
    )
    await vault.batch(_fact("f3", "Dune is a novel by Frank Herbert.", DUNE))
    await vault.batch(_fact("f4", "I play chess.", EntityLink("chess")))
    (hits,) = await vault.batch([ExpandOp((NS,), ("what", "my sister", "recommend"))])
    by_key = {h.item.key: h.hop for h in hits}
    assert by_key == {"f1": 0, "f2": 0, "f3": 1}
    assert hits[0].item.value["text"] in ("My sister is Priya.", "Priya recommended Dune.")
    assert "Priya" in hits[0].entities
    (none,) = await vault.batch([ExpandOp((NS,), ("my sister",), hops=0)])
    assert {h.item.key for h in none} == {"f1", "f2"}


async def test_near_name_by_embedding(vault: Driver) -> None:
    await vault.batch(
        _fact("f1", "Bartholomew fixed the roof.", EntityLink("Bartholomew", "person"))
    )
    (hits,) = await vault.batch([ExpandOp((NS,), (), query="Bartholomeww", near=0.6)])
    assert [h.item.key for h in hits] == ["f1"]
    (far,) = await vault.batch([ExpandOp((NS,), (), query="quarterly tax filing", near=0.6)])
    assert far == []


async def test_rewrite_replaces_and_delete_removes(vault: Driver, pg_uri: str) -> None:
    schema = vault.store.schema
    await vault.batch(_fact("f1", "My sister is Priya.", PRIYA))
    await vault.batch(_fact("f2", "Tom is my boss.", EntityLink("Tom", "person", ("my boss",))))
    assert _rows(pg_uri, schema, "entities") == 2
    await vault.batch([LinkOp(NS, "f1")])  # a clearing op: no mention, so Priya goes
    assert _rows(pg_uri, schema, "entities") == 1
    assert _rows(pg_uri, schema, "entity_aliases") == 1
    (hits,) = await vault.batch([ExpandOp((NS,), ("my sister",))])
    assert hits == []
    await vault.batch([PutOp(NS, "f2", None), LinkOp(NS, "f2")])
    for table in ("entities", "entity_aliases", "entity_mentions", "entity_vectors"):
        assert _rows(pg_uri, schema, table) == 0, table


async def test_a_failing_batch_leaves_no_entity_rows(vault: Driver, pg_uri: str) -> None:
    # refused before any I/O: a relation naming an entity the op does not carry
    with pytest.raises(InvalidValueError, match="relation"):
        await vault.batch(
            _fact("f1", "Priya.", PRIYA, relations=(RelationLink("Priya", "likes", "Tom"),))
        )
    # fails inside the transaction, after the put and the first links were written: links
    # for an item that does not exist break the mentions' foreign key
    ghost = LinkOp(NS, "ghost", (EntityLink("Tom", "person", ("my boss",)),))
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        await vault.batch([*_fact("f1", "My sister is Priya.", PRIYA), ghost])
    for table in ("store_items", "entities", "entity_aliases", "entity_mentions", "entity_vectors"):
        assert _rows(pg_uri, vault.store.schema, table) == 0, table


async def test_purge_takes_the_users_entities(vault: Driver, pg_uri: str) -> None:
    other = ("memories", "u2", "semantic")
    await vault.batch(_fact("f1", "My sister is Priya.", PRIYA))
    await vault.batch(
        [PutOp(other, "g1", {"text": "Sam"}), LinkOp(other, "g1", (EntityLink("Sam"),))]
    )
    purged = vault.store.purge_prefixes([("memories", "u1")])
    if vault.is_async:
        await purged
    with psycopg.connect(pg_uri) as conn:
        scopes = conn.execute(f"SELECT scope FROM {vault.store.schema}.entities").fetchall()
    assert scopes == [("memories.u2.semantic",)]


def test_other_stores_answer_without_the_tables() -> None:
    store = InMemoryStore()
    ops = [
        PutOp(NS, "f1", {"text": "Priya"}),
        LinkOp(NS, "f1", (PRIYA,)),
        ExpandOp((NS,), ("priya",)),
    ]
    assert run_steps(_plan(ops), store)[1:] == [None, []]
    assert store.get(NS, "f1") is not None


def _plan(ops: list[Any]) -> Any:
    results = yield Batch(ops)
    return results


def test_bad_links_are_refused_naming_the_field() -> None:
    from langmem_vault.store._entities import check_expand, check_link

    with pytest.raises(InvalidValueError, match="kind"):
        check_link(LinkOp(NS, "k", (EntityLink("Priya", "alien"),)))
    with pytest.raises(InvalidValueError, match="hops"):
        check_expand(ExpandOp((NS,), ("a",), hops=9))
