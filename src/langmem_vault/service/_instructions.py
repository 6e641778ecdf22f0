"""Standing instructions and episodes: list, add, edit, disable, delete; episodes list.

An instruction is a memory of kind ``instruction``: edits, deletes and restores go through
the memory operations (:mod:`langmem_vault.service._memories`), which check the kind here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langmem_vault.db._steps import Call, Steps, Within
from langmem_vault.memory._models import utcnow
from langmem_vault.service._errors import InvalidInput, NotFound
from langmem_vault.service._memories import MemoriesMixin
from langmem_vault.service._records import MemoryRecord, record_of

__all__ = ["InstructionsMixin"]


class InstructionsMixin(MemoriesMixin):
    """Instruction and episode operations of :class:`~langmem_vault.service.MemoryService`."""

    def _instructions_steps(
        self, user_id: str, active_only: bool, min_priority: int, max_priority: int
    ) -> Steps[list[MemoryRecord]]:
        if not 1 <= min_priority <= max_priority <= 10:
            raise InvalidInput(
                "min_priority", f"need 1 <= min <= max <= 10, got {min_priority}..{max_priority}"
            )
        records, _ = yield Within(self.store, self._records_plan(user_id, ["instruction"]))
        found = [
            r
            for r in records
            if min_priority <= (r.priority or 0) <= max_priority
            and (not active_only or r.status == "active")
        ]
        # Highest priority first; the newest first among equals (records come newest first).
        found.sort(key=lambda r: -(r.priority or 0))
        return found

    def _instruction_steps(self, user_id: str, key: str) -> Steps[MemoryRecord]:
        record = yield from self._show_steps(user_id, key)
        if record.kind != "instruction":
            raise NotFound("key", f"{key!r} is a {record.kind} memory, not an instruction")
        return record

    def _add_instruction_steps(
        self, user_id: str, text: str, fields: dict[str, Any]
    ) -> Steps[MemoryRecord]:
        # add_instruction() validates before it writes anything.
        vault = self._vault(user_id)
        added = yield Call(
            lambda: vault.add_instruction(text, **fields),
            lambda: vault.aadd_instruction(text, **fields),
        )
        ns = self._namespace(user_id, "instruction")
        yield from self._audited(user_id, "create", key=added.key, namespace=ns)
        return (yield from self._show_steps(user_id, added.key))

    def _edit_instruction_steps(
        self, user_id: str, key: str, changes: dict[str, Any]
    ) -> Steps[MemoryRecord]:
        yield from self._instruction_steps(user_id, key)
        return (yield from self._edit_steps(user_id, key, changes))

    def _drop_instruction_steps(self, user_id: str, key: str, hard: bool) -> Steps[MemoryRecord]:
        yield from self._instruction_steps(user_id, key)
        return (yield from self._forget_steps(user_id, key, hard))

    def _episodes_steps(
        self, user_id: str, query: str | None, limit: int
    ) -> Steps[list[MemoryRecord]]:
        if not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidInput("limit", f"must be in 1..1000, got {limit!r}")
        vault = self._vault(user_id)
        found = yield Call(
            lambda: vault.episodes(query, limit=limit),
            lambda: vault.aepisodes(query, limit=limit),
        )
        now = utcnow()
        return [record_of("episode", user_id, m.key, m.value.to_store(), now) for m in found]

    # -- public: sync and async twins ------------------------------------------------------

    def list_instructions(
        self,
        user_id: str,
        *,
        active_only: bool = False,
        min_priority: int = 1,
        max_priority: int = 10,
    ) -> list[MemoryRecord]:
        """The user's standing instructions, highest priority first (``active_only``: not
        disabled and not expired), within the priority range."""
        uid = self._authorize(user_id)
        return self._run(self._instructions_steps(uid, active_only, min_priority, max_priority))

    async def alist_instructions(
        self,
        user_id: str,
        *,
        active_only: bool = False,
        min_priority: int = 1,
        max_priority: int = 10,
    ) -> list[MemoryRecord]:
        """Async :meth:`list_instructions`."""
        uid = self._authorize(user_id)
        steps = self._instructions_steps(uid, active_only, min_priority, max_priority)
        return await self._arun(steps)

    def add_instruction(
        self,
        user_id: str,
        text: str,
        *,
        priority: int = 5,
        condition: str | None = None,
        expires_at: datetime | None = None,
    ) -> MemoryRecord:
        """Store a standing instruction (``condition`` syntax: ``memory.conditions``)."""
        fields = {"priority": priority, "condition": condition, "expires_at": expires_at}
        return self._run(self._add_instruction_steps(self._authorize(user_id), text, fields))

    async def aadd_instruction(
        self,
        user_id: str,
        text: str,
        *,
        priority: int = 5,
        condition: str | None = None,
        expires_at: datetime | None = None,
    ) -> MemoryRecord:
        """Async :meth:`add_instruction`."""
        fields = {"priority": priority, "condition": condition, "expires_at": expires_at}
        steps = self._add_instruction_steps(self._authorize(user_id), text, fields)
        return await self._arun(steps)

    def edit_instruction(self, user_id: str, key: str, **changes: Any) -> MemoryRecord:
        """Change an instruction's ``text``, ``priority``, ``condition``, ``expires_at`` or
        ``active``; :class:`NotFound` if ``key`` is not an instruction."""
        return self._run(self._edit_instruction_steps(self._authorize(user_id), key, changes))

    async def aedit_instruction(self, user_id: str, key: str, **changes: Any) -> MemoryRecord:
        """Async :meth:`edit_instruction`."""
        steps = self._edit_instruction_steps(self._authorize(user_id), key, changes)
        return await self._arun(steps)

    def disable_instruction(self, user_id: str, key: str) -> MemoryRecord:
        """Turn an instruction off (kept; :meth:`restore_memory` turns it on again)."""
        return self._run(self._drop_instruction_steps(self._authorize(user_id), key, False))

    async def adisable_instruction(self, user_id: str, key: str) -> MemoryRecord:
        """Async :meth:`disable_instruction`."""
        steps = self._drop_instruction_steps(self._authorize(user_id), key, False)
        return await self._arun(steps)

    def delete_instruction(self, user_id: str, key: str) -> MemoryRecord:
        """Erase an instruction; returns it as it was."""
        return self._run(self._drop_instruction_steps(self._authorize(user_id), key, True))

    async def adelete_instruction(self, user_id: str, key: str) -> MemoryRecord:
        """Async :meth:`delete_instruction`."""
        steps = self._drop_instruction_steps(self._authorize(user_id), key, True)
        return await self._arun(steps)

    def list_episodes(
        self, user_id: str, query: str | None = None, *, limit: int = 20
    ) -> list[MemoryRecord]:
        """Episodes: the most relevant to ``query``, or the most recent first."""
        return self._run(self._episodes_steps(self._authorize(user_id), query, limit))

    async def alist_episodes(
        self, user_id: str, query: str | None = None, *, limit: int = 20
    ) -> list[MemoryRecord]:
        """Async :meth:`list_episodes`."""
        return await self._arun(self._episodes_steps(self._authorize(user_id), query, limit))
