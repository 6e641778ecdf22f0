"""Record memory use off the chat path: accesses of injected memories, citations of facts.

The counts go to usage records (:mod:`langmem_vault.memory._recall.usage`), never into memory
values.
Writing them inline would add a store round trip to every turn, so the sync path hands
them to one worker thread and the async path to a task. A failure is logged, never raised:
bookkeeping must not break a conversation. ``flush``/``aflush`` wait for pending writes (tests,
demos, shutdown).

>>> from langgraph.store.memory import InMemoryStore
>>> recorder = AccessRecorder()
>>> recorder.record(InMemoryStore(), [(("memories", "u1", "semantic"), "missing-key")])
>>> recorder.flush()
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from langgraph.store.base import BaseStore

from langmem_vault.memory._models import utcnow
from langmem_vault.memory._recall.background_writes import BackgroundWrites
from langmem_vault.memory._recall.usage import arecord_usage, record_usage, usage_increments

__all__ = ["AccessRecorder"]

logger = logging.getLogger("langmem_vault.access")

Target = tuple[tuple[str, ...], str]


class AccessRecorder(BackgroundWrites):
    """Background writer of usage counts. ``inline=True`` writes before returning instead."""

    def __init__(self, *, inline: bool = False) -> None:
        # One writer thread: stamps for the same item are applied in order.
        super().__init__("langmem-vault-access")
        self.inline = inline

    @staticmethod
    def _write(
        store: BaseStore,
        targets: Sequence[Target],
        cited: Sequence[Target],
        uncited: Sequence[Target] = (),
    ) -> int:
        try:
            return record_usage(store, usage_increments(targets, cited, utcnow(), uncited))
        except Exception:  # bookkeeping must never fail a turn
            logger.warning("could not record memory access", exc_info=True)
            return 0

    @staticmethod
    async def _awrite(
        store: BaseStore,
        targets: Sequence[Target],
        cited: Sequence[Target],
        uncited: Sequence[Target] = (),
    ) -> int:
        try:
            return await arecord_usage(store, usage_increments(targets, cited, utcnow(), uncited))
        except Exception:
            logger.warning("could not record memory access", exc_info=True)
            return 0

    def record(
        self,
        store: BaseStore,
        targets: Sequence[Target],
        *,
        cited: Sequence[Target] = (),
        uncited: Sequence[Target] = (),
    ) -> None:
        """Stamp ``targets`` as injected, ``cited`` as useful and ``uncited`` as shown but not
        used (a small utility loss), in the background."""
        if not targets and not cited and not uncited:
            return
        if self.inline:
            self._write(store, list(targets), list(cited), list(uncited))
            return
        self._submit(self._write, store, list(targets), list(cited), list(uncited))

    async def arecord(
        self,
        store: BaseStore,
        targets: Sequence[Target],
        *,
        cited: Sequence[Target] = (),
        uncited: Sequence[Target] = (),
    ) -> None:
        """Async :meth:`record`: a task on the running loop (kept referenced until done)."""
        if not targets and not cited and not uncited:
            return
        if self.inline:
            await self._awrite(store, list(targets), list(cited), list(uncited))
            return
        self._keep(
            asyncio.get_running_loop().create_task(
                self._awrite(store, list(targets), list(cited), list(uncited))
            )
        )
