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
:class:`CatchUpThenInject` (a graph wired by hand does the same), so a one-exchange chat is
remembered in the next one too. With ``idle_seconds=None`` short tails wait until their
thread reaches the threshold, in both modes.

Background mode needs Postgres for the queue: pass ``queue=`` (a ``JobQueue``, an
``AsyncJobQueue``, a DSN string, or a :class:`~langmem_vault.jobs._background.BackgroundExtraction`
that owns the pool opened from a DSN and the worker). Without one the node runs inline and
logs that once, so the same graph works on ``InMemoryStore``. Both drivers run one body of
steps (``_background_steps``, ``_inline_steps``), so sync and async runs do the same things in
the same order.

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
from datetime import UTC, datetime
from typing import Any, Literal

import psycopg
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchOp

from langmem_vault._run_config import RunConfigError, config_value
from langmem_vault.db._steps import Call, Step, Steps, arun_steps, run_steps
from langmem_vault.db._store_plans import Batch
from langmem_vault.extraction._apply import aapply, apply
from langmem_vault.extraction._messages import (
    content_messages,
    deserialize_span,
    message_id,
    parse_time,
    serialize_span,
    with_time,
)
from langmem_vault.extraction._payload import (
    EXTRACT_JOB,
    WATERMARK_NAMESPACE,
    namespaces_from_payload,
    namespaces_payload,
    payload_builder,
)
from langmem_vault.extraction._protocol import as_extractor
from langmem_vault.extraction._span import aextract_span, extract_span
from langmem_vault.jobs._background import BackgroundExtraction
from langmem_vault.jobs._queue import AsyncJobQueue, JobQueue
from langmem_vault.jobs._worker import ExtractionWorker
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces, tails_namespace
from langmem_vault.nodes._common import MemoryNode, aobserved, observed, resolve_store, run_user
from langmem_vault.nodes._degrade import Degrade, MissingStateKeyError, OnError
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy

logger = logging.getLogger("langmem_vault.extract")

#: config["configurable"] key that makes the node extract now, below the threshold
FLUSH_KEY = "extract_now"
#: the state key holding what consent refused this turn (reasons, never text)
DROPPED_KEY = "memory_dropped"
DEFAULT_BACKGROUND_DEBOUNCE = 2.0
DEFAULT_IDLE_SECONDS = 300.0
#: how long a new thread's first turn waits for the user's caught-up tails (background mode)
DEFAULT_CATCH_UP_SECONDS = 5.0
#: how often a catch-up that waits polls the promoted jobs
_POLL_SECONDS = 0.05
_SETTLED = ("done", "failed")
#: how many of the user's other threads' tails a new thread extracts (inline mode), per turn:
#: each is an extraction call the first answer waits for; the rest wait for the next thread
MAX_TAILS = 5
#: a tail nobody caught up is dropped after this long (where the store has TTLs): it holds
#: the raw messages, as a job payload does, and the checkpointer keeps the thread anyway
TAIL_TTL_MINUTES = 30 * 24 * 60.0

Mode = Literal["background", "inline"]

__all__ = [
    "DEFAULT_CATCH_UP_SECONDS",
    "DROPPED_KEY",
    "FLUSH_KEY",
    "OBSERVED_AT_KEY",
    "CatchUpThenInject",
    "create_extract_node",
]


# --- the node ----------------------------------------------------------------------------------


class MissingThreadIdError(RunConfigError, KeyError):
    """The run has no ``thread_id``: the watermark has no thread to belong to."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


class AsyncQueueInSyncRunError(RunConfigError, TypeError):
    """A sync run of a node given an ``AsyncJobQueue``: the app's wiring, not an outage."""


def _thread_id(config: RunnableConfig) -> str:
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if not thread_id:
        raise MissingThreadIdError(
            "extract needs config['configurable']['thread_id'] to keep its per-thread "
            "watermark; compile the graph with a checkpointer and pass a thread_id"
        )
    return str(thread_id)


#: config["configurable"] (or run context) key: when the run's messages were said (a
#: datetime or an ISO string; an imported conversation's session date), for the messages
#: that carry no time of their own
OBSERVED_AT_KEY = "observed_at"


class ObservedAtError(RunConfigError, ValueError):
    """A session date in the run config that is no time."""


def _session_time(config: RunnableConfig) -> datetime:
    value = config_value(OBSERVED_AT_KEY, config)
    if value is None:
        return datetime.now(UTC)
    said = parse_time(value)
    if said is None:
        raise ObservedAtError(
            f"{OBSERVED_AT_KEY}: expected a datetime or an ISO date, got {value!r}"
        )
    return said


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
        default_debounce = DEFAULT_BACKGROUND_DEBOUNCE if self.mode == "background" else 0.0
        self.debounce = default_debounce if debounce_seconds is None else debounce_seconds

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
        said = _session_time(config)
        return [with_time(m, said) for m in span]

    def _min_new(self, config: RunnableConfig) -> int:
        flush = bool((config.get("configurable") or {}).get(FLUSH_KEY))
        return 1 if flush else self.every_n

    def _new_inline(
        self, unseen: list[BaseMessage], mark: dict[str, Any] | None, min_new: int
    ) -> bool:
        """Whether the thread's unseen messages are extracted now."""
        if len(unseen) < min_new:
            return False
        last = (mark or {}).get("last_run")
        if self.debounce and last and min_new > 1:
            age = (datetime.now(UTC) - datetime.fromisoformat(last)).total_seconds()
            if age < self.debounce:
                return False  # too soon; these messages wait for the next run
        return True

    @staticmethod
    def _mark(message_ids: list[str]) -> dict[str, Any]:
        return {"message_ids": message_ids, "last_run": datetime.now(UTC).isoformat()}

    # -- inline: one body of steps for both drivers --

    def _extract_step(
        self, store: BaseStore, messages: list[BaseMessage], ns: ResolvedNamespaces, thread_id: str
    ) -> Step:
        """Extract ``messages`` of ``thread_id`` and apply the result; the step's result is
        what consent refused (reasons)."""
        kwargs: dict[str, Any] = {
            "namespaces": ns,
            "thread_id": thread_id,
            "similar_limit": self.similar_limit,
            "redaction": self.redaction,
        }

        def sync() -> list[str]:
            checked = extract_span(store, self.extractor, messages, **kwargs)
            return apply(store, checked.extraction, ns).dropped

        async def asyn() -> list[str]:
            checked = await aextract_span(store, self.extractor, messages, **kwargs)
            return (await aapply(store, checked.extraction, ns)).dropped

        return Call(sync, asyn)

    def _inline_steps(self, span: list[BaseMessage], config: RunnableConfig) -> Steps[list[str]]:
        """Extract the thread's unseen messages once ``every_n_messages`` are new; until then
        keep them as the thread's tail, which the user's next new thread extracts. Returns
        what consent refused."""
        thread_id = _thread_id(config)
        ns = self.namespaces.resolve(config)
        store = self._store()
        tails = tails_namespace(ns.semantic)
        (mark_item,) = yield Batch([GetOp(WATERMARK_NAMESPACE, thread_id)], store)
        mark = mark_item.value if mark_item else None
        done = set((mark or {}).get("message_ids", []))
        unseen = [m for m in span if message_id(m) not in done]
        if not self._new_inline(unseen, mark, self._min_new(config)):
            if unseen and self.idle_seconds is not None:
                tail = {
                    "messages": serialize_span(unseen),
                    "message_ids": [message_id(m) for m in unseen],
                    "namespaces": namespaces_payload(ns),  # where its facts go
                }
                ttl = TAIL_TTL_MINUTES if store.supports_ttl else None
                yield Batch([PutOp(tails, thread_id, tail, index=False, ttl=ttl)], store)
            return []
        dropped: list[str] = yield self._extract_step(store, unseen, ns, thread_id)
        # Only ids still in state are kept: removed messages cannot come back, so the
        # watermark stays as small as the thread's state.
        ops: list[Op] = [
            PutOp(
                WATERMARK_NAMESPACE,
                thread_id,
                self._mark([message_id(m) for m in span]),
                index=False,
            )
        ]
        if self.idle_seconds is not None:
            ops.append(PutOp(tails, thread_id, None))
        yield Batch(ops, store)
        return dropped

    def _tail_steps(self, config: RunnableConfig) -> Steps[list[str]]:
        """Extract the tails of the user's other threads, oldest first; each tail's ids join
        its thread's watermark, so the thread never extracts them again. Returns what consent
        refused."""
        thread_id = _thread_id(config)
        ns = self.namespaces.resolve(config)
        store = self._store()
        tails = tails_namespace(ns.semantic)
        (found,) = yield Batch([SearchOp(tails, limit=MAX_TAILS + 1)], store)
        others = [i for i in found if i.key != thread_id]
        dropped: list[str] = []
        for item in sorted(others, key=lambda i: i.updated_at)[:MAX_TAILS]:
            messages = deserialize_span(item.value["messages"])
            target = namespaces_from_payload(item.value) if "namespaces" in item.value else ns
            dropped += yield self._extract_step(store, messages, target, item.key)
            done = item.value["message_ids"]
            (mark, now) = yield Batch(
                [GetOp(WATERMARK_NAMESPACE, item.key), GetOp(tails, item.key)], store
            )
            seen = mark.value["message_ids"] if isinstance(mark, Item) else []
            ops: list[Op] = [
                PutOp(
                    WATERMARK_NAMESPACE,
                    item.key,
                    self._mark(list(dict.fromkeys([*seen, *done]))),
                    index=False,
                )
            ]
            # A tail its thread rewrote meanwhile (a new turn) stays for next time.
            if isinstance(now, Item) and now.value["message_ids"] == done:
                ops.append(PutOp(tails, item.key, None))
            yield Batch(ops, store)
        return dropped

    # -- background: one body of steps for both drivers --

    def _background_steps(self, state: dict[str, Any], config: RunnableConfig) -> Steps[None]:
        """On a thread's first turn catch up with the user's other threads, then enqueue the
        new messages and wake this process's worker."""
        background = self._background()
        thread_id = _thread_id(config)
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
            return _dropped(state, run_steps(self._inline_steps(self._span(state, config), config)))
        try:
            run_steps(self._background_steps(state, config))
        except psycopg.Error as exc:
            _enqueue_failed(exc)
        return {}

    async def _ainvoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        if self.mode == "inline":
            refused = await arun_steps(self._inline_steps(self._span(state, config), config))
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
                refused = run_steps(self._tail_steps(config))
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
                EXTRACT_JOB, _thread_id(config), self.namespaces.resolve(config)
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
                refused = await arun_steps(self._tail_steps(config))
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
            ids = await aqueue.promote_tails(EXTRACT_JOB, _thread_id(config), ns)
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


class CatchUpThenInject:
    """An inject node that first lets ``extract`` catch up with the user's other threads (on a
    thread's first turn), so their short tails are in the memory it injects. The graph
    builders and the agent middleware (``before_agent``) inject through it; a graph wired by
    hand does the same:

    >>> from langmem_vault.nodes import create_inject_node
    >>> from langmem_vault.nodes._common import MemoryNode
    >>> from langmem_vault.offline._extractor import OfflineExtractor
    >>> extract = create_extract_node(OfflineExtractor(), mode="inline")
    >>> inject = create_inject_node()
    >>> MemoryNode(CatchUpThenInject(inject.node, extract), name="inject").name
    'inject'
    """

    def __init__(
        self, inject: Any, extract: MemoryNode, *, wait_seconds: float = DEFAULT_CATCH_UP_SECONDS
    ) -> None:
        self.inject = inject
        self.extract: _ExtractNode = extract.node
        self.wait_seconds = wait_seconds

    def invoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        dropped: list[str] = []
        self.extract.catch_up(state, config, wait_seconds=self.wait_seconds, dropped=dropped)
        update: dict[str, Any] = self.inject.invoke(state, config)
        return {**update, DROPPED_KEY: dropped}  # the turn's count starts here

    async def ainvoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        dropped: list[str] = []
        await self.extract.acatch_up(state, config, wait_seconds=self.wait_seconds, dropped=dropped)
        update: dict[str, Any] = await self.inject.ainvoke(state, config)
        return {**update, DROPPED_KEY: dropped}


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
