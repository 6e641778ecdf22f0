"""A small bounded map keyed by thread id, least recently used first out, thread-safe: what a
saver remembers of the threads it served (their elements, their tenant) to skip a statement.

>>> seen: ThreadLRU[str] = ThreadLRU(max_threads=2)
>>> seen.put("t1", "alice"); seen.put("t2", "bob"); seen.put("t3", "carol")
>>> seen.get("t1"), seen.get("t3")
(None, 'carol')
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class ThreadLRU(Generic[V]):
    """At most ``max_threads`` entries; the least recently read or written goes first."""

    def __init__(self, max_threads: int) -> None:
        self.max_threads = max_threads
        self._entries: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, thread_id: str) -> V | None:
        with self._lock:
            entry = self._entries.get(thread_id)
            if entry is not None:
                self._entries.move_to_end(thread_id)
            return entry

    def put(self, thread_id: str, value: V) -> None:
        with self._lock:
            self._entries[thread_id] = value
            self._entries.move_to_end(thread_id)
            while len(self._entries) > self.max_threads:
                self._entries.popitem(last=False)

    def drop(self, thread_id: str) -> None:
        with self._lock:
            self._entries.pop(thread_id, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
