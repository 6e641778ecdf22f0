"""Daemon threads reused from call to call, for the calls a turn hands to another thread: a
memory node's body under its time budget (:class:`~langmem_vault.nodes._degrade.Degrade`)
and a step run beside another (:class:`~langmem_vault.db._steps.Together`).

Starting a thread for each call cost inject about 0.3 ms a turn at 10k facts
(bench/RESULTS.md, session 14 (q25)); an idle worker takes the next call instead, and a new
one starts only when none is idle. Each call runs in its caller's context (the run's config, the
tracing span). The workers are daemons: a call that hangs holds only its own worker, which
is left behind (never joined, even at exit), and the next call takes another. A worker idle
for ``IDLE_SECONDS`` ends. (Not ``concurrent.futures.ThreadPoolExecutor``: it joins its
workers at exit, so one hung call would hang the app's exit, and it bounds them, so hung
calls would starve the rest.)

>>> handoff = hand_off(lambda: 6 * 7)
>>> handoff.wait(5), handoff.result()
(True, 42)
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["IDLE_SECONDS", "Handoff", "hand_off"]

#: a worker with nothing to do for this long ends
IDLE_SECONDS = 30.0

# queue.Queue, not SimpleQueue: two puts in a row can wake only one of two SimpleQueue
# waiters, leaving the second job until that waiter's timeout
_jobs: queue.Queue[Handoff] = queue.Queue()
_lock = threading.Lock()
_idle = 0  # workers waiting for a job (or about to), each job put is one taken off this


class Handoff:
    """A call handed to a worker: :meth:`wait` for it, then :meth:`result` (or
    :meth:`outcome`)."""

    __slots__ = ("_call", "_context", "_done", "_outcome")

    def __init__(self, call: Callable[[], Any]) -> None:
        self._call: Callable[[], Any] | None = call
        self._context: contextvars.Context | None = contextvars.copy_context()
        self._done = threading.Event()
        self._outcome: tuple[bool, Any] = (False, RuntimeError("the call has not ended"))

    def _run(self) -> None:
        assert self._call is not None and self._context is not None
        try:
            self._outcome = (True, self._context.run(self._call))
        except BaseException as exc:  # handed to the caller's thread
            self._outcome = (False, exc)
        self._call = self._context = None  # nothing of the turn stays with the worker
        self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the call has ended; False when ``timeout`` seconds passed first."""
        return self._done.wait(timeout)

    def outcome(self) -> tuple[bool, Any]:
        """``(True, value)`` or ``(False, exception)`` of a call that has ended."""
        return self._outcome

    def result(self) -> Any:
        """The call's value, or its exception raised, once it has ended."""
        ok, value = self._outcome
        if not ok:
            raise value
        return value


def hand_off(call: Callable[[], Any]) -> Handoff:
    """Run ``call()`` on an idle worker (a new one when none is idle), in this context."""
    global _idle
    job = Handoff(call)
    with _lock:
        if _idle:
            _idle -= 1
            _jobs.put(job)
            return job
    threading.Thread(target=_work, args=(job,), name="langmem-vault-worker", daemon=True).start()
    return job


def _work(job: Handoff) -> None:
    global _idle
    while True:
        job._run()
        with _lock:
            _idle += 1
        while True:
            try:
                job = _jobs.get(timeout=IDLE_SECONDS)
                break
            except queue.Empty:
                with _lock:
                    if _jobs.empty():  # else a job was put for an idle worker as this one woke
                        _idle -= 1
                        return
