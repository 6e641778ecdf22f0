"""Tokens per day by operation, their cost, and the memory stages' latency, for the CLI
(``langmem-vault stats``), the REST API and the analytics page.

Read from the accounting records the graph process and the workers write
(:mod:`langmem_vault.memory._recall.accounting`); priced with the service's price table
(``MemoryService(prices=...)``, else ``$LANGMEM_VAULT_PRICES``).

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.service import MemoryService
>>> MemoryService(InMemoryStore(), prices={"gpt-4o-mini": (0.15, 0.6)}).accounting("u1")
Accounting(tokens=[], cost=None, latency_ms={})
"""

from __future__ import annotations

from langmem_vault.db._steps import Steps, Within
from langmem_vault.memory._recall.accounting import Accounting, accounting_plan, with_cost
from langmem_vault.service._errors import InvalidInput
from langmem_vault.service._stats import MAX_DAYS, StatsMixin

__all__ = ["AccountingMixin"]


class AccountingMixin(StatsMixin):
    """Token, cost and latency accounting of :class:`~langmem_vault.service.MemoryService`."""

    def _accounting_steps(self, user_id: str | None, days: int) -> Steps[Accounting]:
        if not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
            raise InvalidInput("days", f"must be in 1..{MAX_DAYS}, got {days!r}")
        if user_id is None:
            self._require_admin()
        report = yield Within(self.store, accounting_plan(user_id, days=days))
        return with_cost(report, self.prices)

    def accounting(self, user_id: str | None = None, *, days: int = 30) -> Accounting:
        """Tokens per day and operation over the last ``days`` days, their cost where the
        price table has the model, and stage latency; ``user_id=None``: every user's
        (admin only)."""
        uid = None if user_id is None else self._authorize(user_id)
        return self._run(self._accounting_steps(uid, days))

    async def aaccounting(self, user_id: str | None = None, *, days: int = 30) -> Accounting:
        """Async :meth:`accounting`."""
        uid = None if user_id is None else self._authorize(user_id)
        return await self._arun(self._accounting_steps(uid, days))
