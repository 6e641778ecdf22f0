"""Background extraction's machinery: the job queue (and the pool it opens from a DSN) and the
worker that drains it, so the extract node only enqueues.

A queue the app passes in stays the app's: closing closes only what was opened here (the pool
from a DSN) and the worker started here (a thread for a sync queue, a task on the running
loop for an async one).

>>> from langmem_vault.jobs._background import BackgroundExtraction
>>> with BackgroundExtraction(dsn) as background:  # doctest: +SKIP
...     node = create_extract_node(model, queue=background)
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from langmem_vault.jobs._queue import AsyncJobQueue, JobQueue
from langmem_vault.jobs._worker import ExtractionWorker

logger = logging.getLogger("langmem_vault.extract")

#: connections of a pool opened from a DSN
POOL_SIZE = 4

__all__ = ["BackgroundExtraction"]


class BackgroundExtraction:
    """The queue of extract jobs and the worker this process runs for them.

    ``queue`` is a :class:`JobQueue`, an :class:`AsyncJobQueue` or a Postgres DSN, from which
    the first use opens a pool (sync or async, as the caller runs) and sets the queue's tables
    up. ``start_worker=False`` leaves the jobs to workers elsewhere. Use it as a (sync or
    async) context manager, or call :meth:`close` / :meth:`aclose`.
    """

    def __init__(self, queue: JobQueue | AsyncJobQueue | str, *, start_worker: bool = True):
        if not isinstance(queue, JobQueue | AsyncJobQueue | str):
            raise TypeError(
                f"queue must be a JobQueue, an AsyncJobQueue or a DSN, got {type(queue).__name__}"
            )
        self.start_worker = start_worker
        self._dsn = queue if isinstance(queue, str) else None
        self._queue = queue if isinstance(queue, JobQueue) else None
        self._aqueue = queue if isinstance(queue, AsyncJobQueue) else None
        self._worker: ExtractionWorker | None = None
        self._lock = threading.Lock()
        self._alock: asyncio.Lock | None = None

    @property
    def worker(self) -> ExtractionWorker | None:
        """The worker started here, if any."""
        return self._worker

    def queue(self) -> JobQueue | None:
        """The sync queue (opened from the DSN on first use); None when only an async queue
        was given."""
        if self._queue is None and self._dsn is not None:
            with self._lock:
                if self._queue is None:
                    from langmem_vault.db._connection import open_pool

                    queue = JobQueue(open_pool(self._dsn, max_size=POOL_SIZE))
                    queue.setup()
                    self._queue = queue
        return self._queue

    async def aqueue(self) -> AsyncJobQueue | None:
        """The async queue (opened from the DSN on first use, on this loop); None when a sync
        queue was given."""
        if self._aqueue is None and self._dsn is not None:
            from langmem_vault.db._connection import aopen_pool

            # Concurrent first turns must open one pool, not one each (and leak the rest).
            if self._alock is None:
                self._alock = asyncio.Lock()
            async with self._alock:
                if self._aqueue is None:
                    aqueue = AsyncJobQueue(await aopen_pool(self._dsn, max_size=POOL_SIZE))
                    await aqueue.setup()
                    self._aqueue = aqueue
        return self._aqueue

    def wake(
        self, queue: JobQueue | AsyncJobQueue, make_worker: Callable[[], ExtractionWorker]
    ) -> None:
        """Have a worker of this process poll ``queue`` now: start one (``make_worker``) if
        none runs (a thread for a sync queue, a task on the running loop for an async one)."""
        if not self.start_worker:
            return
        with self._lock:
            worker = self._worker
            if isinstance(queue, AsyncJobQueue):
                if worker is None or not worker.task_alive():
                    worker = make_worker()
                    worker.astart()
            elif worker is None:
                worker = make_worker()
                worker.start()
            self._worker = worker
        worker.wake()

    def close(self) -> None:
        """Stop the worker started here and close the sync pool opened from the DSN."""
        with self._lock:
            worker, self._worker = self._worker, None
            queue = self._queue if self._dsn is not None else None
            if self._dsn is not None:
                self._queue = None
            aqueue = self._aqueue if self._dsn is not None else None
        if worker is not None:
            worker.close()
        if queue is not None:
            queue.db.conn.close()
        if aqueue is not None:  # an async pool closes on its loop: aclose() does that
            logger.warning("extract: close() cannot close an async pool; await aclose()")

    async def aclose(self) -> None:
        """Async :meth:`close`: awaits the worker task and closes the async pool too."""
        worker = self._worker
        if worker is not None:
            worker.stop()
            await worker.astop()
        aqueue = self._aqueue if self._dsn is not None else None
        if aqueue is not None:
            self._aqueue = None
            await aqueue.db.conn.close()
        self.close()

    def __enter__(self) -> BackgroundExtraction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> BackgroundExtraction:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
