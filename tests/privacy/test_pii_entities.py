"""Each entity type is found and replaced by its typed placeholder (real Presidio + spaCy)."""

from __future__ import annotations

import pytest

from langmem_vault.privacy import RedactionPolicy, redact
from langmem_vault.privacy._redaction.policy import Action, Entity

ALL_REDACT = RedactionPolicy.redact_all()

# (text, the sensitive value, its type)
CASES = [
    ("My email is jane.doe@example.com", "jane.doe@example.com", Entity.EMAIL),
    ("Call me on (415) 555-0132 tonight", "(415) 555-0132", Entity.PHONE),
    ("My phone is +44 20 7946 0958", "+44 20 7946 0958", Entity.PHONE),
    ("Charge it to 4111 1111 1111 1111 please", "4111 1111 1111 1111", Entity.CREDIT_CARD),
    ("Amex 3782 822463 10005 is my work card", "3782 822463 10005", Entity.CREDIT_CARD),
    ("My SSN is 123-45-6789", "123-45-6789", Entity.US_SSN),
    ("social security number 219 09 9999", "219 09 9999", Entity.US_SSN),
    ("Salary goes to DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 00", Entity.IBAN),
    ("My home server is at 192.168.1.20", "192.168.1.20", Entity.IP_ADDRESS),
    ("VPN gave me 2001:db8:85a3::8a2e:370:7334", "2001:db8:85a3::8a2e:370:7334", Entity.IP_ADDRESS),
    ("I live in Lisbon", "Lisbon", Entity.LOCATION),
    ("I was born on March 3, 1985", "March 3, 1985", Entity.DATE_OF_BIRTH),
    ("DOB: 1990-07-22", "1990-07-22", Entity.DATE_OF_BIRTH),
    (
        "Ship it to 742 Evergreen Terrace, Springfield, IL 62704",
        "742 Evergreen Terrace, Springfield, IL 62704",
        Entity.STREET_ADDRESS,
    ),
    ("We moved into 221B Baker Street, Apt 4", "221B Baker Street, Apt 4", Entity.STREET_ADDRESS),
    ("My account number is 000123456789", "000123456789", Entity.ACCOUNT_NUMBER),
    ("Policy number P-4477120 covers the car", "P-4477120", Entity.ACCOUNT_NUMBER),
    ("my password is hunter2", "hunter2", Entity.SECRET),
    ("DB_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor&3", Entity.SECRET),
    ("My OpenAI key is sk-proj-Ab3dEf6hIj9kLmN0pQr5tUvWxYz12", None, Entity.SECRET),
    ("token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", None, Entity.SECRET),
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNH",
        None,
        Entity.SECRET,
    ),
    ("AWS key AKIAIOSFODNN7EXAMPLE in the env", "AKIAIOSFODNN7EXAMPLE", Entity.SECRET),
    ("I had lunch with Priya Patel yesterday", "Priya Patel", Entity.PERSON),
    ("My sister Anna Weber is visiting", "Anna Weber", Entity.PERSON),
    ("I've known Sven since college", "Sven", Entity.PERSON),
    ("My colleague José Müller left", "José Müller", Entity.PERSON),
]


@pytest.mark.parametrize(("text", "value", "entity"), CASES, ids=[c[0][:40] for c in CASES])
def test_entity_is_redacted_with_typed_placeholder(
    text: str, value: str | None, entity: Entity
) -> None:
    result = redact(text, policy=ALL_REDACT)
    assert entity in result.types, result
    assert entity.placeholder in result.text
    if value is not None:
        assert value not in result.text
        hit = next(e for e in result.entities if e.type is entity)
        assert text[hit.start : hit.end] == value
    else:
        token = text.split()[-1]
        assert token not in result.text
    assert all(e.action is Action.REDACT for e in result.entities)
    assert 0.0 < min(e.score for e in result.entities) <= 1.0


def test_several_entities_in_one_text_keep_spans_of_the_original() -> None:
    text = "Email bo@example.org or call 212-555-0199; card 5555 5555 5555 4444."
    result = redact(text, policy=ALL_REDACT)
    assert result.text == "Email <EMAIL> or call <PHONE>; card <CREDIT_CARD>."
    assert [text[e.start : e.end] for e in result.entities] == [
        "bo@example.org",
        "212-555-0199",
        "5555 5555 5555 4444",
    ]
    assert [e.start for e in result.entities] == sorted(e.start for e in result.entities)


def test_invalid_checksums_are_not_flagged() -> None:
    # A 16-digit number failing Luhn and an IBAN with wrong check digits are not PII hits.
    result = redact(
        "order 4111 1111 1111 1112 and ref DE00 3704 0044 0532 0130 00", policy=ALL_REDACT
    )
    assert Entity.CREDIT_CARD not in result.types
    assert Entity.IBAN not in result.types


def test_address_inside_wins_over_location_inside_it() -> None:
    text = "I live at 12 Abbey Road, London NW8 9AY"
    result = redact(text, policy=ALL_REDACT)
    assert result.text == "I live at <STREET_ADDRESS>"
    assert [e.type for e in result.entities] == [Entity.STREET_ADDRESS]
