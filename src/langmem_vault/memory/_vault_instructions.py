"""The standing instructions of :class:`~langmem_vault.memory._vault.MemoryVault`: add, list
(the applicable ones, by priority) and deactivate."""

from __future__ import annotations

import builtins
import uuid
from datetime import datetime

from langgraph.store.base import GetOp, Item, SearchOp

from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._models import Instruction, utcnow
from langmem_vault.memory._recall.retrieval import applicable_instructions
from langmem_vault.memory._recall.usage import read_usage_plan
from langmem_vault.memory._vault_base import Memory, VaultBase

__all__ = ["VaultInstructions"]

_List = builtins.list


class VaultInstructions(VaultBase):
    """The vault's standing instructions (condition syntax: ``memory.conditions``)."""

    def _add_instruction_plan(self, instruction: Instruction) -> StorePlan[Memory[Instruction]]:
        key = str(uuid.uuid4())
        yield Batch(self._put(self.ns.instructions, key, instruction))
        return Memory(key, instruction)

    def add_instruction(
        self,
        text: str,
        *,
        priority: int = 5,
        condition: str | None = None,
        expires_at: datetime | None = None,
    ) -> Memory[Instruction]:
        """Store a standing instruction (condition syntax: ``memory.conditions``)."""
        instruction = Instruction(
            text=text, priority=priority, condition=condition, expires_at=expires_at
        )
        return self._run(self._add_instruction_plan(instruction))

    async def aadd_instruction(
        self,
        text: str,
        *,
        priority: int = 5,
        condition: str | None = None,
        expires_at: datetime | None = None,
    ) -> Memory[Instruction]:
        """Async :meth:`add_instruction`."""
        instruction = Instruction(
            text=text, priority=priority, condition=condition, expires_at=expires_at
        )
        return await self._arun(self._add_instruction_plan(instruction))

    def _instructions_plan(
        self, applicable_to: str | None, active_only: bool, limit: int
    ) -> StorePlan[_List[Memory[Instruction]]]:
        (items,) = yield Batch([SearchOp(self.ns.instructions, limit=limit)])
        if active_only:
            usage = yield from read_usage_plan((tuple(i.namespace), i.key) for i in items)
            pairs = applicable_instructions(items, applicable_to, utcnow(), usage=usage)
            return [Memory(k, v) for k, v in pairs]
        values = yield from self._with_usage(items)
        found = [
            Memory(i.key, Instruction.from_store(v)) for i, v in zip(items, values, strict=True)
        ]
        found.sort(key=lambda m: -m.value.priority)
        return found

    def instructions(
        self,
        *,
        applicable_to: str | None = None,
        active_only: bool = True,
        limit: int = 100,
    ) -> _List[Memory[Instruction]]:
        """Standing instructions, highest priority first. With ``active_only`` only active,
        unexpired ones whose condition holds for the message ``applicable_to``."""
        return self._run(self._instructions_plan(applicable_to, active_only, limit))

    async def ainstructions(
        self,
        *,
        applicable_to: str | None = None,
        active_only: bool = True,
        limit: int = 100,
    ) -> _List[Memory[Instruction]]:
        """Async :meth:`instructions`."""
        plan = self._instructions_plan(applicable_to, active_only, limit)
        return await self._arun(plan)

    def _deactivate_plan(self, key: str) -> StorePlan[bool]:
        (item,) = yield Batch([GetOp(self.ns.instructions, key)])
        if not isinstance(item, Item):
            return False
        old = Instruction.from_store(item.value)
        new = old.model_copy(update={"active": False, "updated_at": utcnow()})
        yield Batch(self._put(self.ns.instructions, key, new, reindex=False))
        return True

    def deactivate_instruction(self, key: str) -> bool:
        """Turn an instruction off (kept for history). False if there was none."""
        return self._run(self._deactivate_plan(key))

    async def adeactivate_instruction(self, key: str) -> bool:
        """Async :meth:`deactivate_instruction`."""
        return await self._arun(self._deactivate_plan(key))
