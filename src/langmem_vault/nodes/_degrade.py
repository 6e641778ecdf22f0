"""When memory cannot help, the turn goes on without it.

Every memory node runs its body through a :class:`Degrade`: when the store, the embedder,
the database or a memory model call fails (or inject exceeds its time budget), the node
returns no memory instead of failing the user's turn, and says so three ways:

- the state's ``memory_status`` maps each memory stage of the turn (``inject``, ``extract``,
  ``reconcile``, ``compact``) to ``"ok"`` or the cause (``"OperationalError: ..."``);
- a ``memory_error`` event on LangGraph's custom stream (``stream_mode="custom"``):
  ``{"type": "memory_error", "stage": ..., "cause": ...}``;
- one WARNING line on the ``langmem_vault.degrade`` logger.

``on_error="raise"`` raises instead, as before. A run that lacks what memory needs (a user
id, a thread id: :class:`~langmem_vault._run_config.RunConfigError`) is the app's mistake and
always raises.

>>> guard = Degrade("inject")
>>> guard.run(lambda: {"memory_context": "x"})["memory_status"]
{'inject': 'ok'}
>>> guard.run(lambda: 1 / 0)["memory_status"]
{'inject': 'ZeroDivisionError: division by zero'}
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.config import get_stream_writer

from langmem_vault._run_config import RunConfigError
from langmem_vault.db._workers import hand_off

__all__ = [
    "DEFAULT_INJECT_TIMEOUT",
    "STATUS_KEY",
    "Degrade",
    "MissingStateKeyError",
    "OnError",
    "merge_status",
]

logger = logging.getLogger("langmem_vault.degrade")

OnError = Literal["degrade", "raise"]
STATUS_KEY = "memory_status"
#: inject's time budget (seconds). A healthy inject is one store round trip and one query
#: embedding (tens of milliseconds); a process's first turn also loads the embedding model
#: and opens the pool, a few seconds on a small machine. Ten seconds lets a cold start
#: through and still answers well before a user gives up on a database that hangs.
DEFAULT_INJECT_TIMEOUT = 10.0
#: the longest cause kept in the state and the event (an error can quote a whole query)
MAX_CAUSE = 300


class MissingStateKeyError(RunConfigError, KeyError):
    """A memory node's state lacks a key it reads (``messages``): the graph is wired wrong."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


def merge_status(left: Mapping[str, str] | None, right: Mapping[str, str] | None) -> dict[str, str]:
    """The reducer of ``memory_status``: each stage keeps its latest outcome.

    >>> merge_status({"inject": "ok"}, {"extract": "TimeoutError: "})
    {'inject': 'ok', 'extract': 'TimeoutError: '}
    """
    return {**(left or {}), **(right or {})}


def _cause(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_CAUSE else text[: MAX_CAUSE - 1] + "\u2026"


def _in_thread(call: Callable[[], Any], timeout: float) -> Any:
    """``call()`` on a daemon worker (with this context: the run's config, store and stream
    writer), or TimeoutError after ``timeout`` seconds; a call that hangs is left behind."""
    handoff = hand_off(call)
    if not handoff.wait(timeout):
        raise TimeoutError(f"no answer within {timeout:g} s")
    return handoff.result()


@dataclass(frozen=True)
class Degrade:
    """How one memory stage fails: ``on_error`` ("degrade" or "raise") and an optional time
    budget in seconds (``timeout``; None: none)."""

    stage: str
    on_error: OnError = "degrade"
    timeout: float | None = None

    def __post_init__(self) -> None:
        if self.on_error not in ("degrade", "raise"):
            raise ValueError(f"on_error must be 'degrade' or 'raise', got {self.on_error!r}")
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(f"{self.stage}_timeout must be > 0 or None, got {self.timeout!r}")

    def _ok(self, update: Mapping[str, Any] | None) -> dict[str, Any]:
        return {**(update or {}), STATUS_KEY: {self.stage: "ok"}}

    def _failed(self, exc: Exception) -> dict[str, Any]:
        if self.on_error == "raise" or isinstance(exc, RunConfigError):
            raise exc
        cause = _cause(exc)
        logger.warning("memory %s failed, the turn goes on without it: %s", self.stage, cause)
        try:
            writer = get_stream_writer()
        except (RuntimeError, KeyError):  # called outside a graph run
            writer = None
        if writer is not None:
            writer({"type": "memory_error", "stage": self.stage, "cause": cause})
        return {STATUS_KEY: {self.stage: cause}}

    def run(
        self,
        call: Callable[[], Mapping[str, Any] | None],
        then: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """Run a node body synchronously; returns its update plus ``memory_status``.

        ``then`` (the body's bookkeeping, such as inject's access stamps) runs in the caller's
        thread once the body has answered in time, under the same failure rule; never after
        a body that failed or ran out of time, so a turn stamps only what it showed."""
        try:
            update = call() if self.timeout is None else _in_thread(call, self.timeout)
            if then is not None:
                then()
        except Exception as exc:
            return self._failed(exc)
        return self._ok(update)

    async def arun(
        self,
        call: Callable[[], Awaitable[Mapping[str, Any] | None]],
        then: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """Async :meth:`run`."""
        try:
            # asyncio.timeout (None: no limit), not wait_for, which can swallow a cancel of
            # the turn on 3.11 (CPython gh-86296).
            async with asyncio.timeout(self.timeout):
                update = await call()
            if then is not None:
                await then()
        except Exception as exc:
            return self._failed(exc)
        return self._ok(update)
