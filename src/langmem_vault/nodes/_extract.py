"""The extract node: memory from the turns not processed yet, in the background by default.

After a turn, the node looks at the thread's messages that no extraction has seen (a per-thread
watermark of message ids, so compaction removing messages never makes it skip or repeat one).
Every ``every_n_messages`` new messages (default 4) it either

- **background** (default): enqueues a durable job holding those messages (see
  :mod:`langmem_vault.jobs`) and returns at once; a worker makes the extraction call and hands
  the result to reconcile. The enqueue and the watermark move in one transaction, and a job
  still waiting for a worker absorbs the next span (the debounce: ``debounce_seconds``);
- **inline**: extracts and reconciles inside the node (the watermark lives in the store).

A thread that ends before ``every_n_messages`` is not lost: in background mode its short tail
is enqueued too, to run once the thread has been idle ``idle_seconds`` (default 5 minutes; each
later turn merges into that job and pushes it back), and at once when the same user starts a
new thread (:meth:`_ExtractNode.catch_up`; the agent middleware also waits a little for it, so
the new thread's first answer already knows). The queue's watermark keeps this free of
duplicates. In inline mode the tail is kept in the store (``tails_namespace``, one item per
thread), and the user's next new thread extracts it on its first turn, before inject reads:
``build_memory_graph``, ``add_memory`` and the middleware inject through
``CatchUpThenInject`` (nodes/_catch_up.py; a graph wired by hand does the same), so a
one-exchange chat is remembered in the next one too. With ``idle_seconds=None`` short tails
wait until their thread reaches the threshold, in both modes.

Background mode needs Postgres for the queue: pass ``queue=`` (a ``JobQueue``, an
``AsyncJobQueue``, a DSN string, or a :class:`~langmem_vault.jobs._background.BackgroundExtraction`
that owns the pool opened from a DSN and the worker). Without one the node runs inline and
logs that once, so the same graph works on ``InMemoryStore``. Both drivers run one body of
steps (``_background_steps``; inline mode's are in nodes/_inline_extraction.py), so sync and
async runs do the same things in the same order.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.offline._extractor import OfflineExtractor
>>> node = create_extract_node(OfflineExtractor(), mode="inline")
>>> # builder.add_node("extract", node)
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

import psycopg
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from langmem_vault._run_config import RunConfigError
from langmem_vault.db._steps import Call, Steps, arun_steps, run_steps
from langmem_vault.extraction._messages import (
    content_messages,
    message_id,
    with_time,
)
from langmem_vault.extraction._payload import (
    EXTRACT_JOB,
    payload_builder,
)
from langmem_vault.extraction._protocol import as_extractor
from langmem_vault.jobs._background import BackgroundExtraction
from langmem_vault.jobs._queue import AsyncJobQueue, JobQueue
from langmem_vault.jobs._worker import ExtractionWorker
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.nodes._common import MemoryNode, aobserved, observed, resolve_store, run_user
from langmem_vault.nodes._degrade import Degrade, MissingStateKeyError, OnError
from langmem_vault.nodes._extract_config import session_time, thread_id_of
from langmem_vault.nodes._inline_extraction import InlineExtraction
from langmem_vault.privacy._redaction.pii import preload
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy

logger = logging.getLogger("langmem_vault.extract")

#: config["configurable"] key that makes the node extract now, below the threshold
FLUSH_KEY = "extract_now"
#: the state key holding what consent refused this turn (reasons, never text)
DROPPED_KEY = "memory_dropped"
DEFAULT_BACKGROUND_DEBOUNCE = 2.0
DEFAULT_IDLE_SECONDS = 300.0
#: how often a catch-up that waits polls the promoted jobs
_POLL_SECONDS = 0.05
_SETTLED = ("done", "failed")

Mode = Literal["background", "inline"]

__all__ = ["DROPPED_KEY", "FLUSH_KEY", "create_extract_node"]


# --- the node ----------------------------------------------------------------------------------


class AsyncQueueInSyncRunError(RunConfigError, TypeError):
    """A sync run of a node given an ``AsyncJobQueue``: the app's wiring, not an outage."""


class _ExtractNode:
    """State shared by the sync and async entry points of one extract node."""

    def __init__(
        self,
        model: Any,
        *,
        mode: Mode | None,
        every_n_messages: int,
        debounce_seconds: float | None,
        namespaces: MemoryNamespaces,
        queue: BackgroundExtraction | JobQueue | AsyncJobQueue | str | None,
        store: BaseStore | None,
        similar_limit: int,
        redaction: RedactionPolicy | None,
        start_worker: bool,
        max_attempts: int,
        idle_seconds: float | None = DEFAULT_IDLE_SECONDS,
        on_error: OnError = "degrade",
    ) -> None:
        self.guard = Degrade("extract", on_error)
        if mode not in ("background", "inline", None):
            raise ValueError(f"mode must be 'background', 'inline' or None, got {mode!r}")
        if every_n_messages < 1:
            raise ValueError(f"every_n_messages must be >= 1, got {every_n_messages!r}")
        if debounce_seconds is not None and debounce_seconds < 0:
            raise ValueError(f"debounce_seconds must be >= 0, got {debounce_seconds!r}")
        if idle_seconds is not None and idle_seconds < 0:
            raise ValueError(f"idle_seconds must be >= 0 or None, got {idle_seconds!r}")
        self.idle_seconds = idle_seconds
        for setting, value in (("similar_limit", similar_limit), ("max_attempts", max_attempts)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{setting} must be an int >= 1, got {value!r}")
        if mode is None:  # the default everywhere: background exactly when there is a queue
            mode = "inline" if queue is None else "background"
        self.extractor = as_extractor(model)
        self.mode: Mode = mode
        self.every_n = every_n_messages
        self.namespaces = namespaces
        self.store = store
        self.similar_limit = similar_limit
        self.redaction = redaction
        self.max_attempts = max_attempts
        self.background: BackgroundExtraction | None = (
            queue
            if isinstance(queue, BackgroundExtraction) or queue is None
            else BackgroundExtraction(queue, start_worker=start_worker)
        )
        if mode == "background" and queue is None:
            logger.warning(
                "extract: no job queue given, so extraction runs inline in the node; pass "
                "queue=JobQueue(...)/AsyncJobQueue(...) or a Postgres DSN for background mode"
            )
            self.mode = "inline"
        if self.mode == "background" and self.background and self.background.start_worker:
            self._warm_up()
        default_debounce = DEFAULT_BACKGROUND_DEBOUNCE if self.mode == "background" else 0.0
        self.debounce = default_debounce if debounce_seconds is None else debounce_seconds
        self.inline = InlineExtraction(
            self.extractor,
            namespaces,
            store,
            similar_limit,
            redaction,
            self.debounce,
            idle_seconds,
        )

    # -- shared pieces --

    def _store(self) -> BaseStore:
        return resolve_store(self.store)

    def _span(
        self, state: dict[str, Any], config: RunnableConfig | None = None
    ) -> list[BaseMessage]:
        messages = state.get("messages")
        if messages is None:
            raise MissingStateKeyError("extract reads state['messages'], which is missing")
        span = content_messages(messages)
        if config is None:
            return span
        # When it was said: the message's own time, else the run's session date, else now;
        # the time travels with the message (a background job included).
        said = session_time(config)
        return [with_time(m, said) for m in span]

    def _min_new(self, config: RunnableConfig) -> int:
        flush = bool((config.get("configurable") or {}).get(FLUSH_KEY))
        return 1 if flush else self.every_n

    # -- background: one body of steps for both drivers --

    def _background_steps(self, state: dict[str, Any], config: RunnableConfig) -> Steps[None]:
        """On a thread's first turn catch up with the user's other threads, then enqueue the
        new messages and wake this process's worker."""
        background = self._background()
        thread_id = thread_id_of(config)
        ns = self.namespaces.resolve(config)
        span = self._span(state, config)
        if _first_turn(span):
            yield Call(lambda: self.catch_up(state, config), lambda: self.acatch_up(state, config))
        queue = yield Call(self._sync_queue, self._any_queue)
        payload = payload_builder(span, ns, run_user(config))
        args = (EXTRACT_JOB, thread_id, [message_id(m) for m in span], payload)
        kwargs: dict[str, Any] = {
            "min_new": self._min_new(config),
            "delay_seconds": self.debounce,
            "max_attempts": self.max_attempts,
            "idle_seconds": self.idle_seconds,
        }

        def enqueue() -> Any:
            return queue.enqueue_span(*args, **kwargs)

        async def aenqueue() -> Any:
            if isinstance(queue, AsyncJobQueue):
                return await queue.enqueue_span(*args, **kwargs)
            return await asyncio.to_thread(enqueue)  # a sync queue in an async graph

        queued = yield Call(enqueue, aenqueue)
        if queued is not None:
            yield Call.same(lambda: background.wake(queue, lambda: self._new_worker(queue)))

    def invoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Extract (or enqueue) the thread's new messages. When that fails the turn goes on
        (:mod:`.degrade`) and nothing is lost: the watermark did not move, so the next turn
        takes these messages again."""
        return observed(self.guard, self.store, config, lambda: self._invoke(state, config))

    async def ainvoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Async :meth:`invoke`."""
        return await aobserved(self.guard, self.store, config, lambda: self._ainvoke(state, config))

    def _invoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        if self.mode == "inline":
            return _dropped(
                state,
                run_steps(
                    self.inline.steps(self._span(state, config), config, self._min_new(config))
                ),
            )
        try:
            run_steps(self._background_steps(state, config))
        except psycopg.Error as exc:
            _enqueue_failed(exc)
        return {}

    async def _ainvoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        if self.mode == "inline":
            refused = await arun_steps(
                self.inline.steps(self._span(state, config), config, self._min_new(config))
            )
            return _dropped(state, refused)
        try:
            await arun_steps(self._background_steps(state, config))
        except psycopg.Error as exc:
            _enqueue_failed(exc)
        return {}

    def _background(self) -> BackgroundExtraction:
        assert self.background is not None, "background mode always has a queue"
        return self.background

    def _sync_queue(self) -> JobQueue:
        queue = self._background().queue()
        if queue is None:
            raise AsyncQueueInSyncRunError(
                "this extract node was given an AsyncJobQueue: run the graph with "
                "ainvoke/astream, or pass a JobQueue or a DSN for sync runs"
            )
        return queue

    async def _any_queue(self) -> JobQueue | AsyncJobQueue:
        background = self._background()
        return await background.aqueue() or self._sync_queue()

    def _warm_up(self) -> None:
        # Loaded on the worker's first job instead, spaCy and Presidio take seconds (more than
        # 30 under load) inside a new thread's catch-up wait (catch_up_seconds), whose answer
        # then misses what the user said: load them with the node, as Studio does at start.
        try:
            warm = getattr(self.extractor, "warm_up", None)
            if warm is not None:
                warm()
            if self.redaction is not None and self.redaction.enabled:
                preload()
        except Exception as exc:  # the worker's first job loads them again, or fails and retries
            logger.warning("extract: could not load the models at start: %s", exc)

    def _new_worker(self, queue: JobQueue | AsyncJobQueue) -> ExtractionWorker:
        return ExtractionWorker(
            queue,
            self._store(),
            self.extractor,
            similar_limit=self.similar_limit,
            redaction=self.redaction,
        )

    # -- a new thread catches up with the user's earlier ones --

    def _catching_up(self, state: Mapping[str, Any]) -> bool:
        return self.idle_seconds is not None and _first_turn(self._span(dict(state)))

    def _catch_up_failed(self, exc: Exception) -> list[int]:
        # Memory must not break the chat turn: the tails stay for the next new thread.
        where = "the idle timer still runs them" if self.mode == "background" else "kept"
        logger.warning("extract: catch-up failed (%s); the tails are %s", exc, where)
        return []

    def catch_up(
        self,
        state: Mapping[str, Any],
        config: RunnableConfig,
        *,
        wait_seconds: float = 0.0,
        dropped: list[str] | None = None,
    ) -> list[int]:
        """On the first turn of a thread, run the user's idle tails (their other threads'
        unextracted messages) now; wait up to ``wait_seconds`` for them to finish.

        Inline mode extracts them here, before returning, adding what consent refused to
        ``dropped`` when given. Returns the promoted job ids (``[]``
        when this is not a first turn, in inline mode, or when the queue is unreachable:
        memory never breaks the chat turn).
        """
        if not self._catching_up(state):
            return []
        if self.mode == "inline":
            try:
                refused = run_steps(self.inline.tail_steps(config))
                if dropped is not None:
                    dropped.extend(refused)
            except Exception as exc:
                return self._catch_up_failed(exc)
            return []
        background = self._background()
        queue = background.queue()
        if queue is None:
            return []
        try:
            ids = queue.promote_tails(
                EXTRACT_JOB, thread_id_of(config), self.namespaces.resolve(config)
            )
            if ids:
                background.wake(queue, lambda: self._new_worker(queue))
            deadline = time.monotonic() + wait_seconds
            while ids and not _settled(queue.statuses(ids), ids) and time.monotonic() < deadline:
                time.sleep(_POLL_SECONDS)
        except psycopg.Error as exc:
            return self._catch_up_failed(exc)
        return ids

    async def acatch_up(
        self,
        state: Mapping[str, Any],
        config: RunnableConfig,
        *,
        wait_seconds: float = 0.0,
        dropped: list[str] | None = None,
    ) -> list[int]:
        """Async :meth:`catch_up`."""
        if not self._catching_up(state):
            return []
        if self.mode == "inline":
            try:
                refused = await arun_steps(self.inline.tail_steps(config))
                if dropped is not None:
                    dropped.extend(refused)
            except Exception as exc:
                return self._catch_up_failed(exc)
            return []
        background = self._background()
        aqueue = await background.aqueue()
        if aqueue is None:  # a sync queue in an async graph: keep the loop free
            return await asyncio.to_thread(self.catch_up, state, config, wait_seconds=wait_seconds)
        try:
            ns = self.namespaces.resolve(config)
            ids = await aqueue.promote_tails(EXTRACT_JOB, thread_id_of(config), ns)
            if ids:
                background.wake(aqueue, lambda: self._new_worker(aqueue))
            deadline = time.monotonic() + wait_seconds
            while (
                ids
                and not _settled(await aqueue.statuses(ids), ids)
                and time.monotonic() < deadline
            ):
                await asyncio.sleep(_POLL_SECONDS)
        except psycopg.Error as exc:
            return self._catch_up_failed(exc)
        return ids

    # -- lifecycle --

    def close(self) -> None:
        """Stop the worker this node started and close the pools it opened from a DSN
        (:meth:`BackgroundExtraction.close`). Queues and pools the app passed in stay open:
        they are the app's to close."""
        if self.background is not None:
            self.background.close()

    async def aclose(self) -> None:
        """Async :meth:`close`: awaits the worker task and the async pool."""
        if self.background is not None:
            await self.background.aclose()


def _dropped(state: Mapping[str, Any], refused: list[str]) -> dict[str, Any]:
    """The state update adding this extraction's refusals to the turn's."""
    if not refused:
        return {}
    return {DROPPED_KEY: [*(state.get(DROPPED_KEY) or []), *refused]}


def _first_turn(span: list[BaseMessage]) -> bool:
    """Whether the thread holds exactly one user message: the turn that starts it."""
    return sum(1 for m in span if m.type == "human") == 1


def _settled(statuses: Mapping[int, str], ids: list[int]) -> bool:
    # A purged job is missing from ``statuses``: it finished long ago.
    return all(statuses.get(i, "done") in _SETTLED for i in ids)


def _enqueue_failed(exc: Exception) -> None:
    # Memory must not break the chat turn. The watermark did not move, so the next turn
    # enqueues these messages again: nothing is lost.
    logger.warning("extract: enqueue failed (%s); the next turn retries it", exc)


def create_extract_node(
    model: Any,
    /,
    *,
    mode: Mode | None = None,
    every_n_messages: int = 4,
    debounce_seconds: float | None = None,
    namespaces: MemoryNamespaces | None = None,
    queue: BackgroundExtraction | JobQueue | AsyncJobQueue | str | None = None,
    store: BaseStore | None = None,
    similar_limit: int = 8,
    redaction: RedactionPolicy | None = DEFAULT_POLICY,
    start_worker: bool = True,
    max_attempts: int = 5,
    idle_seconds: float | None = DEFAULT_IDLE_SECONDS,
    on_error: OnError = "degrade",
) -> MemoryNode:
    """The extract node (sync and async), for ``StateGraph.add_node``.

    - ``model``: a chat model, an ``init_chat_model`` string, or an extractor such as
      :class:`~langmem_vault.offline._extractor.OfflineExtractor`;
    - ``mode``: ``"background"`` (enqueue a durable job; needs ``queue``) or ``"inline"``;
      the default, ``None``, is background when a ``queue`` is given, else inline (the same
      default as ``build_memory_graph`` and ``add_memory``);
    - ``every_n_messages``: extract once this many messages are new (``config
      ["configurable"]["extract_now"] = True`` extracts whatever is new at once);
    - ``debounce_seconds``: background: a job waits this long for more turns to merge into
      it (default 2 s); inline: the least time between two extractions of a thread (default 0);
    - ``queue``: a ``JobQueue``, ``AsyncJobQueue``, DSN or ``BackgroundExtraction`` (which
      then decides ``start_worker`` itself); ``start_worker`` starts an
      :class:`~langmem_vault.jobs._worker.ExtractionWorker` in this process on first use (turn
      it off when workers run elsewhere);
    - ``redaction``: the PII policy applied to every proposal before anything is stored
      (:func:`langmem_vault.privacy.redact`); ``None`` turns redaction off;
    - ``idle_seconds``: a tail shorter than ``every_n_messages`` is extracted as soon as the
      same user starts a new thread, or (background mode) once the thread has been idle this
      long; ``None`` leaves short tails until the thread reaches the threshold;
    - ``on_error``: ``"degrade"`` (default): a failure is reported and the turn goes on
      (:mod:`langmem_vault.nodes._degrade`); ``"raise"`` raises it.

    >>> node = create_extract_node("openai:gpt-4o-mini", queue=dsn)  # doctest: +SKIP
    >>> builder.add_node("extract", node)                            # doctest: +SKIP
    """
    impl = _ExtractNode(
        model,
        mode=mode,
        every_n_messages=every_n_messages,
        debounce_seconds=debounce_seconds,
        namespaces=namespaces or MemoryNamespaces(),
        queue=queue,
        store=store,
        similar_limit=similar_limit,
        redaction=redaction,
        start_worker=start_worker,
        max_attempts=max_attempts,
        idle_seconds=idle_seconds,
        on_error=on_error,
    )
    return MemoryNode(impl, name="extract")
