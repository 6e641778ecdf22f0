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
duplicates.

Background mode needs Postgres for the queue: pass ``queue=`` (a ``JobQueue``, an
``AsyncJobQueue`` or a DSN string). Without one the node runs inline and logs that once, so the
same graph works on ``InMemoryStore``.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.offline.extractor import OfflineExtractor
>>> node = create_extract_node(OfflineExtractor(), mode="inline")
>>> # builder.add_node("extract", node)
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

import psycopg
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from langmem_vault.extraction.apply import aapply, apply
from langmem_vault.extraction.messages import content_messages, message_id
from langmem_vault.extraction.payload import EXTRACT_JOB, WATERMARK_NAMESPACE, payload_builder
from langmem_vault.extraction.protocol import as_extractor
from langmem_vault.extraction.span import aextract_span, extract_span
from langmem_vault.jobs.queue import AsyncJobQueue, JobQueue
from langmem_vault.jobs.worker import ExtractionWorker
from langmem_vault.memory.namespaces import MemoryNamespaces
from langmem_vault.nodes.common import MemoryNode, resolve_store
from langmem_vault.privacy.redaction.policy import DEFAULT_POLICY, RedactionPolicy

logger = logging.getLogger("langmem_vault.extract")

#: config["configurable"] key that makes the node extract now, below the threshold
FLUSH_KEY = "extract_now"
DEFAULT_BACKGROUND_DEBOUNCE = 2.0
DEFAULT_IDLE_SECONDS = 300.0
#: how often a catch-up that waits polls the promoted jobs
_POLL_SECONDS = 0.05
_SETTLED = ("done", "failed")

Mode = Literal["background", "inline"]

__all__ = ["FLUSH_KEY", "create_extract_node"]


# --- the node ----------------------------------------------------------------------------------


def _thread_id(config: RunnableConfig) -> str:
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if not thread_id:
        raise KeyError(
            "extract needs config['configurable']['thread_id'] to keep its per-thread "
            "watermark; compile the graph with a checkpointer and pass a thread_id"
        )
    return str(thread_id)


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
        queue: JobQueue | AsyncJobQueue | str | None,
        store: BaseStore | None,
        similar_limit: int,
        redaction: RedactionPolicy | None,
        start_worker: bool,
        max_attempts: int,
        idle_seconds: float | None = DEFAULT_IDLE_SECONDS,
    ) -> None:
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
        self.start_worker = start_worker
        self.max_attempts = max_attempts
        self._dsn = queue if isinstance(queue, str) else None
        self._queue = queue if isinstance(queue, JobQueue) else None
        self._aqueue = queue if isinstance(queue, AsyncJobQueue) else None
        if mode == "background" and queue is None:
            logger.warning(
                "extract: no job queue given, so extraction runs inline in the node; pass "
                "queue=JobQueue(...)/AsyncJobQueue(...) or a Postgres DSN for background mode"
            )
            self.mode = "inline"
        default_debounce = DEFAULT_BACKGROUND_DEBOUNCE if self.mode == "background" else 0.0
        self.debounce = default_debounce if debounce_seconds is None else debounce_seconds
        self._worker: Any = None
        self._lock = threading.Lock()
        self._aqueue_lock: asyncio.Lock | None = None

    # -- shared pieces --

    def _store(self) -> BaseStore:
        return resolve_store(self.store)

    def _span(self, state: dict[str, Any]) -> list[BaseMessage]:
        messages = state.get("messages")
        if messages is None:
            raise KeyError("extract reads state['messages'], which is missing")
        return content_messages(messages)

    def _min_new(self, config: RunnableConfig) -> int:
        flush = bool((config.get("configurable") or {}).get(FLUSH_KEY))
        return 1 if flush else self.every_n

    def _new_inline(
        self, span: list[BaseMessage], mark: dict[str, Any] | None, min_new: int
    ) -> list[BaseMessage] | None:
        done = set((mark or {}).get("message_ids", []))
        new = [m for m in span if message_id(m) not in done]
        if len(new) < min_new:
            return None
        last = (mark or {}).get("last_run")
        if self.debounce and last and min_new > 1:
            age = (datetime.now(UTC) - datetime.fromisoformat(last)).total_seconds()
            if age < self.debounce:
                return None  # too soon; these messages wait for the next run
        return new

    @staticmethod
    def _mark(span: list[BaseMessage]) -> dict[str, Any]:
        # Only ids still in state are kept: removed messages cannot come back, so the
        # watermark stays as small as the thread's state.
        return {
            "message_ids": [message_id(m) for m in span],
            "last_run": datetime.now(UTC).isoformat(),
        }

    # -- sync --

    def invoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        thread_id = _thread_id(config)
        ns = self.namespaces.resolve(config)
        span = self._span(state)
        if self.mode == "background":
            queue = self._sync_queue()
            if queue is None:
                raise TypeError(
                    "this extract node was given an AsyncJobQueue: run the graph with "
                    "ainvoke/astream, or pass a JobQueue or a DSN for sync runs"
                )
            try:
                queued = queue.enqueue_span(
                    EXTRACT_JOB,
                    thread_id,
                    [message_id(m) for m in span],
                    payload_builder(span, ns),
                    min_new=self._min_new(config),
                    delay_seconds=self.debounce,
                    max_attempts=self.max_attempts,
                    idle_seconds=self.idle_seconds,
                )
                if _first_turn(span):
                    self.catch_up(state, config)
            except psycopg.Error as exc:
                _enqueue_failed(exc)
                return {}
            if queued is not None and self.start_worker:
                self._ensure_thread_worker(queue, self._store())
            return {}
        store = self._store()
        mark_item = store.get(WATERMARK_NAMESPACE, thread_id)
        new = self._new_inline(span, mark_item.value if mark_item else None, self._min_new(config))
        if new is None:
            return {}
        checked = extract_span(
            store,
            self.extractor,
            new,
            namespaces=ns,
            thread_id=thread_id,
            similar_limit=self.similar_limit,
            redaction=self.redaction,
        )
        apply(store, checked.extraction, ns)
        store.put(WATERMARK_NAMESPACE, thread_id, self._mark(span), index=False)
        return {}

    def _sync_queue(self) -> JobQueue | None:
        if self._queue is None and self._dsn is not None:
            with self._lock:
                if self._queue is None:
                    from langmem_vault.db.connection import open_pool

                    self._queue = JobQueue(open_pool(self._dsn, max_size=4))
                    self._queue.setup()
        return self._queue

    def _ensure_thread_worker(self, queue: JobQueue, store: BaseStore) -> None:
        with self._lock:
            if self._worker is None:
                self._worker = ExtractionWorker(
                    queue,
                    store,
                    self.extractor,
                    similar_limit=self.similar_limit,
                    redaction=self.redaction,
                )
                self._worker.start()
        self._worker.wake()

    # -- async --

    async def ainvoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        thread_id = _thread_id(config)
        ns = self.namespaces.resolve(config)
        span = self._span(state)
        if self.mode == "background":
            aqueue = await self._async_queue()
            args = (
                EXTRACT_JOB,
                thread_id,
                [message_id(m) for m in span],
                payload_builder(span, ns),
            )
            kwargs: dict[str, Any] = {
                "min_new": self._min_new(config),
                "delay_seconds": self.debounce,
                "max_attempts": self.max_attempts,
                "idle_seconds": self.idle_seconds,
            }
            if _first_turn(span):
                await self.acatch_up(state, config)
            try:
                if aqueue is not None:
                    queued = await aqueue.enqueue_span(*args, **kwargs)
                    if queued is not None and self.start_worker:
                        self._ensure_task_worker(aqueue, self._store())
                    return {}
                queue = self._sync_queue()
                if queue is not None:  # a sync queue in an async graph: keep the loop free
                    queued = await asyncio.to_thread(queue.enqueue_span, *args, **kwargs)
                    if queued is not None and self.start_worker:
                        self._ensure_thread_worker(queue, self._store())
                    return {}
            except psycopg.Error as exc:
                _enqueue_failed(exc)
                return {}
        store = self._store()
        mark_item = await store.aget(WATERMARK_NAMESPACE, thread_id)
        new = self._new_inline(span, mark_item.value if mark_item else None, self._min_new(config))
        if new is None:
            return {}
        checked = await aextract_span(
            store,
            self.extractor,
            new,
            namespaces=ns,
            thread_id=thread_id,
            similar_limit=self.similar_limit,
            redaction=self.redaction,
        )
        await aapply(store, checked.extraction, ns)
        await store.aput(WATERMARK_NAMESPACE, thread_id, self._mark(span), index=False)
        return {}

    async def _async_queue(self) -> AsyncJobQueue | None:
        if self._aqueue is None and self._dsn is not None:
            from langmem_vault.db.connection import aopen_pool

            # Concurrent first turns must open one pool, not one each (and leak the rest).
            if self._aqueue_lock is None:
                self._aqueue_lock = asyncio.Lock()
            async with self._aqueue_lock:
                if self._aqueue is None:
                    aqueue = AsyncJobQueue(await aopen_pool(self._dsn, max_size=4))
                    await aqueue.setup()
                    self._aqueue = aqueue
        return self._aqueue

    # -- a new thread catches up with the user's earlier ones --

    def _catching_up(self, state: Mapping[str, Any]) -> bool:
        if self.mode != "background" or self.idle_seconds is None:
            return False
        return _first_turn(self._span(dict(state)))

    def catch_up(
        self, state: Mapping[str, Any], config: RunnableConfig, *, wait_seconds: float = 0.0
    ) -> list[int]:
        """On the first turn of a thread, run the user's idle tails (their other threads'
        unextracted messages) now; wait up to ``wait_seconds`` for them to finish.

        Returns the promoted job ids (``[]`` when this is not a first turn, in inline mode, or
        when the queue is unreachable: memory never breaks the chat turn).
        """
        if not self._catching_up(state):
            return []
        queue = self._sync_queue()
        if queue is None:
            return []
        try:
            ids = queue.promote_tails(
                EXTRACT_JOB, _thread_id(config), self.namespaces.resolve(config)
            )
            if ids and self.start_worker:
                self._ensure_thread_worker(queue, self._store())
            deadline = time.monotonic() + wait_seconds
            while ids and not _settled(queue.statuses(ids), ids) and time.monotonic() < deadline:
                time.sleep(_POLL_SECONDS)
        except psycopg.Error as exc:
            logger.warning("extract: catch-up failed (%s); the idle timer still runs them", exc)
            return []
        return ids

    async def acatch_up(
        self, state: Mapping[str, Any], config: RunnableConfig, *, wait_seconds: float = 0.0
    ) -> list[int]:
        """Async :meth:`catch_up`."""
        if not self._catching_up(state):
            return []
        aqueue = await self._async_queue()
        if aqueue is None:  # a sync queue in an async graph: keep the loop free
            return await asyncio.to_thread(self.catch_up, state, config, wait_seconds=wait_seconds)
        try:
            ns = self.namespaces.resolve(config)
            ids = await aqueue.promote_tails(EXTRACT_JOB, _thread_id(config), ns)
            if ids and self.start_worker:
                self._ensure_task_worker(aqueue, self._store())
            deadline = time.monotonic() + wait_seconds
            while (
                ids
                and not _settled(await aqueue.statuses(ids), ids)
                and time.monotonic() < deadline
            ):
                await asyncio.sleep(_POLL_SECONDS)
        except psycopg.Error as exc:
            logger.warning("extract: catch-up failed (%s); the idle timer still runs them", exc)
            return []
        return ids

    # -- lifecycle --

    def close(self) -> None:
        """Stop the worker this node started and close the pools it opened from a DSN.

        Queues and pools the app passed in stay open: they are the app's to close.
        """
        with self._lock:
            worker, self._worker = self._worker, None
            queue = self._queue if self._dsn is not None else None
            aqueue = self._aqueue if self._dsn is not None else None
            if self._dsn is not None:
                self._queue = None
        if worker is not None:
            worker.close()
        if queue is not None:
            queue.db.conn.close()
        if aqueue is not None:  # an async pool closes on its loop: aclose() does that
            logger.warning("extract: close() cannot close an async pool; await aclose()")

    async def aclose(self) -> None:
        """Async :meth:`close`: awaits the worker task and the async pool."""
        worker = self._worker
        if worker is not None:
            worker.stop()
            await worker.astop()
        aqueue = self._aqueue if self._dsn is not None else None
        if aqueue is not None:
            self._aqueue = None
            await aqueue.db.conn.close()
        self.close()

    def _ensure_task_worker(self, queue: AsyncJobQueue, store: BaseStore) -> None:
        worker = self._worker
        if worker is None or not worker.task_alive():
            worker = ExtractionWorker(
                queue,
                store,
                self.extractor,
                similar_limit=self.similar_limit,
                redaction=self.redaction,
            )
            worker.astart()
            self._worker = worker
        worker.wake()


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
    queue: JobQueue | AsyncJobQueue | str | None = None,
    store: BaseStore | None = None,
    similar_limit: int = 8,
    redaction: RedactionPolicy | None = DEFAULT_POLICY,
    start_worker: bool = True,
    max_attempts: int = 5,
    idle_seconds: float | None = DEFAULT_IDLE_SECONDS,
) -> MemoryNode:
    """The extract node (sync and async), for ``StateGraph.add_node``.

    - ``model``: a chat model, an ``init_chat_model`` string, or an extractor such as
      :class:`~langmem_vault.offline.extractor.OfflineExtractor`;
    - ``mode``: ``"background"`` (enqueue a durable job; needs ``queue``) or ``"inline"``;
      the default, ``None``, is background when a ``queue`` is given, else inline (the same
      default as ``build_memory_graph`` and ``add_memory``);
    - ``every_n_messages``: extract once this many messages are new (``config
      ["configurable"]["extract_now"] = True`` extracts whatever is new at once);
    - ``debounce_seconds``: background: a job waits this long for more turns to merge into
      it (default 2 s); inline: the least time between two extractions of a thread (default 0);
    - ``queue``: a ``JobQueue``, ``AsyncJobQueue`` or DSN; ``start_worker`` starts an
      :class:`~langmem_vault.jobs.worker.ExtractionWorker` in this process on first use (turn
      it off when workers run elsewhere);
    - ``redaction``: the PII policy applied to every proposal before anything is stored
      (:func:`langmem_vault.privacy.redact`); ``None`` turns redaction off;
    - ``idle_seconds`` (background mode): a tail shorter than ``every_n_messages`` is
      extracted once the thread has been idle this long, or as soon as the same user starts a
      new thread; ``None`` leaves short tails until the thread reaches the threshold.

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
    )
    return MemoryNode(impl, name="extract")
