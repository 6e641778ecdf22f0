"""Presidio's "Loaded recognizer" lines (one per recognizer, a screenful at every server
start) are DEBUG detail, not INFO; the rest of its logging is left as it is."""

from __future__ import annotations

import logging

import pytest

from langmem_vault.privacy._redaction.engine import build_analyzer, get_engines

PRESIDIO = "presidio-analyzer"


def _presidio(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == PRESIDIO]


def test_loading_recognizers_logs_nothing_at_info(caplog: pytest.LogCaptureFixture) -> None:
    nlp = get_engines().analyzer.nlp_engine  # loaded once: only the recognizers load here
    with caplog.at_level(logging.INFO):
        build_analyzer(nlp)
    assert _presidio(caplog) == []


def test_they_are_there_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    nlp = get_engines().analyzer.nlp_engine
    with caplog.at_level(logging.DEBUG, logger=PRESIDIO):
        build_analyzer(nlp)
    loaded = [r for r in _presidio(caplog) if r.getMessage().startswith("Loaded recognizer")]
    assert len(loaded) >= 10
    assert {r.levelno for r in loaded} == {logging.DEBUG}
    # outside our load point Presidio's logger is untouched
    assert logging.getLogger(PRESIDIO).filters == []
