"""Street addresses written the Portuguese, Spanish, French and German way are redacted;
ordinary sentences with the same words are left alone (issue 23)."""

from __future__ import annotations

import pytest

from langmem_vault.privacy import RedactionPolicy, redact

POLICY = RedactionPolicy.redact_all()


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("I live at Rua Augusta 301 now", "Rua Augusta 301"),
        ("send it to Calle Mayor 5, Madrid", "Calle Mayor 5"),
        ("my flat: 12 rue de Rivoli, 75001 Paris", "12 rue de Rivoli, 75001 Paris"),
        ("Hauptstraße 5 is where my parents live", "Hauptstraße 5"),
        ("we moved to Avenida da Liberdade 12, 3º Esq.", "Avenida da Liberdade 12, 3º Esq."),
        ("office is Carrer de Balmes 12", "Carrer de Balmes 12"),
        ("pick me up at Berliner Str. 12", "Berliner Str. 12"),
        ("deliveries go to 5 bd Saint-Germain", "5 bd Saint-Germain"),
    ],
)
def test_european_street_addresses_are_redacted(text: str, address: str) -> None:
    out = redact(text, policy=POLICY).text
    assert address not in out and "<STREET_ADDRESS>" in out, out


@pytest.mark.parametrize(
    "text",
    [
        "we talked via email 5 times this week",
        "set 3 place settings for dinner",
        "there are 2 route options to the airport",
        "I went to the plaza 3 times",
        "Spring 2024 was busy",
    ],
)
def test_clean_text_is_unchanged(text: str) -> None:
    assert redact(text, policy=POLICY).text == text
