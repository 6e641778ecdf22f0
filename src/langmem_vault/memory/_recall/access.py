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
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from langgraph.store.base import BaseStore

from langmem_vault.memory._models import utcnow
from langmem_vault.memory._recall.usage import arecord_usage, record_usage, usage_increments

__all__ = ["AccessRecorder"]

logger = logging.getLogger("langmem_vault.access")

Target = tuple[tuple[str, ...], str]


class AccessRecorder:
    """Background writer of usage counts. ``inline=True`` writes before returning instead."""

    def __init__(self, *, inline: bool = False) -> None:
        self.inline = inline
        self._executor: ThreadPoolExecutor | None = None
        self._futures: set[Future[int]] = set()
        self._tasks: set[asyncio.Task[int]] = set()
        self._lock = threading.Lock()

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                # One worker: stamps for the same item are applied in order.
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="langmem-vault-access")
            return self._executor

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
        future = self._pool().submit(self._write, store, list(targets), list(cited), list(uncited))
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget_future)

    def _forget_future(self, future: Future[int]) -> None:
        with self._lock:
            self._futures.discard(future)

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
        task = asyncio.get_running_loop().create_task(
            self._awrite(store, list(targets), list(cited), list(uncited))
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def flush(self, timeout: float | None = 30.0) -> None:
        """Wait for background writes started by :meth:`record`."""
        with self._lock:
            pending = list(self._futures)
        for future in pending:
            future.result(timeout=timeout)

    async def aflush(self) -> None:
        """Wait for writes started by :meth:`arecord` (and, off-loop, by :meth:`record`)."""
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        with self._lock:
            pending = list(self._futures)
        for future in pending:
            await asyncio.wrap_future(future)
