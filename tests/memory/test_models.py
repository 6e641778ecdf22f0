"""The memory models, namespace templates and the condition syntax."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from langmem_vault.memory import (
    Episode,
    Extraction,
    Instruction,
    MemoryNamespaces,
    MissingConfigKeyError,
    SemanticFact,
)
from langmem_vault.memory._conditions import parse_condition
from langmem_vault.memory._models import ProposedFact
from langmem_vault.memory._namespaces import decode_label, resolve_namespace

MONDAY = datetime(2026, 11, 23, 9, 30, tzinfo=UTC)


def test_namespace_filled_from_configurable() -> None:
    ns = MemoryNamespaces().resolve({"configurable": {"user_id": "ann"}})
    assert ns.semantic == ("memories", "ann", "semantic")
    assert ns.episodes == ("memories", "ann", "episodes")
    assert ns.instructions == ("memories", "ann", "instructions")


def test_missing_key_is_named() -> None:
    with pytest.raises(MissingConfigKeyError, match="user_id"):
        resolve_namespace(("memories", "{user_id}", "semantic"), {"configurable": {}})
    with pytest.raises(KeyError, match="org"):
        resolve_namespace(("{org}", "{user_id}"), {"configurable": {"user_id": "a"}})


@pytest.mark.parametrize("user", ["a.b", "ana.g@example.com", "100%", "%2E", "..", "a%2Eb"])
def test_dotted_ids_are_encoded_reversibly(user: str) -> None:
    # Store labels may not contain '.', so the id is encoded; distinct ids stay distinct.
    (_, label) = resolve_namespace(("memories", "{user_id}"), {"configurable": {"user_id": user}})
    assert "." not in label
    assert decode_label(label) == user


def test_encoded_labels_do_not_collide() -> None:
    ids = ["a.b", "a%2Eb", "a%252Eb", "a%b", "a%25b"]
    labels = {resolve_namespace(("{user_id}",), {"configurable": {"user_id": u}}) for u in ids}
    assert len(labels) == len(ids)


def test_custom_templates_list_their_keys() -> None:
    ns = MemoryNamespaces(semantic=("org", "{org_id}", "{user_id}", "facts"))
    assert ns.config_keys() == {"org_id", "user_id"}


def test_fact_round_trip_and_cleaning() -> None:
    fact = SemanticFact(text="  Likes   tea ", tags=["Drinks", "drinks", " "], confidence=0.9)
    again = SemanticFact.from_store(fact.to_store())
    assert again.text == "Likes tea"
    assert again.tags == ["drinks"]
    assert again.created_at == fact.created_at
    assert again.created_at.tzinfo is not None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("confidence", 1.5),
        ("confidence", -0.1),
        ("category", "hobby"),
        ("status", "deleted"),
        ("text", "   "),
        ("text", "x" * 2001),
        ("utility", 2),
        ("tags", ["t"] * 21),
        ("source", "model"),
    ],
)
def test_fact_validation_names_field(field: str, value: object) -> None:
    data = {"text": "ok", field: value}
    with pytest.raises(ValidationError) as err:
        SemanticFact.model_validate(data)
    assert field in str(err.value)


def test_validity_interval_checked() -> None:
    now = datetime.now(UTC)
    with pytest.raises(ValidationError, match="valid_to"):
        SemanticFact(text="x", valid_from=now, valid_to=now - timedelta(days=1))


def test_episode_and_instruction_ranges() -> None:
    with pytest.raises(ValidationError, match="importance"):
        Episode(summary="s", importance=3)
    with pytest.raises(ValidationError, match="priority"):
        Instruction(text="x", priority=11)
    with pytest.raises(ValidationError, match="priority"):
        Instruction(text="x", priority=0)


def test_instruction_condition_validated_on_write() -> None:
    with pytest.raises(ValidationError, match="not understood"):
        Instruction(text="x", condition="if the user is sad")
    with pytest.raises(ValidationError, match="weekday"):
        Instruction(text="x", condition="weekday is Funday")
    with pytest.raises(ValidationError, match="time of day"):
        Instruction(text="x", condition="time after 25:00")


def test_instruction_applies() -> None:
    travel = Instruction(text="Mention visas", condition="topic contains travel")
    assert travel.applies("any travel tips?", MONDAY)
    assert not travel.applies("what's for dinner?", MONDAY)
    assert not travel.applies(None, MONDAY)
    monday = Instruction(text="Weekly plan", condition="weekday is monday and time before 12:00")
    assert monday.applies("hi", MONDAY)
    assert not monday.applies("hi", MONDAY + timedelta(hours=3))
    assert not monday.applies("hi", MONDAY + timedelta(days=1))
    expired = Instruction(text="x", expires_at=MONDAY - timedelta(seconds=1))
    assert not expired.applies("hi", MONDAY)
    assert not Instruction(text="x", active=False).applies("hi", MONDAY)


def test_condition_words_match_whole_words() -> None:
    cond = parse_condition("message contains art")
    assert cond.holds("I love art", MONDAY)
    assert cond.holds("modern arts", MONDAY)
    assert not cond.holds("let's party", MONDAY)
    assert parse_condition("weekday is not monday").holds("x", MONDAY + timedelta(days=1))
    assert parse_condition(None).holds(None, MONDAY)


def test_extraction_schema() -> None:
    ext = Extraction.model_validate(
        {"facts": [{"text": "Likes tea", "category": "preference", "same_as": "k1"}]}
    )
    assert ext.facts[0].same_as == "k1"
    assert ext.episode is None
    with pytest.raises(ValidationError, match="confidence"):
        ProposedFact(text="x", confidence=7)
    with pytest.raises(ValidationError, match="condition"):
        Extraction.model_validate({"instructions": [{"text": "x", "condition": "nonsense"}]})
