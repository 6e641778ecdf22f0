"""The background side the two bookkeeping writers share (usage stamps in access.py, counter
increments in counter_buffer.py): increments held per store and written in batches off the
turn.

A turn only appends its increments to a list. Waking a writer thread per turn (a queue put
and a thread switch) cost the turn more than the increments themselves: the woken writer
takes the GIL while the turn still runs, so on a quiet machine a turn's wall time rose
0.1-0.2 ms above its CPU time. Instead one writer thread per writer wakes on a timer
(``interval``, or sooner when ``batch`` increments are waiting) and writes what arrived
meanwhile, one write per store; under load many turns share a write. Async callers hand
their increments to a task on the running loop the same way (one task per batch).

Closing a :class:`~langmem_vault.store.VaultStore` writes what is held for it first
(``on_close``); an ``AsyncVaultStore`` waits for its writes (``spawn_write``). A write that
still fails (a store closed under it, a server gone) is dropped with one warning line naming
what was lost, never raised: bookkeeping must not fail a turn. ``flush``/``aflush`` write
what was added so far (tests, shutdown); so does the interpreter's exit.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import weakref
from collections.abc import Sequence
from functools import cache
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langmem_vault.memory._recall.usage import Increment, arecord_usage, record_usage

logger = logging.getLogger("langmem_vault.bookkeeping")

#: seconds between the writer's rounds (what an idle process waits before its write)
INTERVAL = 0.25
#: held increments that wake the writer before its round
BATCH = 512
#: idle rounds before the writer thread ends (the next increment starts another)
IDLE_ROUNDS = 120

_LIVE: weakref.WeakSet[BackgroundWrites] = weakref.WeakSet()


class BackgroundWrites:
    """Increments per store, written off the turn in batches; ``what`` names them in the
    warning a lost write logs."""

    def __init__(
        self, what: str, thread_name: str, *, interval: float = INTERVAL, batch: int = BATCH
    ) -> None:
        self.what = what
        self.interval = interval
        self.batch = batch
        self._thread_name = thread_name
        self._lock = threading.Lock()  # guards what is held and the writer's state
        self._writing = threading.Lock()  # one write at a time: increments apply in order
        self._held: dict[int, tuple[BaseStore, list[Increment]]] = {}
        self._count = 0
        self._writer: threading.Thread | None = None
        self._wake = threading.Event()
        self._waiting: dict[int, tuple[BaseStore, list[Increment]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        _LIVE.add(self)

    # -- sync callers: a list append; the writer thread writes on its round --------------------

    def add(self, store: BaseStore, increments: Sequence[Increment]) -> None:
        """Hold ``increments`` for ``store``; the writer thread writes them on its next round."""
        if not increments:
            return
        if isinstance(store, InMemoryStore):
            # Not thread-safe (a writer thread's put while a turn searches it raises "dictionary
            # changed size during iteration"), and its writes cost microseconds: write now.
            self.write(store, increments)
            return
        with self._lock:
            entry = self._held.get(id(store))
            if entry is None:
                entry = self._held[id(store)] = (store, [])
                on_close = getattr(store, "on_close", None)
                if on_close is not None:
                    on_close(self.flush_store)
            entry[1].extend(increments)
            self._count += len(increments)
            if self._writer is None:
                _flush_at_exit()
                self._writer = threading.Thread(
                    target=self._rounds, name=self._thread_name, daemon=True
                )
                self._writer.start()
            elif self._count >= self.batch:
                self._wake.set()

    def _rounds(self) -> None:
        idle = 0
        while True:
            self._wake.wait(self.interval)
            self._wake.clear()
            with self._lock:
                if not self._held:
                    idle += 1
                    if idle >= IDLE_ROUNDS:
                        self._writer = None
                        return
                    continue
            idle = 0
            self.flush()

    def _take(self, store: BaseStore | None) -> list[tuple[BaseStore, list[Increment]]]:
        with self._lock:
            if store is None:
                taken = list(self._held.values())
                self._held.clear()
            else:
                entry = self._held.pop(id(store), None)
                taken = [] if entry is None else [entry]
            self._count -= sum(len(increments) for _, increments in taken)
            return taken

    def write(self, store: BaseStore, increments: Sequence[Increment]) -> None:
        """Write ``increments`` now; a failure is logged (:meth:`dropped`), never raised."""
        try:
            record_usage(store, increments)
        except Exception as exc:  # bookkeeping must never fail a turn
            self.dropped(increments, exc)

    async def awrite(self, store: BaseStore, increments: Sequence[Increment]) -> None:
        """Async :meth:`write`."""
        try:
            await arecord_usage(store, increments)
        except Exception as exc:
            self.dropped(increments, exc)

    def dropped(self, increments: Sequence[Increment], exc: BaseException) -> None:
        """The one warning line a lost write logs: what, how many, where, and why."""
        records = list(dict.fromkeys(("/".join(ns), key) for ns, key, _ in increments))
        shown = ", ".join(f"{ns}: {key}" for ns, key in records[:3])
        more = f" and {len(records) - 3} more" if len(records) > 3 else ""
        logger.warning(
            "dropped %s for %d record(s) (%s%s): %s: %s",
            self.what,
            len(records),
            shown,
            more,
            type(exc).__name__,
            exc,
        )

    def flush_store(self, store: BaseStore) -> None:
        """Write what is held for ``store`` now (its ``close`` calls this first)."""
        with self._writing:
            for found, increments in self._take(store):
                self.write(found, increments)

    def flush(self, timeout: float | None = 30.0) -> None:
        """Write everything held now (after a write already under way, up to ``timeout``)."""
        if not self._writing.acquire(timeout=-1 if timeout is None else timeout):
            logger.warning("%s: a write is still running after %ss", self.what, timeout)
            return
        try:
            for store, increments in self._take(None):
                self.write(store, increments)
        finally:
            self._writing.release()

    # -- async callers: a task on the running loop per batch -----------------------------------

    def _wait(self, store: BaseStore, increments: Sequence[Increment]) -> bool:
        """Hold ``increments``; True when no task of this store is waiting to start."""
        with self._lock:
            entry = self._waiting.get(id(store))
            if entry is None:
                self._waiting[id(store)] = (store, list(increments))
                return True
            entry[1].extend(increments)
            return False

    async def _awrite_waiting(self, store: BaseStore) -> None:
        with self._lock:
            _, increments = self._waiting.pop(id(store), (store, []))
        await self.awrite(store, increments)

    async def aadd(self, store: BaseStore, increments: Sequence[Increment]) -> None:
        """Async :meth:`add`: written by a task on the running loop, with the increments that
        arrive before it starts."""
        if not increments or not self._wait(store, increments):
            return
        # A store that owns its background writes (AsyncVaultStore) finishes them on close.
        spawn = getattr(store, "spawn_write", None)
        work = self._awrite_waiting(store)
        task = spawn(work) if spawn else asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aflush(self) -> None:
        """Wait for the writes started as tasks, then write what sync callers hold."""
        if tasks := list(self._tasks):
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._held:
            await asyncio.to_thread(self.flush)


def flush_all(timeout: float | None = 5.0) -> None:
    """Write what every writer of the process holds now (at exit; between tests)."""
    for writes in list(_LIVE):
        writes.flush(timeout=timeout)


@cache
def _flush_at_exit() -> None:
    # Registered when the first writer starts, so after the store it writes to (and after an
    # embedded server's own exit handler, registered when that server starts): atexit runs
    # handlers last in, first out, so what is held is written before the server stops.
    atexit.register(flush_all)
