"""Consent settings per user, kept in the store, and the filter extraction applies with them.

Three switches: ``allow_extraction`` (learn from conversations at all), ``allow_personal_facts``
(facts about the user's person and relationships: categories ``personal`` and ``relationship``,
and anything redaction marked private; family details too), ``allow_sensitive_facts`` (health,
money, religion, politics, sexuality, ethnicity, criminal records: see
:mod:`langmem_vault.privacy._redaction.sensitive`).

What a user tells the assistant about their health is kept, privately: an assistant that forgets
an allergy it was told is unsafe. By default a sensitive fact is kept as a **private** fact
(never in the full-text or vector index, sealed when a key is configured, recalled only for
its owner's own assistant). ``allow_sensitive_facts=False``, set explicitly, refuses them; an
episode touching a sensitive topic is dropped in every case (episodes are indexed, so one
could carry a private fact into search). Every refusal is reported by reason and category,
never by its text (:class:`FilteredExtraction`); :mod:`langmem_vault.extraction._apply` counts,
logs and audits it.

Consent governs what is *learned*: :func:`filter_extraction` runs on what extraction proposes,
before reconcile stores anything. Facts a user adds by hand are theirs to keep.

>>> from langgraph.store.memory import InMemoryStore
>>> store = InMemoryStore()
>>> set_consent(store, "u1", allow_personal_facts=False).allow_personal_facts
False
>>> get_consent(store, "u1").allow_extraction
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from langmem_vault.db._steps import arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._models import Extraction, ProposedFact
from langmem_vault.memory._namespaces import (
    MemoryNamespaces,
    ResolvedNamespaces,
    resolve_namespace,
)
from langmem_vault.privacy._audit.owners import owner_of
from langmem_vault.privacy._redaction.sensitive import sensitive_topics

__all__ = [
    "CONSENT_KEY",
    "CONSENT_NAMESPACE",
    "PERSONAL_CATEGORIES",
    "ConsentSettings",
    "FilteredExtraction",
    "afilter_for_namespaces",
    "aget_consent",
    "aset_consent",
    "filter_extraction",
    "filter_for_namespaces",
    "get_consent",
    "set_consent",
]

CONSENT_NAMESPACE = ("privacy", "{user_id}", "consent")
CONSENT_KEY = "settings"
PERSONAL_CATEGORIES = frozenset({"personal", "relationship"})
_SWITCHES = ("allow_extraction", "allow_personal_facts", "allow_sensitive_facts")


@dataclass(frozen=True)
class ConsentSettings:
    """One user's consent. ``updated_at`` is None until the user has chosen.

    >>> ConsentSettings().allow_sensitive_facts  # kept, as private facts
    True
    """

    allow_extraction: bool = True
    allow_personal_facts: bool = True
    allow_sensitive_facts: bool = True
    updated_at: datetime | None = None

    def to_store(self) -> dict[str, Any]:
        """The JSON dict kept in the store."""
        value: dict[str, Any] = {name: getattr(self, name) for name in _SWITCHES}
        value["updated_at"] = self.updated_at.isoformat() if self.updated_at else None
        return value

    @classmethod
    def from_store(cls, value: dict[str, Any]) -> ConsentSettings:
        """Rebuild from the stored dict (unknown keys ignored; bad types refused)."""
        kwargs: dict[str, Any] = {}
        for name in _SWITCHES:
            if name in value:
                kwargs[name] = _bool(name, value[name])
        stamp = value.get("updated_at")
        kwargs["updated_at"] = datetime.fromisoformat(stamp) if stamp else None
        return cls(**kwargs)


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"consent.{name} must be true or false, got {value!r}")
    return value


def consent_namespace(user_id: str) -> tuple[str, ...]:
    """Where a user's consent lives: ``("privacy", user_id, "consent")``."""
    if not isinstance(user_id, str) or not user_id:
        raise ValueError(f"user_id must be a non-empty string, got {user_id!r}")
    return resolve_namespace(CONSENT_NAMESPACE, {"configurable": {"user_id": user_id}})


def _get_plan(user_id: str) -> StorePlan[ConsentSettings]:
    (item,) = yield Batch([GetOp(consent_namespace(user_id), CONSENT_KEY)])
    return ConsentSettings.from_store(item.value) if isinstance(item, Item) else ConsentSettings()


def _set_plan(user_id: str, changes: dict[str, Any]) -> StorePlan[ConsentSettings]:
    unknown = set(changes) - set(_SWITCHES)
    if unknown:
        raise ValueError(f"unknown consent setting(s) {sorted(unknown)}; known: {_SWITCHES}")
    checked = {name: _bool(name, value) for name, value in changes.items()}
    current = yield from _get_plan(user_id)
    new = replace(current, **checked, updated_at=datetime.now(UTC))
    yield Batch([PutOp(consent_namespace(user_id), CONSENT_KEY, new.to_store(), index=False)])
    return new


def get_consent(store: BaseStore, user_id: str) -> ConsentSettings:
    """The user's consent (the defaults when none is stored)."""
    return run_steps(_get_plan(user_id), store)


async def aget_consent(store: BaseStore, user_id: str) -> ConsentSettings:
    """Async :func:`get_consent`."""
    return await arun_steps(_get_plan(user_id), store)


def set_consent(store: BaseStore, user_id: str, **changes: bool) -> ConsentSettings:
    """Change some switches (validated first; nothing is written on a bad name or value).

    Log the change with an ``AuditEvent(user_id, "consent", ...)`` where it matters.
    """
    return run_steps(_set_plan(user_id, changes), store)


async def aset_consent(store: BaseStore, user_id: str, **changes: bool) -> ConsentSettings:
    """Async :func:`set_consent`."""
    return await arun_steps(_set_plan(user_id, changes), store)


# --- the extraction filter -------------------------------------------------------------------


@dataclass(frozen=True)
class FilteredExtraction:
    """What consent let through, and why the rest was dropped (reasons, never the text), for
    ``user_id`` (None when the namespaces name no user)."""

    extraction: Extraction
    dropped: list[str] = field(default_factory=list)
    user_id: str | None = None


def _sensitive(text: str, extra: list[str]) -> set[str]:
    # Family is personal, not special-category data: it is governed by allow_personal_facts
    # ("my daughter is called Emma" is what an assistant is for, once the user agrees).
    return sensitive_topics(text, extra) - {"family"}


def _fact_refusal(fact: ProposedFact, consent: ConsentSettings) -> tuple[str | None, bool]:
    """Why consent refuses ``fact`` (None: kept), and whether it is kept as a private fact."""
    text = " ".join(filter(None, [fact.text, fact.evidence]))
    topics = _sensitive(text, fact.tags)
    # A fact private only for its sensitive topic (this filter marks those) is governed by
    # allow_sensitive_facts alone, so filtering twice keeps what filtering once kept.
    if not consent.allow_personal_facts and (
        (fact.private and not topics)
        or fact.category in PERSONAL_CATEGORIES
        or "family" in sensitive_topics(text, fact.tags)
    ):
        return f"fact: personal ({fact.category})", False
    if topics and not consent.allow_sensitive_facts:
        return f"fact: sensitive ({', '.join(sorted(topics))})", False
    return None, bool(topics)


def filter_extraction(extraction: Extraction, consent: ConsentSettings) -> FilteredExtraction:
    """Drop what ``consent`` does not allow from an extraction; provenance is kept.

    >>> from langmem_vault.memory._models import ProposedFact
    >>> ex = Extraction(facts=[ProposedFact(text="Takes insulin daily"),
    ...                        ProposedFact(text="Prefers tea")])
    >>> [(f.text, f.private) for f in filter_extraction(ex, ConsentSettings()).extraction.facts]
    [('Takes insulin daily', True), ('Prefers tea', False)]
    >>> out = filter_extraction(ex, ConsentSettings(allow_sensitive_facts=False))
    >>> [f.text for f in out.extraction.facts], out.dropped
    (['Prefers tea'], ['fact: sensitive (medical)'])
    """
    if not isinstance(extraction, Extraction):
        raise TypeError(f"extraction must be an Extraction, got {type(extraction).__name__}")
    if not isinstance(consent, ConsentSettings):
        raise TypeError(f"consent must be ConsentSettings, got {type(consent).__name__}")
    keep = {
        name: getattr(extraction, name)
        for name in ("thread_id", "message_ids", "started_at", "ended_at", "observed_at")
    }
    if not consent.allow_extraction:
        total = (
            len(extraction.facts)
            + len(extraction.instructions)
            + int(extraction.episode is not None)
        )
        return FilteredExtraction(
            Extraction(**keep), [f"extraction not allowed ({total} proposals)"] if total else []
        )
    dropped: list[str] = []
    facts = []
    for fact in extraction.facts:
        reason, private = _fact_refusal(fact, consent)
        if reason:
            dropped.append(reason)
        else:
            facts.append(fact.model_copy(update={"private": True}) if private else fact)
    episode = extraction.episode
    if episode is not None and _sensitive(episode.summary, episode.topics):
        # Episodes are indexed, so one never carries a sensitive fact into search; the fact
        # itself is kept (privately) or refused above. Only a refusal is reported.
        if not consent.allow_sensitive_facts:
            topics = _sensitive(episode.summary, episode.topics)
            dropped.append(f"episode: sensitive ({', '.join(sorted(topics))})")
        episode = None
    instructions = []
    for instruction in extraction.instructions:
        topics = set() if consent.allow_sensitive_facts else _sensitive(instruction.text, [])
        if topics:
            dropped.append(f"instruction: sensitive ({', '.join(sorted(topics))})")
        else:
            instructions.append(instruction)
    filtered = Extraction(facts=facts, episode=episode, instructions=instructions, **keep)
    return FilteredExtraction(filtered, dropped)


# --- the hook for the extraction path ----------------------------------------------------------


def _owner(namespaces: ResolvedNamespaces, templates: MemoryNamespaces | None) -> str | None:
    t = templates or MemoryNamespaces()
    return owner_of(namespaces.semantic, [t.semantic])


def filter_for_namespaces(
    store: BaseStore,
    extraction: Extraction,
    namespaces: ResolvedNamespaces,
    *,
    templates: MemoryNamespaces | None = None,
) -> FilteredExtraction:
    """Read the consent of the user the namespaces belong to and filter ``extraction``.

    For reconcile's callers, which know the resolved namespaces but not the user id. When the
    namespaces name no user (custom templates without ``{user_id}``) nothing is filtered.

    >>> out = filter_for_namespaces(store, extraction, ns)  # doctest: +SKIP
    >>> apply_extraction(store, out.extraction, namespaces=ns)  # doctest: +SKIP
    """
    user_id = _owner(namespaces, templates)
    if user_id is None:
        return FilteredExtraction(extraction)
    filtered = filter_extraction(extraction, get_consent(store, user_id))
    return replace(filtered, user_id=user_id)


async def afilter_for_namespaces(
    store: BaseStore,
    extraction: Extraction,
    namespaces: ResolvedNamespaces,
    *,
    templates: MemoryNamespaces | None = None,
) -> FilteredExtraction:
    """Async :func:`filter_for_namespaces`."""
    user_id = _owner(namespaces, templates)
    if user_id is None:
        return FilteredExtraction(extraction)
    filtered = filter_extraction(extraction, await aget_consent(store, user_id))
    return replace(filtered, user_id=user_id)
