"""Counter increments written off the chat path, in batches.

Token and latency accounting adds a few increments per stage of every turn. Writing each
stage's inline would add a store round trip to the turn; writing each in the background
still costs a round trip per stage. :class:`CounterBuffer` instead holds the increments of
each store until its one writer (a worker thread for sync callers, a task for async ones)
takes all that arrived meanwhile and applies them in one write
(:func:`~langmem_vault.memory._recall.usage.record_usage`: one upsert on VaultStore). Under
load, many turns share a write; an idle process writes each turn's soon after it ends.

A failed write is logged and dropped, never raised: bookkeeping must not fail a turn. An
async write runs as a task of a store that owns its background writes
(``AsyncVaultStore.spawn_write``: finished before the store's pool closes).
``flush``/``aflush`` wait for what was added so far (tests, shutdown).

>>> from langgraph.store.memory import InMemoryStore
>>> store, buffer = InMemoryStore(), CounterBuffer()
>>> buffer.add(store, [(("counts",), "k", {"n": 1})])
>>> buffer.add(store, [(("counts",), "k", {"n": 2})])
>>> buffer.flush()
>>> store.get(("counts",), "k").value
{'n': 3}
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from langgraph.store.base import BaseStore

from langmem_vault.memory._recall.background_writes import BackgroundWrites
from langmem_vault.memory._recall.usage import arecord_usage, record_usage

__all__ = ["CounterBuffer"]

logger = logging.getLogger("langmem_vault.accounting")

Increment = tuple[tuple[str, ...], str, Any]


class CounterBuffer(BackgroundWrites):
    """Increments per store, applied in batches by one background writer."""

    def __init__(self) -> None:
        super().__init__("langmem-vault-metrics")
        self._pending: dict[int, tuple[BaseStore, list[Increment]]] = {}

    def _hold(self, store: BaseStore, increments: Sequence[Increment]) -> bool:
        """Keep ``increments``; True when no write of this store is waiting to start."""
        with self._lock:
            entry = self._pending.get(id(store))
            if entry is None:
                self._pending[id(store)] = (store, list(increments))
                return True
            entry[1].extend(increments)
            return False

    def _take(self, store: BaseStore) -> list[Increment]:
        with self._lock:
            _, increments = self._pending.pop(id(store), (store, []))
            return increments

    def _write(self, store: BaseStore) -> None:
        try:
            record_usage(store, self._take(store))
        except Exception:  # bookkeeping must never fail a turn
            logger.warning("could not record token and latency accounting", exc_info=True)

    async def _awrite(self, store: BaseStore) -> None:
        try:
            await arecord_usage(store, self._take(store))
        except Exception:
            logger.warning("could not record token and latency accounting", exc_info=True)

    def add(self, store: BaseStore, increments: Sequence[Increment]) -> None:
        """Queue ``increments`` for ``store``; written by the worker thread."""
        if not increments or not self._hold(store, increments):
            return
        self._submit(self._write, store)

    async def aadd(self, store: BaseStore, increments: Sequence[Increment]) -> None:
        """Async :meth:`add`: written by a task on the running loop."""
        if not increments or not self._hold(store, increments):
            return
        # A store that owns its background writes (AsyncVaultStore) finishes them on close.
        spawn = getattr(store, "spawn_write", None)
        work = self._awrite(store)
        self._keep(spawn(work) if spawn else asyncio.get_running_loop().create_task(work))
