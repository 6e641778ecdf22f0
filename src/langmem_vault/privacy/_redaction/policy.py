"""What counts as PII and what to do with each kind: entity types, actions, the policy.

A :class:`RedactionPolicy` maps each entity type to an :class:`Action`. Entity types absent
from the map are not looked for at all, which is also how an app switches a type off. It also
names the sensitive topics (:mod:`langmem_vault.privacy._redaction.sensitive`) that make a memory
private.

The defaults, and why: secrets and identifiers that enable fraud or account takeover (emails,
phones, cards, IBANs, keys, street addresses) are redacted. The user's name, the people they
mention and the places they live are what an assistant is for: they are detected and kept,
and do not make a memory private. Health, money, religion, politics, sexuality, ethnicity and
criminal records (the special categories of GDPR article 9, plus finances) and a date of birth
make it private: sealed at rest with a key, never indexed, still recalled for its owner.
:meth:`RedactionPolicy.strict` restores the older, stricter defaults (every name, place and
family detail private too).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType

from langmem_vault.privacy._redaction.sensitive import TOPICS


class Entity(StrEnum):
    """The PII types the redactor knows; the value is also the placeholder label.

    Example:
        >>> Entity.EMAIL.placeholder
        '<EMAIL>'
    """

    PERSON = "PERSON"
    EMAIL = "EMAIL"
    PHONE = "PHONE"
    CREDIT_CARD = "CREDIT_CARD"
    US_SSN = "US_SSN"
    IBAN = "IBAN"
    IP_ADDRESS = "IP_ADDRESS"
    LOCATION = "LOCATION"
    DATE_OF_BIRTH = "DATE_OF_BIRTH"
    STREET_ADDRESS = "STREET_ADDRESS"
    ACCOUNT_NUMBER = "ACCOUNT_NUMBER"
    SECRET = "SECRET"

    @property
    def placeholder(self) -> str:
        """The typed placeholder that replaces a redacted value, e.g. ``<EMAIL>``."""
        return f"<{self.value}>"


class Action(StrEnum):
    """What happens to a detected entity.

    - ``REDACT``: replace with the typed placeholder (``<EMAIL>``).
    - ``MASK``: replace letters and digits with the mask character, keeping separators and,
      for long values, the last few characters (``**** **** **** 1111``).
    - ``HASH``: replace with a keyed, truncated HMAC-SHA256 pseudonym (``<EMAIL#3f9a0c1b2d4e>``):
      the same value gives the same pseudonym under the same key, so memories stay linkable.
    - ``PRIVATE``: keep the value but flag the result private (the store encrypts it).
    - ``KEEP``: detected (and reported) but left as it is; the memory stays public.

    Example:
        >>> Action("mask") is Action.MASK
        True
    """

    REDACT = "redact"
    MASK = "mask"
    HASH = "hash"
    PRIVATE = "private"
    KEEP = "keep"


# Secrets and identifiers that enable fraud or account takeover are never worth keeping in a
# memory. Names and places are what an assistant is for: kept, and the memory stays public (a
# private memory is recalled only by its owner's inject, never by search or plugins). A date of
# birth, with a name, identifies a person: kept, but the memory is private.
DEFAULT_ACTIONS: Mapping[Entity, Action] = MappingProxyType(
    {
        Entity.PERSON: Action.KEEP,
        Entity.LOCATION: Action.KEEP,
        Entity.DATE_OF_BIRTH: Action.PRIVATE,
        Entity.EMAIL: Action.REDACT,
        Entity.PHONE: Action.REDACT,
        Entity.CREDIT_CARD: Action.REDACT,
        Entity.US_SSN: Action.REDACT,
        Entity.IBAN: Action.REDACT,
        Entity.IP_ADDRESS: Action.REDACT,
        Entity.STREET_ADDRESS: Action.REDACT,
        Entity.ACCOUNT_NUMBER: Action.REDACT,
        Entity.SECRET: Action.REDACT,
    }
)

# Topics whose mention makes a memory private: GDPR article 9's special categories and money.
# "family" is sensitive for consent and the plugin gate, but a sister's name is core memory.
DEFAULT_PRIVATE_TOPICS: frozenset[str] = frozenset(
    {"medical", "financial", "religion", "politics", "sexuality", "ethnicity", "criminal"}
)
STRICT_ACTIONS: Mapping[Entity, Action] = MappingProxyType(
    {**DEFAULT_ACTIONS, Entity.PERSON: Action.PRIVATE, Entity.LOCATION: Action.PRIVATE}
)

# Phone numbers come from the phonenumbers library at 0.4 even when valid; every other
# recognizer here reports >= 0.5 for a real hit, so 0.4 keeps phones without admitting the
# weak SSN/zip-like guesses Presidio scores at 0.05-0.3.
DEFAULT_MIN_SCORE = 0.4
DEFAULT_MAX_CHARS = 100_000


def _as_entity(name: Entity | str, field_name: str) -> Entity:
    try:
        return Entity(name.upper() if isinstance(name, str) else name)
    except ValueError:
        known = ", ".join(e.value for e in Entity)
        raise ValueError(f"{field_name}: unknown entity type {name!r}; known: {known}") from None


def _as_action(action: Action | str, entity: Entity) -> Action:
    try:
        return Action(action.lower() if isinstance(action, str) else action)
    except ValueError:
        known = ", ".join(a.value for a in Action)
        raise ValueError(
            f"actions[{entity.value}]: unknown action {action!r}; known: {known}"
        ) from None


@dataclass(frozen=True)
class RedactionPolicy:
    """Per-entity actions plus detection settings. Immutable; derive variants with helpers.

    Args:
        actions: entity type -> action; types left out are not detected.
        min_score: detections scoring below this are ignored.
        min_scores: per-entity overrides of ``min_score``.
        allow: exact strings (case-insensitive) that are never treated as PII, e.g. a product
            name the NER model keeps calling a person.
        hash_key: HMAC key for ``Action.HASH``; None uses a random per-process key, so
            pseudonyms are stable within a process only. Set it for stability across restarts.
        mask_char: character used by ``Action.MASK``.
        mask_keep_last: characters kept at the end of a masked value (only for values with at
            least twice as many letters/digits, so short values are fully masked).
        max_chars: longer texts raise ``ValueError`` instead of stalling the caller.
        enabled: False turns redaction into a no-op (text returned unchanged).
        private_topics: sensitive topics (see
            :data:`~langmem_vault.privacy._redaction.sensitive.TOPICS`) whose mention makes an
            extracted memory private.

    Example:
        >>> p = RedactionPolicy().with_actions(email="hash", person="redact")
        >>> p.action_for("EMAIL")
        <Action.HASH: 'hash'>
        >>> RedactionPolicy().without("location").action_for("LOCATION") is None
        True
    """

    actions: Mapping[Entity, Action] = field(default_factory=lambda: dict(DEFAULT_ACTIONS))
    min_score: float = DEFAULT_MIN_SCORE
    min_scores: Mapping[Entity, float] = field(default_factory=dict)
    allow: frozenset[str] = frozenset()
    hash_key: bytes | None = None
    mask_char: str = "*"
    mask_keep_last: int = 4
    max_chars: int = DEFAULT_MAX_CHARS
    enabled: bool = True
    private_topics: frozenset[str] = DEFAULT_PRIVATE_TOPICS

    def __post_init__(self) -> None:
        actions = {
            (ent := _as_entity(k, "actions")): _as_action(v, ent) for k, v in self.actions.items()
        }
        object.__setattr__(self, "actions", MappingProxyType(actions))
        scores = {_as_entity(k, "min_scores"): float(v) for k, v in self.min_scores.items()}
        named = [("min_score", float(self.min_score))]
        named += [(f"min_scores[{k.value}]", v) for k, v in scores.items()]
        for name, value in named:
            if not (0.0 <= value <= 1.0) or math.isnan(value):
                raise ValueError(f"{name}: must be within [0, 1], got {value}")
        object.__setattr__(self, "min_scores", MappingProxyType(scores))
        object.__setattr__(self, "allow", frozenset(a.casefold() for a in self.allow))
        if len(self.mask_char) != 1:
            raise ValueError(f"mask_char: must be one character, got {self.mask_char!r}")
        if self.mask_keep_last < 0:
            raise ValueError(f"mask_keep_last: must be >= 0, got {self.mask_keep_last}")
        if self.max_chars < 1:
            raise ValueError(f"max_chars: must be >= 1, got {self.max_chars}")
        if self.hash_key is not None and len(self.hash_key) < 16:
            raise ValueError("hash_key: must be at least 16 bytes")
        topics = frozenset(self.private_topics)
        if unknown := sorted(topics - set(TOPICS)):
            raise ValueError(
                f"private_topics: unknown topic(s) {unknown}; known: {', '.join(TOPICS)}"
            )
        object.__setattr__(self, "private_topics", topics)

    def action_for(self, entity: Entity | str) -> Action | None:
        """The action for ``entity``, or None when the type is not detected."""
        return self.actions.get(_as_entity(entity, "entity"))

    def threshold_for(self, entity: Entity | str) -> float:
        """The minimum score a detection of ``entity`` needs to count."""
        return self.min_scores.get(_as_entity(entity, "entity"), self.min_score)

    def with_actions(self, **actions: Action | str) -> RedactionPolicy:
        """A copy with some actions changed or added (keyword = entity type, any case)."""
        merged = dict(self.actions)
        for key, value in actions.items():
            entity = _as_entity(key, "actions")
            merged[entity] = _as_action(value, entity)
        return replace(self, actions=merged)

    def without(self, *entities: Entity | str) -> RedactionPolicy:
        """A copy that no longer detects ``entities``."""
        drop = {_as_entity(e, "entities") for e in entities}
        return replace(self, actions={k: v for k, v in self.actions.items() if k not in drop})

    @classmethod
    def strict(cls, **overrides: object) -> RedactionPolicy:
        """The strict policy: every person, place and sensitive topic (family included) makes
        a memory private, as the defaults did before names and cities became recallable.

        Example:
            >>> RedactionPolicy.strict().action_for("PERSON")
            <Action.PRIVATE: 'private'>
            >>> "family" in RedactionPolicy.strict().private_topics
            True
        """
        return cls(
            actions=dict(STRICT_ACTIONS),
            private_topics=frozenset(TOPICS),
            **overrides,  # type: ignore[arg-type]
        )

    @classmethod
    def redact_all(cls, **overrides: object) -> RedactionPolicy:
        """A policy that replaces every entity type with its placeholder.

        Example:
            >>> RedactionPolicy.redact_all().action_for("PERSON")
            <Action.REDACT: 'redact'>
        """
        return cls(actions=dict.fromkeys(Entity, Action.REDACT), **overrides)  # type: ignore[arg-type]


DEFAULT_POLICY = RedactionPolicy()
