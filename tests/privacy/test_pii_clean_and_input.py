"""Ordinary sentences come through unchanged; bad input fails clearly; docstring examples run."""

from __future__ import annotations

import doctest
import importlib

import pytest

from langmem_vault.privacy import RedactionPolicy, redact

ALL_REDACT = RedactionPolicy.redact_all()

# Presidio's default configuration alters most of these (months as DATE_TIME, "Python" as a
# person, nationalities as NRP, cities as LOCATION).
CLEAN = [
    "I prefer Python for data analysis",
    "we ship the beta in March",
    "The standup moved to Tuesday at 10",
    "Our team switched from Scala to Kotlin last quarter",
    "I speak Spanish and a bit of German",
    "The conference is in Berlin this September",
    "I'd love to visit Kyoto someday",
    "I work at Google on the data platform team",
    "Use Rust type hints everywhere please",
    "Version 3.12.1 fixed the memory leak",
    "I paid $1,250 for the course in 2024",
    "I run 5 miles down the road before work",
    "The password reset flow is broken on mobile",
    "The token is expired so I logged in again",
    "My account was upgraded to the premium plan",
    "I was born to code, honestly",
    "I enjoy Thai food on Friday nights",
    "Commit 3f9a0c1b2d4e5f60718293a4b5c6d7e8f9a0b1c2 fixed it",
    "I had lunch with Marketing today",
    "Send the report to Finance by Friday",
    "My password is stored in 1Password",
    "The api key is rotated weekly",
    "Our secret: ship small",
    "We use UUIDs like 123e4567-e89b-12d3-a456-426614174000",
    "We deployed build 20240311 to prod",
]


@pytest.mark.parametrize("text", CLEAN)
def test_clean_sentence_is_unchanged_even_when_redacting_everything(text: str) -> None:
    result = redact(text, policy=ALL_REDACT)
    assert result.text == text, result.entities
    assert result.entities == ()
    assert not result.private


@pytest.mark.parametrize("text", CLEAN[:6])
def test_clean_sentence_is_not_marked_private_by_default(text: str) -> None:
    result = redact(text)
    assert not result.changed
    assert not result.private


@pytest.mark.parametrize("bad", [None, 42, b"my password is hunter2", ["text"]])
def test_non_str_raises_type_error_naming_text(bad: object) -> None:
    with pytest.raises(TypeError, match="text: expected str"):
        redact(bad)  # type: ignore[arg-type]


def test_nul_character_is_refused() -> None:
    with pytest.raises(ValueError, match="text: contains a NUL"):
        redact("my password is hunter2\x00")


def test_text_over_the_limit_is_refused_with_the_limit_named() -> None:
    policy = RedactionPolicy(max_chars=1_000)
    redact("a" * 1_000, policy=policy)  # at the limit: fine
    with pytest.raises(ValueError, match=r"1001 characters exceeds the limit of 1000"):
        redact("a" * 1_001, policy=policy)


def test_default_limit_accepts_a_long_memory_and_finds_pii_at_its_end() -> None:
    text = "I like long walks. " * 2_000 + "My email is late@example.com"
    result = redact(text, policy=ALL_REDACT)
    assert result.text.endswith("My email is <EMAIL>")
    assert len(result.entities) == 1


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_and_blank_text_pass_through(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.entities == ()


def test_non_ascii_text_keeps_offsets_right() -> None:
    text = "Café ☕ — mail zoë@example.com — merci"
    result = redact(text, policy=ALL_REDACT)
    [hit] = result.entities
    assert text[hit.start : hit.end] == "zoë@example.com"
    assert result.text == "Café ☕ — mail <EMAIL> — merci"


@pytest.mark.parametrize(
    "module",
    [
        "langmem_vault.privacy",
        "langmem_vault.privacy._redaction.pii",
        "langmem_vault.privacy._redaction.policy",
        "langmem_vault.privacy._redaction.engine",
        "langmem_vault.privacy._redaction.recognizers",
        "langmem_vault.privacy._redaction.names",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    failures, _ = doctest.testmod(importlib.import_module(module), verbose=False)
    assert failures == 0


def test_dropped_model_labels_log_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    # ORG and FAC are found by the model and dropped on purpose; Presidio used to log a
    # warning for each such entity on every call.
    text = "I work at Google in the Empire State Building with Ann."
    with caplog.at_level("WARNING", logger="presidio-analyzer"):
        result = redact(text, policy=ALL_REDACT)
    assert [e.type.value for e in result.entities] == ["PERSON"]
    assert [r.getMessage() for r in caplog.records if r.name == "presidio-analyzer"] == []
