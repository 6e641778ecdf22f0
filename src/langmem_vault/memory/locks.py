"""One write lock per store object, so read-modify-write plans do not lose each other's updates.

BaseStore has no compare-and-set: the access stamper (inject, respond), reconcile and the
facade each read an item, change it and put it back. Two of them interleaving would let the
later put restore fields the earlier one changed (a background access stamp re-opening a fact
reconcile just closed). Within one process these plans run under this lock; sync callers
block on it, async callers poll it so the event loop never blocks.

>>> from langgraph.store.memory import InMemoryStore
>>> store = InMemoryStore()
>>> with write_lock(store):
...     pass
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

__all__ = ["awrite_lock", "write_lock"]

_locks: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_fallback = threading.Lock()  # for store objects that cannot be weakly referenced
_registry = threading.Lock()


def _lock_for(store: Any) -> threading.Lock:
    with _registry:
        try:
            lock = _locks.get(store)
            if lock is None:
                lock = _locks[store] = threading.Lock()
        except TypeError:
            return _fallback
        return lock


@contextmanager
def write_lock(store: Any) -> Iterator[None]:
    """Hold ``store``'s write lock (sync)."""
    lock = _lock_for(store)
    with lock:
        yield


@asynccontextmanager
async def awrite_lock(store: Any) -> AsyncIterator[None]:
    """Hold ``store``'s write lock (async: polled, so the event loop never blocks).

    Polling instead of ``to_thread(lock.acquire)`` keeps cancellation safe: a cancelled
    waiter never leaves a worker thread holding the lock. Contention is rare and short.
    """
    lock = _lock_for(store)
    while not lock.acquire(blocking=False):
        await asyncio.sleep(0.001)
    try:
        yield
    finally:
        lock.release()
