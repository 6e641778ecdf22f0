"""``redact(text)``: find PII with Presidio and apply the policy's action to each hit.

Presidio and spaCy are imported on first use, not here: presidio_analyzer alone takes seconds
to import (it probes for transformers), and every module of the package imports this one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, Action, Entity, RedactionPolicy

# Used for Action.HASH when the policy has no key: pseudonyms link within this process only.
_PROCESS_HASH_KEY = os.urandom(32)
# spaCy's tokenizer keeps a mutable cache, and its docs promise no thread safety for one
# pipeline shared by threads; analysis is CPU-bound under the GIL anyway, so one lock costs
# nothing measurable and makes concurrent callers safe.
_analyze_lock = threading.Lock()

if TYPE_CHECKING:
    from presidio_analyzer import RecognizerResult
    from presidio_anonymizer.entities import OperatorConfig

    from langmem_vault.privacy._redaction.engine import Engines


def _engines() -> Engines:
    from langmem_vault.privacy._redaction.engine import get_engines

    return get_engines()


def preload() -> None:
    """Load the engines now (seconds) instead of on the first ``redact`` call.

    Example:
        >>> preload()
        >>> from langmem_vault.privacy._redaction.engine import engines_loaded
        >>> engines_loaded()
        True
    """
    _engines()


@dataclass(frozen=True)
class DetectedEntity:
    """One PII hit: its type, its span in the *original* text, the score and the action taken.

    Example:
        >>> text = "mail me a@example.com"
        >>> e = DetectedEntity(Entity.EMAIL, 8, 21, 1.0, Action.REDACT)
        >>> text[e.start : e.end]
        'a@example.com'
    """

    type: Entity
    start: int
    end: int
    score: float
    action: Action


@dataclass(frozen=True)
class RedactionResult:
    """The redacted text, what was found, and whether a keep-private entity was kept.

    Example:
        >>> r = RedactionResult("hi <EMAIL>", (), False, "hi bo@example.com")
        >>> r.changed
        True
    """

    text: str
    entities: tuple[DetectedEntity, ...]
    private: bool
    original: str

    @property
    def changed(self) -> bool:
        """True when the returned text differs from the input."""
        return self.text != self.original

    @property
    def types(self) -> frozenset[Entity]:
        """The entity types found."""
        return frozenset(e.type for e in self.entities)


def _check_text(text: object, policy: RedactionPolicy) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text: expected str, got {type(text).__name__}")
    if "\x00" in text:
        # Postgres text columns reject NUL, and a NUL can hide a value from downstream tools
        # that treat it as a terminator; refusing is clearer than silently dropping it.
        raise ValueError("text: contains a NUL character (\\x00); strip it before redacting")
    if len(text) > policy.max_chars:
        raise ValueError(
            f"text: {len(text)} characters exceeds the limit of {policy.max_chars} "
            "(RedactionPolicy.max_chars); split it or raise the limit"
        )
    return text


def _merge_overlaps(hits: Iterable[DetectedEntity]) -> list[DetectedEntity]:
    """Non-overlapping hits: same-type overlaps are unioned, then the longest span wins.

    Longest-first keeps "221B Baker Street, London" an address rather than a LOCATION inside
    one, and a 16-digit card rather than the phone number the phone parser saw in its digits.
    """
    by_type: dict[Entity, list[DetectedEntity]] = {}
    for h in sorted(hits, key=lambda h: (h.type.value, h.start)):
        group = by_type.setdefault(h.type, [])
        if group and h.start < group[-1].end:
            last = group[-1]
            group[-1] = replace(last, end=max(last.end, h.end), score=max(last.score, h.score))
        else:
            group.append(h)
    candidates = [h for group in by_type.values() for h in group]
    candidates.sort(key=lambda h: (-(h.end - h.start), -h.score, h.start))
    kept: list[DetectedEntity] = []
    for h in candidates:
        if all(h.end <= k.start or h.start >= k.end for k in kept):
            kept.append(h)
    return sorted(kept, key=lambda h: h.start)


def _masker(policy: RedactionPolicy) -> Callable[[str], str]:
    def mask(value: str) -> str:
        alnum = sum(c.isalnum() for c in value)
        keep = policy.mask_keep_last if alnum >= 2 * policy.mask_keep_last else 0
        out, seen = [], 0
        for c in value:
            if c.isalnum():
                seen += 1
                out.append(c if seen > alnum - keep else policy.mask_char)
            else:
                out.append(c)
        return "".join(out)

    return mask


def _hasher(policy: RedactionPolicy, entity: Entity) -> Callable[[str], str]:
    key = policy.hash_key or _PROCESS_HASH_KEY

    def pseudonym(value: str) -> str:
        digest = hmac.new(key, value.strip().casefold().encode(), hashlib.sha256).hexdigest()
        return f"<{entity.value}#{digest[:12]}>"

    return pseudonym


def _operator(policy: RedactionPolicy, entity: Entity) -> OperatorConfig:
    from presidio_anonymizer.entities import OperatorConfig

    action = policy.actions[entity]
    if action is Action.REDACT:
        return OperatorConfig("replace", {"new_value": entity.placeholder})
    if action is Action.MASK:
        return OperatorConfig("custom", {"lambda": _masker(policy)})
    if action is Action.HASH:
        return OperatorConfig("custom", {"lambda": _hasher(policy, entity)})
    return OperatorConfig("keep")


# Recognizers that cannot match a text with fewer digits than this are not run on it at all
# (the analyzer is asked only for the entities the text can hold): each needs that many digits
# by its own pattern or validator, so nothing is lost.
_MIN_DIGITS = {
    Entity.PHONE: 7,
    Entity.CREDIT_CARD: 12,
    Entity.US_SSN: 9,
    Entity.IBAN: 2,
    Entity.ACCOUNT_NUMBER: 5,
    Entity.DATE_OF_BIRTH: 1,
}


def _entities_for(text: str, policy: RedactionPolicy) -> list[str]:
    """The policy's entity types that ``text`` can hold, judged by its digits (and, for IP
    addresses, digits or a colon: an IPv6 address may be all hex letters)."""
    digits = sum(c.isdigit() for c in text)
    wanted = []
    for entity in policy.actions:
        if digits < _MIN_DIGITS.get(entity, 0):
            continue
        if entity is Entity.IP_ADDRESS and not digits and ":" not in text:
            continue
        wanted.append(entity.value)
    return wanted


def detect_many(
    texts: Sequence[str], *, policy: RedactionPolicy | None = None
) -> list[list[DetectedEntity]]:
    """:func:`detect` for several texts, the NER model run once over those that need it.

    All texts are validated before any is analysed.

    Example:
        >>> [len(hits) for hits in detect_many(["mail jo@example.com", "hello", ""])]
        [1, 0, 0]
    """
    policy = policy or DEFAULT_POLICY
    texts = [_check_text(text, policy) for text in texts]
    found: list[list[DetectedEntity]] = [[] for _ in texts]
    if not policy.enabled or not policy.actions:
        return found
    todo = [i for i, text in enumerate(texts) if text.strip()]
    if not todo:
        return found
    analyzer = _engines().analyzer
    with _analyze_lock:
        pairs = analyzer.nlp_engine.process_batch([texts[i] for i in todo], "en")
        for i, (_, artifacts) in zip(todo, pairs, strict=True):
            hits = analyzer.analyze(
                texts[i],
                language="en",
                entities=_entities_for(texts[i], policy),
                score_threshold=0,
                nlp_artifacts=artifacts,
            )
            found[i] = _policy_hits(texts[i], hits, policy)
    return found


def _policy_hits(
    text: str, hits: Iterable[RecognizerResult], policy: RedactionPolicy
) -> list[DetectedEntity]:
    kept = []
    for h in hits:
        entity = Entity(h.entity_type)
        if h.score < policy.threshold_for(entity):
            continue
        if text[h.start : h.end].strip().casefold() in policy.allow:
            continue
        kept.append(DetectedEntity(entity, h.start, h.end, h.score, policy.actions[entity]))
    return _merge_overlaps(kept)


def detect(text: str, *, policy: RedactionPolicy | None = None) -> list[DetectedEntity]:
    """The non-overlapping PII hits that pass the policy's thresholds and allow list.

    Validates like :func:`redact`; each hit carries the action the policy gives its type.

    Example:
        >>> [(h.type.value, h.action.value) for h in detect("mail me at jo@example.com")]
        [('EMAIL', 'redact')]
    """
    return detect_many([text], policy=policy)[0]


def redact(text: str, *, policy: RedactionPolicy | None = None) -> RedactionResult:
    """Detect PII in ``text`` and apply ``policy`` (default: :data:`DEFAULT_POLICY`).

    Raises ``TypeError`` for a non-str ``text`` and ``ValueError`` for a NUL character or a
    text longer than ``policy.max_chars``. The engines load on the first call (about ten
    seconds with imports; call :func:`preload` at startup to take that off the hot path).

    Example:
        >>> r = redact("Reach me at jane.doe@example.com, my password is hunter2")
        >>> r.text
        'Reach me at <EMAIL>, my password is <SECRET>'
        >>> sorted(e.type.value for e in r.entities)
        ['EMAIL', 'SECRET']
        >>> redact("I prefer Python for data analysis").changed
        False
        >>> redact("My sister Anna Weber lives in Lyon").private
        False
        >>> redact("My sister Anna Weber lives in Lyon", policy=RedactionPolicy.strict()).private
        True
    """
    return redact_many([text], policy=policy)[0]


def redact_many(
    texts: Sequence[str], *, policy: RedactionPolicy | None = None
) -> list[RedactionResult]:
    """:func:`redact` for several texts (an extraction's facts, evidence and summary) in one
    pass: validated first, the NER model run once over the texts that need it.

    Example:
        >>> [r.text for r in redact_many(["call 555-010-9999 now", "I like tea"])]
        ['call <PHONE> now', 'I like tea']
    """
    policy = policy or DEFAULT_POLICY
    return [
        _apply(text, tuple(hits), policy)
        for text, hits in zip(texts, detect_many(texts, policy=policy), strict=True)
    ]


def _apply(
    text: str, entities: tuple[DetectedEntity, ...], policy: RedactionPolicy
) -> RedactionResult:
    from presidio_anonymizer.entities import RecognizerResult as Span

    if not entities:
        return RedactionResult(text, (), False, text)
    operators = {t.value: _operator(policy, t) for t in {e.type for e in entities}}
    anonymized = _engines().anonymizer.anonymize(
        text=text,
        analyzer_results=[Span(e.type.value, e.start, e.end, e.score) for e in entities],
        operators=operators,
    )
    private = any(e.action is Action.PRIVATE for e in entities)
    return RedactionResult(anonymized.text, entities, private, text)
