"""Audit off the chat path: buffers that batch events and write them in the background.

``record()`` costs a list append (no I/O); a background thread (sync) or task (async) writes
the pending events in one statement every ``flush_interval`` seconds, or as soon as
``max_batch`` are waiting.

Durability, stated plainly: an event is durable once ``flush()`` returns, once ``close()``
returns, or at most ``flush_interval`` seconds after ``record()`` (plus the write time). A
process crash loses at most the events of that window. Call ``flush()`` where an action must
not go unlogged (erase, export, a privacy-gate answer): or use ``AuditLog.record`` directly,
which is durable on return. When writes fail (database down), events stay in the buffer and
are retried; ``flush()`` raises the last error; ``record()`` applies backpressure (blocks, or
awaits) once ``max_pending`` events are waiting, so memory stays bounded and nothing is
dropped silently.

>>> with AuditBuffer(log) as audit:  # doctest: +SKIP
...     audit.record(AuditEvent("u1", "inject", "inject", memory_key="k1"))  # ~1 µs
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterable
from types import TracebackType
from typing import Generic, TypeVar

from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditEvent, AuditLog

__all__ = ["AsyncAuditBuffer", "AuditBuffer"]


def _as_list(events: AuditEvent | Iterable[AuditEvent]) -> list[AuditEvent]:
    batch = [events] if isinstance(events, AuditEvent) else list(events)
    for event in batch:
        if not isinstance(event, AuditEvent):
            raise TypeError(f"expected AuditEvent, got {type(event).__name__}")
    return batch


LogT = TypeVar("LogT", AuditLog, AsyncAuditLog)


class _Buffer(Generic[LogT]):
    """What both buffers hold: the log, the checked settings, the pending events."""

    def __init__(
        self,
        log: LogT,
        *,
        max_batch: int = 500,
        flush_interval: float = 0.2,
        max_pending: int = 10_000,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch!r}")
        if flush_interval <= 0:
            raise ValueError(f"flush_interval must be > 0, got {flush_interval!r}")
        if max_pending < max_batch:
            raise ValueError(f"max_pending ({max_pending}) must be >= max_batch ({max_batch})")
        self.log: LogT = log
        self.max_batch = max_batch
        self.flush_interval = flush_interval
        self.max_pending = max_pending
        self._pending: list[AuditEvent] = []
        self._closed = False
        self.last_error: BaseException | None = None


class AuditBuffer(_Buffer[AuditLog]):
    """Sync buffer over an :class:`AuditLog`, written by one daemon thread.

    >>> buf = AuditBuffer(log, flush_interval=0.1)  # doctest: +SKIP
    >>> buf.record(AuditEvent("u1", "read", "api"))  # doctest: +SKIP
    >>> buf.flush()  # doctest: +SKIP
    """

    def __init__(
        self,
        log: AuditLog,
        *,
        max_batch: int = 500,
        flush_interval: float = 0.2,
        max_pending: int = 10_000,
    ) -> None:
        super().__init__(
            log, max_batch=max_batch, flush_interval=flush_interval, max_pending=max_pending
        )
        self._cond = threading.Condition()
        # Sequence numbers: recorded counts every record(), written counts rows committed.
        self._recorded = 0
        self._written = 0
        self._wanted = 0
        self._failures = 0
        self._oldest = 0.0  # monotonic time the oldest pending event was recorded
        self._thread = threading.Thread(target=self._loop, name="vault-audit", daemon=True)
        self._thread.start()

    def record(self, events: AuditEvent | Iterable[AuditEvent]) -> None:
        """Queue events; returns at once unless ``max_pending`` are waiting."""
        batch = _as_list(events)
        with self._cond:
            if self._closed:
                raise RuntimeError("AuditBuffer is closed")
            for event in batch:
                while len(self._pending) >= self.max_pending and not self._closed:
                    self._cond.notify_all()
                    self._cond.wait(self.flush_interval)
                if not self._pending:
                    self._oldest = time.monotonic()
                self._pending.append(event)
                self._recorded += 1
            if len(self._pending) >= self.max_batch:
                self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> None:
        """Block until every event recorded before this call is written.

        Raises ``TimeoutError`` after ``timeout`` seconds, or the last write error.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._recorded
            self._wanted = max(self._wanted, target)
            self._cond.notify_all()
            failures = self._failures
            while self._written < target:
                # A write attempted after this flush began failed: report it rather than
                # wait for a database that may not come back. The events stay queued.
                if self._failures > failures and self.last_error is not None:
                    raise self.last_error
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    if self.last_error is not None:
                        raise self.last_error
                    raise TimeoutError(f"audit flush: {target - self._written} events unwritten")
                self._cond.wait(remaining if remaining is not None else 0.5)

    def delete_user(self, user_id: str) -> int:
        """Flush, then delete the user's events from the log (erase uses this)."""
        self.flush()
        return self.log.delete_user(user_id)

    def close(self) -> None:
        """Flush and stop the thread (idempotent)."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            with self._cond:
                self._closed = True
                self._cond.notify_all()
            self._thread.join()

    def __enter__(self) -> AuditBuffer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _due(self) -> bool:
        """Whether the pending events should be written now (called under the lock)."""
        if not self._pending:
            return False
        if self._closed or len(self._pending) >= self.max_batch or self._wanted > self._written:
            return True
        return time.monotonic() - self._oldest >= self.flush_interval

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._due():
                    if self._closed and not self._pending:
                        return
                    # Sleep until the oldest pending event is flush_interval old, or a
                    # record()/flush()/close() wakes us.
                    age = time.monotonic() - self._oldest if self._pending else 0.0
                    self._cond.wait(max(self.flush_interval - age, 0.001))
                batch = self._pending[: self.max_batch]
            try:
                self.log.record(batch)
            except Exception as exc:  # keep the events; retry after an interval
                with self._cond:
                    self.last_error = exc
                    self._failures += 1
                    self._cond.notify_all()
                    if self._closed:
                        return
                time.sleep(self.flush_interval)
                continue
            with self._cond:
                del self._pending[: len(batch)]
                self._written += len(batch)
                # Events left behind a full batch count from now: at most one extra interval.
                self._oldest = time.monotonic()
                self.last_error = None
                self._cond.notify_all()


class AsyncAuditBuffer(_Buffer[AsyncAuditLog]):
    """Async buffer over an :class:`AsyncAuditLog`, written by one background task.

    ``await record(event)`` does no I/O unless ``max_pending`` events are waiting.

    >>> async with AsyncAuditBuffer(alog) as audit:  # doctest: +SKIP
    ...     await audit.record(AuditEvent("u1", "inject", "inject", memory_key="k1"))
    """

    def __init__(
        self,
        log: AsyncAuditLog,
        *,
        max_batch: int = 500,
        flush_interval: float = 0.2,
        max_pending: int = 10_000,
    ) -> None:
        super().__init__(
            log, max_batch=max_batch, flush_interval=flush_interval, max_pending=max_pending
        )
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._write_lock: asyncio.Lock | None = None

    def _ensure_task(self) -> None:
        if self._task is None:
            self._wake = asyncio.Event()
            self._write_lock = asyncio.Lock()
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def record(self, events: AuditEvent | Iterable[AuditEvent]) -> None:
        """Queue events; writes inline only when ``max_pending`` are waiting."""
        batch = _as_list(events)
        if self._closed:
            raise RuntimeError("AsyncAuditBuffer is closed")
        self._ensure_task()
        for event in batch:
            if len(self._pending) >= self.max_pending:
                await self._write_some()  # backpressure: the caller pays for one batch
            self._pending.append(event)
        if len(self._pending) >= self.max_batch:
            assert self._wake is not None
            self._wake.set()

    async def _write_some(self) -> None:
        assert self._write_lock is not None
        async with self._write_lock:
            batch = self._pending[: self.max_batch]
            if not batch:
                return
            await self.log.record(batch)
            del self._pending[: len(batch)]
            self.last_error = None

    async def flush(self) -> None:
        """Write everything recorded so far; raises the write error if it fails."""
        if self._task is None:
            return
        try:
            while self._pending:
                await self._write_some()
        except Exception as exc:
            self.last_error = exc
            raise

    async def delete_user(self, user_id: str) -> int:
        """Flush, then delete the user's events from the log (erase uses this)."""
        await self.flush()
        return await self.log.delete_user(user_id)

    async def aclose(self) -> None:
        """Flush and stop the background task (idempotent)."""
        if self._closed:
            return
        try:
            await self.flush()
        finally:
            self._closed = True
            if self._task is not None:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task

    async def __aenter__(self) -> AsyncAuditBuffer:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _loop(self) -> None:
        assert self._wake is not None
        while True:
            # asyncio.timeout, not wait_for: wait_for can swallow aclose's cancel on 3.11
            # (CPython gh-86296; see jobs/_worker.py).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.flush_interval):
                    await self._wake.wait()
            self._wake.clear()
            try:
                while self._pending:
                    await self._write_some()
            except Exception as exc:  # keep the events; retry next interval
                self.last_error = exc
