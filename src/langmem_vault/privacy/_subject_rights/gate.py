"""The privacy gate: what a plugin (or any other component) may learn about a user.

A requester asks for a tier; it gets at most the tier the app granted it (unknown requesters
get ``none``). Each tier allows a set of fact categories (and, from ``contextual`` up, episode
summaries; at ``full``, standing instructions):

========== ===================================================================================
none       nothing
minimal    preference, skill
contextual + project, decision, commitment, knowledge, general; recent episode summaries
full       + company, strategic, relationship, personal; standing instructions
========== ===================================================================================

Always-on rules, whatever the tier: private (encrypted) and retired memories never leave;
every text goes through ``redact()`` with every identifier replaced by its placeholder
(names, emails, places...); money amounts are generalised ("a five-figure amount"); sentences
about family or health are removed. The answer is a sanitised summary (lines of text with no
keys, scores, timestamps or metadata), never stored rows. Every request, granted or not, is
written to the audit log with the requester, purpose, tiers and the keys of what was shared.

>>> gate = PrivacyGate(store, audit=log, grants={"travel-plugin": "contextual"})  # doctest: +SKIP
>>> answer = gate.request("alice", "travel-plugin", purpose="hotels")  # doctest: +SKIP
>>> print(answer.summary)  # doctest: +SKIP
Preferences: Prefers window seats
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from langgraph.store.base import BaseStore, SearchOp

from langmem_vault.db._steps import arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._models import CATEGORIES, utcnow
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces
from langmem_vault.memory._sealing import is_sealed
from langmem_vault.privacy._audit.log import AuditEvent
from langmem_vault.privacy._redaction.pii import redact
from langmem_vault.privacy._redaction.policy import RedactionPolicy
from langmem_vault.privacy._redaction.sensitive import generalise_amounts, sensitive_topics

__all__ = ["TIER_CATEGORIES", "GateAnswer", "PrivacyGate", "Tier"]

MAX_PURPOSE = 500
MAX_QUERY = 2000
MAX_ITEMS = 50
REMOVED_TOPICS = frozenset({"family", "medical"})


class Tier(StrEnum):
    """Permission tiers, ordered from nothing to the most a plugin can get."""

    NONE = "none"
    MINIMAL = "minimal"
    CONTEXTUAL = "contextual"
    FULL = "full"

    @property
    def rank(self) -> int:
        return list(Tier).index(self)


_MINIMAL = frozenset({"preference", "skill"})
_CONTEXTUAL = _MINIMAL | {"project", "decision", "commitment", "knowledge", "general"}
TIER_CATEGORIES: Mapping[Tier, frozenset[str]] = {
    Tier.NONE: frozenset(),
    Tier.MINIMAL: _MINIMAL,
    Tier.CONTEXTUAL: _CONTEXTUAL,
    Tier.FULL: frozenset(CATEGORIES),
}
_HEADINGS = {
    "preference": "Preferences",
    "skill": "Skills",
    "project": "Projects",
    "decision": "Decisions",
    "commitment": "Commitments",
    "knowledge": "Knowledge",
    "general": "General",
    "company": "Work",
    "strategic": "Goals",
    "relationship": "People",
    "personal": "Personal",
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_GATE_POLICY = RedactionPolicy.redact_all()


@dataclass(frozen=True)
class GateAnswer:
    """What the requester gets: the tier granted and sanitised text only."""

    tier: Tier
    summary: str
    lines: tuple[str, ...] = ()
    withheld: int = 0
    #: keys of the memories the lines came from (for the audit log; not text)
    keys: tuple[str, ...] = field(default=(), repr=False)


def _tier(value: Tier | str, what: str) -> Tier:
    try:
        return Tier(value)
    except ValueError:
        known = ", ".join(t.value for t in Tier)
        raise ValueError(f"{what} must be one of {known}; got {value!r}") from None


def sanitise(text: str) -> str:
    """Apply the always-on rules to one text; '' when nothing may be shared.

    >>> sanitise("Earns $85,000 a year. Has two kids.")  # doctest: +SKIP
    'Earns a five-figure amount a year.'
    """
    kept = [s for s in _SENTENCE.split(text) if not sensitive_topics(s) & REMOVED_TOPICS]
    if not kept:
        return ""
    redacted = redact(" ".join(kept), policy=_GATE_POLICY).text
    return generalise_amounts(redacted).strip()


def _gather_plan(
    ns: ResolvedNamespaces, tier: Tier, query: str | None, limit: int
) -> StorePlan[list[tuple[str, str, str]]]:
    """(heading, key, raw text) of the memories the tier allows, most relevant first."""
    if tier is Tier.NONE:
        return []
    ops = [
        SearchOp(ns.semantic, filter={"status": "active"}, query=query, limit=limit * 3),
        SearchOp(ns.episodes, query=query, limit=limit),
        SearchOp(ns.instructions, filter={"active": True}, limit=limit),
    ]
    facts, episodes, instructions = yield Batch(ops)
    now = utcnow()
    allowed = TIER_CATEGORIES[tier]
    picked: list[tuple[str, str, str]] = []
    for item in facts:
        value = item.value
        if value.get("private") or is_sealed(value) or value.get("category") not in allowed:
            continue
        valid_to = value.get("valid_to")
        if valid_to and datetime.fromisoformat(valid_to) <= now:
            continue
        picked.append((_HEADINGS[value["category"]], item.key, str(value.get("text", ""))))
    if tier.rank >= Tier.CONTEXTUAL.rank:
        picked += [("Recent", i.key, str(i.value.get("summary", ""))) for i in episodes]
    if tier is Tier.FULL:
        picked += [("Instructions", i.key, str(i.value.get("text", ""))) for i in instructions]
    return picked[: limit * 3]


def _answer(tier: Tier, picked: list[tuple[str, str, str]], limit: int) -> GateAnswer:
    sections: dict[str, list[str]] = {}
    keys: list[str] = []
    withheld = 0
    for heading, key, text in picked:
        if len(keys) >= limit:
            break
        clean = sanitise(text)
        if not clean:
            withheld += 1
            continue
        sections.setdefault(heading, []).append(clean)
        keys.append(key)
    lines = tuple(f"{h}: {t}" for h, texts in sections.items() for t in texts)
    summary = "\n".join(f"{h}: " + "; ".join(texts) for h, texts in sections.items())
    return GateAnswer(tier, summary, lines, withheld, tuple(keys))


class PrivacyGate:
    """Hands requesters a tiered, sanitised view of one user's memories, and logs each ask.

    ``grants`` maps requester names to the highest tier each may get. ``audit`` is an
    ``AuditLog``/``AuditBuffer`` (sync :meth:`request`) or ``AsyncAuditLog``/
    ``AsyncAuditBuffer`` (:meth:`arequest`).
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        audit: Any,
        grants: Mapping[str, Tier | str],
        namespaces: MemoryNamespaces | None = None,
        max_items: int = 20,
    ) -> None:
        if audit is None:
            raise ValueError("audit is required: every privacy-gate request must be logged")
        if not 1 <= max_items <= MAX_ITEMS:
            raise ValueError(f"max_items must be in 1..{MAX_ITEMS}, got {max_items!r}")
        self.store = store
        self.audit = audit
        self.grants = {name: _tier(t, f"grants[{name!r}]") for name, t in grants.items()}
        self.namespaces = namespaces or MemoryNamespaces()
        self.max_items = max_items

    def _prepare(
        self, user_id: str, requester: str, purpose: str, query: str | None, tier: Tier | str
    ) -> tuple[ResolvedNamespaces, Tier, Tier]:
        if not isinstance(user_id, str) or not user_id:
            raise ValueError(f"user_id must be a non-empty string, got {user_id!r}")
        for name, value, limit in (("requester", requester, 100), ("purpose", purpose, 500)):
            if not isinstance(value, str) or not value.strip() or len(value) > limit:
                raise ValueError(f"{name} must be a non-empty string of at most {limit} chars")
        if query is not None and (not isinstance(query, str) or len(query) > MAX_QUERY):
            raise ValueError(f"query must be a string of at most {MAX_QUERY} characters")
        wanted = _tier(tier, "tier")
        granted = self.grants.get(requester, Tier.NONE)
        ns = self.namespaces.resolve({"configurable": {"user_id": user_id}})
        effective = wanted if wanted.rank <= granted.rank else granted
        return ns, wanted, effective

    def _event(
        self, user_id: str, requester: str, purpose: str, wanted: Tier, answer: GateAnswer
    ) -> AuditEvent:
        detail = {
            "purpose": purpose[:MAX_PURPOSE],
            "tier_requested": wanted.value,
            "tier_granted": answer.tier.value,
            "shared": len(answer.lines),
            "withheld": answer.withheld,
            "keys": list(answer.keys),
        }
        return AuditEvent(user_id, "gate", "privacy_gate", actor=requester, detail=detail)

    def request(
        self,
        user_id: str,
        requester: str,
        *,
        purpose: str,
        query: str | None = None,
        tier: Tier | str = Tier.FULL,
    ) -> GateAnswer:
        """A sanitised summary of ``user_id``'s memories for ``requester`` (logged)."""
        if inspect.iscoroutinefunction(self.audit.record):
            raise TypeError("this gate has an async audit log: call arequest()")
        ns, wanted, effective = self._prepare(user_id, requester, purpose, query, tier)
        picked = run_steps(_gather_plan(ns, effective, query, self.max_items), self.store)
        answer = _answer(effective, picked, self.max_items)
        self.audit.record(self._event(user_id, requester, purpose, wanted, answer))
        return answer

    async def arequest(
        self,
        user_id: str,
        requester: str,
        *,
        purpose: str,
        query: str | None = None,
        tier: Tier | str = Tier.FULL,
    ) -> GateAnswer:
        """Async :meth:`request` (redaction runs in a worker thread: it is CPU-bound)."""
        ns, wanted, effective = self._prepare(user_id, requester, purpose, query, tier)
        plan = _gather_plan(ns, effective, query, self.max_items)
        picked = await arun_steps(plan, self.store)
        answer = await asyncio.to_thread(_answer, effective, picked, self.max_items)
        result = self.audit.record(self._event(user_id, requester, purpose, wanted, answer))
        if inspect.isawaitable(result):
            await result
        return answer
