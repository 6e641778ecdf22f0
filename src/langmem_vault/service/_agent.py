"""What an agent outside the graph calls (an MCP client): remember a stated fact the way
extraction stores one, and read the user's profile.

``remember`` is not ``add_memory``: an operator's ``add_memory`` stores the text as given,
while a fact an agent states goes through the same path as the graph's extraction and the
LangChain memory tool: PII redaction (a sensitive fact becomes private and sealed), the
user's consent, then reconcile (the same fact twice reinforces one record). Nothing in it
calls a model, so it runs inline and answers at once.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.service import MemoryService
>>> service = MemoryService(InMemoryStore())
>>> service.remember("ana", "Prefers green tea").outcome
'added'
>>> service.remember("ana", "Prefers green tea").outcome
'reinforced'
>>> [f.text for f in service.profile("ana").facts]
['Prefers green tea']
"""

from __future__ import annotations

import asyncio
import functools
from typing import Literal

from pydantic import BaseModel

from langmem_vault.db._steps import Call, Steps
from langmem_vault.extraction._apply import aapply, apply
from langmem_vault.extraction._redaction import stated_fact
from langmem_vault.memory._models import FactCategory, utcnow
from langmem_vault.service._errors import InvalidInput
from langmem_vault.service._instructions import InstructionsMixin
from langmem_vault.service._records import MemoryRecord, record_of

__all__ = ["AgentMixin", "Profile", "Remembered"]

Outcome = Literal["added", "pending", "reinforced", "refused"]
MAX_PROFILE = 50


class Remembered(BaseModel):
    """What :meth:`~AgentMixin.remember` did: ``added``, ``pending`` (waits for the user's
    confirmation), ``reinforced`` (already known: that record's confidence rose) or
    ``refused`` (the user's consent excludes it; nothing written); ``memory`` is the record
    written or reinforced (None when refused)."""

    outcome: Outcome
    memory: MemoryRecord | None = None


class Profile(BaseModel):
    """A user's top current facts (ranked like inject) and active instructions, highest
    priority first. Private facts are left out: a profile is meant to leave the vault."""

    user_id: str
    facts: list[MemoryRecord]
    instructions: list[MemoryRecord]


class AgentMixin(InstructionsMixin):
    """The agent operations of :class:`~langmem_vault.service.MemoryService`."""

    def _remember_steps(
        self, user_id: str, text: str, category: FactCategory, private: bool
    ) -> Steps[Remembered]:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("text", "must be a non-empty string")
        # Redaction is CPU work (Presidio, seconds to load once): off the event loop in async.
        state = functools.partial(
            stated_fact, text, category=category, private=private, policy=self.redaction
        )
        extraction = yield Call(state, lambda: asyncio.to_thread(state))
        ns = self._ns(user_id)
        report = yield Call(
            lambda: apply(self.store, extraction, ns),
            lambda: aapply(self.store, extraction, ns),
        )
        outcomes: tuple[tuple[Outcome, list[str]], ...] = (
            ("added", report.added),
            ("pending", report.pending),
            ("reinforced", report.reinforced),
        )
        for outcome, keys in outcomes:
            if keys:
                action = "edit" if outcome == "reinforced" else "create"
                detail = {"op": "remember", "outcome": outcome}
                yield from self._audited(
                    user_id, action, key=keys[0], namespace=ns.semantic, detail=detail
                )
                record = yield from self._show_steps(user_id, keys[0])
                return Remembered(outcome=outcome, memory=record)
        return Remembered(outcome="refused")

    def _profile_steps(self, user_id: str, limit: int) -> Steps[Profile]:
        if not isinstance(limit, int) or not 1 <= limit <= MAX_PROFILE:
            raise InvalidInput("limit", f"must be in 1..{MAX_PROFILE}, got {limit!r}")
        vault = self._vault(user_id)
        # More than the limit, so that leaving private facts out still fills it.
        wanted = 2 * limit
        found = yield Call(lambda: vault.recall(limit=wanted), lambda: vault.arecall(limit=wanted))
        now = utcnow()
        facts = [
            record_of("semantic", user_id, m.key, m.value.model_dump(mode="json"), now)
            for m in found
            if not m.value.private
        ][:limit]
        instructions = yield from self._instructions_steps(user_id, True, 1, 10)
        return Profile(user_id=user_id, facts=facts, instructions=instructions)

    def remember(
        self, user_id: str, text: str, *, category: FactCategory = "general", private: bool = False
    ) -> Remembered:
        """Store a fact an agent states: redacted, filtered by the user's consent, then
        reconciled with what is stored; audited (``create``, or ``edit`` when reinforced)."""
        uid = self._authorize(user_id)
        return self._run(self._remember_steps(uid, text, category, private))

    async def aremember(
        self, user_id: str, text: str, *, category: FactCategory = "general", private: bool = False
    ) -> Remembered:
        """Async :meth:`remember`."""
        uid = self._authorize(user_id)
        return await self._arun(self._remember_steps(uid, text, category, private))

    def profile(self, user_id: str, *, limit: int = 10) -> Profile:
        """The user's top ``limit`` current facts (not private) and active instructions."""
        return self._run(self._profile_steps(self._authorize(user_id), limit))

    async def aprofile(self, user_id: str, *, limit: int = 10) -> Profile:
        """Async :meth:`profile`."""
        return await self._arun(self._profile_steps(self._authorize(user_id), limit))
