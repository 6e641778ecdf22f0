"""Policy actions (redact, mask, hash, private), defaults, and policy validation."""

from __future__ import annotations

import re

import pytest

from langmem_vault.privacy import RedactionPolicy, redact
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, Action, Entity

KEY = b"k" * 32


def test_default_policy_redacts_identifiers_and_keeps_names_public() -> None:
    result = redact("My sister Anna Weber's email is anna.weber@example.com")
    assert "<EMAIL>" in result.text
    assert "Anna Weber" in result.text
    assert not result.private
    assert {e.type: e.action for e in result.entities} == {
        Entity.PERSON: Action.KEEP,
        Entity.EMAIL: Action.REDACT,
    }


def test_strict_policy_keeps_personal_facts_private() -> None:
    result = redact(
        "My sister Anna Weber's email is anna.weber@example.com", policy=RedactionPolicy.strict()
    )
    assert "<EMAIL>" in result.text and "Anna Weber" in result.text
    assert result.private
    assert {e.type: e.action for e in result.entities} == {
        Entity.PERSON: Action.PRIVATE,
        Entity.EMAIL: Action.REDACT,
    }


def test_private_topics_are_checked() -> None:
    with pytest.raises(ValueError, match="private_topics: unknown topic"):
        RedactionPolicy(private_topics=frozenset({"medical", "astrology"}))


def test_default_policy_covers_every_entity_type() -> None:
    assert set(DEFAULT_POLICY.actions) == set(Entity)


def test_private_action_keeps_text_and_sets_flag() -> None:
    policy = RedactionPolicy().with_actions(us_ssn="private")
    text = "My SSN is 123-45-6789"
    result = redact(text, policy=policy)
    assert result.text == text
    assert not result.changed
    assert result.private
    assert [e.action for e in result.entities] == [Action.PRIVATE]


def test_no_private_flag_when_everything_private_was_redacted() -> None:
    result = redact("my password is hunter2")
    assert result.text == "my password is <SECRET>"
    assert not result.private


def test_mask_keeps_separators_and_last_four() -> None:
    policy = RedactionPolicy().with_actions(credit_card="mask", us_ssn="mask")
    result = redact("card 4111-1111-1111-1111, SSN 123-45-6789", policy=policy)
    assert result.text == "card ****-****-****-1111, SSN ***-**-6789"


def test_mask_fully_hides_short_values_and_honours_mask_char() -> None:
    policy = RedactionPolicy(mask_char="#").with_actions(secret="mask")
    assert redact("my PIN is 4821", policy=policy).text == "my PIN is ####"


def test_hash_is_a_stable_typed_pseudonym_under_one_key() -> None:
    policy = RedactionPolicy(hash_key=KEY).with_actions(email="hash")
    a = redact("write to jo@example.com", policy=policy).text
    b = redact("cc JO@example.com on it", policy=policy).text
    pseudonym = re.search(r"<EMAIL#[0-9a-f]{12}>", a)
    assert pseudonym is not None
    assert pseudonym.group(0) in b  # case-insensitive: the same address links
    assert "jo@example.com" not in a


def test_hash_differs_by_key_and_by_value() -> None:
    one = RedactionPolicy(hash_key=KEY).with_actions(email="hash")
    two = RedactionPolicy(hash_key=b"z" * 32).with_actions(email="hash")
    text = "mail jo@example.com"
    assert redact(text, policy=one).text != redact(text, policy=two).text
    assert redact(text, policy=one).text != redact("mail al@example.com", policy=one).text


def test_without_switches_a_type_off() -> None:
    policy = RedactionPolicy.redact_all().without("phone")
    result = redact("call 212-555-0199 or mail bo@example.org", policy=policy)
    assert result.text == "call 212-555-0199 or mail <EMAIL>"


def test_allow_list_exempts_exact_strings() -> None:
    text = "I had lunch with Priya Patel yesterday"
    assert redact(text, policy=RedactionPolicy.redact_all()).changed
    policy = RedactionPolicy.redact_all(allow=frozenset({"priya patel"}))
    assert redact(text, policy=policy).text == text


def test_min_score_filters_weak_detections() -> None:
    # Phone numbers score 0.4; raising the phone threshold drops them.
    text = "call 212-555-0199"
    policy = RedactionPolicy(min_scores={"phone": 0.5})
    assert redact(text, policy=policy).text == text


def test_disabled_policy_returns_text_unchanged() -> None:
    text = "my password is hunter2"
    result = redact(text, policy=RedactionPolicy(enabled=False))
    assert result.text == text
    assert result.entities == ()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"actions": {"EMAIL": "shred"}}, "actions[EMAIL]"),
        ({"actions": {"FAX": "redact"}}, "actions"),
        ({"min_score": 1.5}, "min_score"),
        ({"min_scores": {"phone": -0.1}}, "min_scores[PHONE]"),
        ({"mask_char": "**"}, "mask_char"),
        ({"mask_keep_last": -1}, "mask_keep_last"),
        ({"max_chars": 0}, "max_chars"),
        ({"hash_key": b"short"}, "hash_key"),
    ],
)
def test_bad_policy_raises_naming_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=re.escape(field)):
        RedactionPolicy(**kwargs)  # type: ignore[arg-type]


def test_policy_helpers_return_new_policies() -> None:
    base = RedactionPolicy()
    changed = base.with_actions(person="redact")
    assert base.action_for("person") is Action.KEEP
    assert changed.action_for(Entity.PERSON) is Action.REDACT
    assert changed.threshold_for("phone") == base.min_score
    with pytest.raises(ValueError, match="entity"):
        base.action_for("nope")
