"""The background side the two bookkeeping writers share (usage stamps in access.py, counter
increments in counter_buffer.py): one writer thread, the loop tasks, and waiting for both."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class BackgroundWrites:
    """Writes run off the turn: on one thread (so they apply in order) or as loop tasks,
    kept referenced until done, and waited for by :meth:`flush` / :meth:`aflush`."""

    def __init__(self, thread_name: str) -> None:
        self._lock = threading.Lock()
        self._thread_name = thread_name
        self._executor: ThreadPoolExecutor | None = None
        self._futures: set[Future[Any]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    def _submit(self, write: Callable[..., Any], *args: Any) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix=self._thread_name)
            future = self._executor.submit(write, *args)
            self._futures.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._futures.discard(future)

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def flush(self, timeout: float | None = 30.0) -> None:
        """Wait for the writes started on the writer thread."""
        with self._lock:
            pending = list(self._futures)
        for future in pending:
            future.result(timeout=timeout)

    async def aflush(self) -> None:
        """Wait for the writes started as tasks (and, off-loop, on the writer thread)."""
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        with self._lock:
            pending = list(self._futures)
        for future in pending:
            await asyncio.wrap_future(future)
