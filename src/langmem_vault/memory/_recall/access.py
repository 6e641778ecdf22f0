"""Record memory use off the chat path: accesses of injected memories, citations of facts.

The counts go to usage records (:mod:`langmem_vault.memory._recall.usage`), never into memory
values.
Writing them inline would add a store round trip to every turn, so they are held and
written in batches off the turn (:mod:`~langmem_vault.memory._recall.background_writes`). A
failure is logged, never raised: bookkeeping must not break a conversation.
``flush``/``aflush`` write what is held (tests, demos, shutdown).

>>> from langgraph.store.memory import InMemoryStore
>>> recorder = AccessRecorder()
>>> recorder.record(InMemoryStore(), [(("memories", "u1", "semantic"), "missing-key")])
>>> recorder.flush()
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import BaseStore

from langmem_vault.memory._models import utcnow
from langmem_vault.memory._recall.background_writes import BackgroundWrites
from langmem_vault.memory._recall.usage import usage_increments

__all__ = ["AccessRecorder"]

Target = tuple[tuple[str, ...], str]


class AccessRecorder(BackgroundWrites):
    """Background writer of usage counts. ``inline=True`` writes before returning instead."""

    def __init__(self, *, inline: bool = False) -> None:
        super().__init__("memory access counts", "langmem-vault-access")
        self.inline = inline

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
        increments = usage_increments(targets, cited, utcnow(), uncited)
        if self.inline:
            self.write(store, increments)
        else:
            self.add(store, increments)

    async def arecord(
        self,
        store: BaseStore,
        targets: Sequence[Target],
        *,
        cited: Sequence[Target] = (),
        uncited: Sequence[Target] = (),
    ) -> None:
        """Async :meth:`record`: a task on the running loop (kept referenced until done)."""
        increments = usage_increments(targets, cited, utcnow(), uncited)
        if self.inline:
            await self.awrite(store, increments)
        else:
            await self.aadd(store, increments)
