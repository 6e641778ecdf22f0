"""Offline entity finding (spaCy parse and NER, role and pet aliases) and the model path's
checks: what a fact names, before anything is stored."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from langmem_vault.extraction._aliases import AliasMap
from langmem_vault.extraction._checks import check_proposal
from langmem_vault.extraction._redaction import redact_extraction
from langmem_vault.extraction._schema import (
    AliasEntity,
    AliasFact,
    AliasRelation,
    ExtractionProposal,
)
from langmem_vault.memory._entities import Entity
from langmem_vault.memory._models import Extraction, ProposedFact
from langmem_vault.offline import OfflineExtractor, find_entities


@pytest.mark.parametrize(
    ("text", "entities", "relations"),
    [
        ("My sister is Priya.", {("Priya", "person", ("my sister",))}, set()),
        ("my sister Priya loves tennis", {("Priya", "person", ("my sister",))}, set()),
        (
            "Priya, my sister, lives in Oslo.",
            {("Priya", "person", ("my sister",)), ("Oslo", "place", ())},
            {("Priya", "lives in", "Oslo")},
        ),
        (
            "My boss Tom works at Acme.",
            {("Tom", "person", ("my boss",)), ("Acme", "organisation", ())},
            {("Tom", "works at", "Acme")},
        ),
        # the offline extractor's facts are in the third person
        ("User's sister is Priya", {("Priya", "person", ("my sister",))}, set()),
        ("My best friend is called Sam.", {("Sam", "person", ("my best friend",))}, set()),
        ("We have a cat, Mochi.", {("Mochi", "pet", ("my cat",))}, set()),
        ("User has a dog named Rex", {("Rex", "pet", ("my dog",))}, set()),
        ("I moved to Lyon last year.", {("Lyon", "place", ())}, set()),
        ("I like green tea.", set(), set()),
    ],
)
def test_find_entities(
    text: str, entities: set[tuple[str, str, tuple[str, ...]]], relations: set[tuple[str, ...]]
) -> None:
    found, related = find_entities(text)
    assert {(e.name, e.kind, tuple(e.aliases)) for e in found} == entities
    assert {(r.subject, r.predicate, r.object) for r in related} == relations


def test_the_offline_extractors_facts_carry_their_entities() -> None:
    out = OfflineExtractor().extract(
        [HumanMessage("My sister is Priya. We have a cat, Mochi.")], []
    )
    named = {f.text: [(e.name, e.aliases) for e in f.entities] for f in out.facts}
    assert named == {
        "User's sister is Priya": [("Priya", ["my sister"])],
        "User has a cat named Mochi": [("Mochi", ["my cat"])],
    }


def test_a_models_entities_are_clamped_not_fatal() -> None:
    fact = AliasFact(
        text="Priya recommended Dune",
        evidence="Priya recommended Dune",
        confidence=0.9,
        entities=[
            AliasEntity(name="Priya", kind="PERSON", aliases=["My Sister"]),
            AliasEntity(name="Dune", kind="book"),  # not a kind: a thing
            AliasEntity(name="   "),  # no name: left out
        ],
        relations=[
            AliasRelation(subject="Priya", predicate="recommended", object="Dune"),
            AliasRelation(subject="Priya", predicate="knows", object="Tom"),  # Tom is not listed
        ],
    )
    checked = check_proposal(
        ExtractionProposal(facts=[fact]), [HumanMessage("Priya recommended Dune")], AliasMap()
    )
    (proposed,) = checked.extraction.facts
    assert [(e.name, e.kind, e.aliases) for e in proposed.entities] == [
        ("Priya", "person", ["my sister"]),
        ("Dune", "thing", []),
    ]
    assert [(r.subject, r.object) for r in proposed.relations] == [("Priya", "Dune")]


def test_redaction_keeps_only_the_names_the_text_still_holds() -> None:
    fact = ProposedFact(
        text="My sister Priya Sharma recommended Dune, mail priya@example.com",
        entities=[Entity(name="priya@example.com"), Entity(name="Dune")],
    )
    (out,) = redact_extraction(Extraction(facts=[fact])).facts
    assert "priya@example.com" not in out.text
    assert [e.name for e in out.entities] == ["Dune"]
