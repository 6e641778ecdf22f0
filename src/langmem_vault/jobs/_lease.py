"""Keeping a claimed job's lease alive while slow work runs (a model call, a consolidation
run with a judge): a slow worker keeps its job, and a hung one (past ``max_seconds``) stops
renewing and loses it to another worker when the lease runs out.

>>> with heartbeat(queue, job, lease_seconds=30, max_seconds=300):  # doctest: +SKIP
...     slow_work()
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langmem_vault.db._steps import Step
from langmem_vault.jobs._plans import Job
from langmem_vault.jobs._queue import AsyncJobQueue, JobQueue

__all__ = ["Leased", "aheartbeat", "heartbeat"]


@contextlib.contextmanager
def heartbeat(
    queue: JobQueue, job: Job, *, lease_seconds: float, max_seconds: float
) -> Iterator[None]:
    """Renew ``job``'s lease every third of it while the block runs, for up to ``max_seconds``
    (and never again once a renewal finds the lease lost)."""
    stop = threading.Event()
    deadline = time.monotonic() + max_seconds

    def beat() -> None:
        while not stop.wait(lease_seconds / 3) and time.monotonic() < deadline:
            if not queue.renew(job, lease_seconds):
                return

    thread = threading.Thread(target=beat, name=f"lease-{job.id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextlib.asynccontextmanager
async def aheartbeat(
    queue: AsyncJobQueue, job: Job, *, lease_seconds: float, max_seconds: float
) -> AsyncIterator[None]:
    """Async :func:`heartbeat` (a task on the running loop)."""
    deadline = time.monotonic() + max_seconds

    async def beat() -> None:
        while True:
            await asyncio.sleep(lease_seconds / 3)
            if time.monotonic() >= deadline or not await queue.renew(job, lease_seconds):
                return

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class Leased(Step):
    """A step run under :func:`heartbeat` (:func:`aheartbeat` async): the job's lease is
    renewed while it runs."""

    __slots__ = ("job", "lease_seconds", "max_seconds", "queue", "step")

    def __init__(
        self,
        step: Step,
        queue: JobQueue | AsyncJobQueue,
        job: Job,
        *,
        lease_seconds: float,
        max_seconds: float,
    ) -> None:
        self.step = step
        self.queue = queue
        self.job = job
        self.lease_seconds = lease_seconds
        self.max_seconds = max_seconds

    def run(self, ctx: Any) -> Any:
        assert isinstance(self.queue, JobQueue), "a sync driver runs a JobQueue"
        with heartbeat(
            self.queue, self.job, lease_seconds=self.lease_seconds, max_seconds=self.max_seconds
        ):
            return self.step.run(ctx)

    async def arun(self, ctx: Any) -> Any:
        assert isinstance(self.queue, AsyncJobQueue), "an async driver runs an AsyncJobQueue"
        async with aheartbeat(
            self.queue, self.job, lease_seconds=self.lease_seconds, max_seconds=self.max_seconds
        ):
            return await self.step.arun(ctx)
