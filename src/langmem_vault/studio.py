"""The LangGraph server's store and checkpointer, and the models of the Studio graphs.

``langgraph.json`` at the repository root points ``langgraph dev`` (and LangGraph Studio) at
these, so the server's own store API (``/store/items``, ``/store/items/search``,
``/store/namespaces``), Studio's memory view and every thread's checkpoints live in
VaultStore and VaultSaver::

    "store": {"path": "langmem_vault.studio.vault_store"},
    "checkpointer": {"path": "langmem_vault.studio.vault_saver"}

Both are async context managers the server enters once at start and leaves at shutdown. They
connect to ``$LANGMEM_VAULT_DSN``, else the embedded server (``$LANGMEM_VAULT_DATA_DIR``, else
the per-user data directory), in schema ``$LANGMEM_VAULT_SCHEMA`` (default ``langmem_vault``).
``$LANGMEM_VAULT_READ_DSN`` (a streaming replica) takes the store's reads (store/_replicas.py).
Everything slow (the embedded server's start, the local embedding model) loads in a worker
thread: the dev server's blocking-call detector (BlockBuster) never fires. When the last of
the two closes (a reload, Ctrl-C, SIGTERM), the pools close, what :func:`close_on_shutdown`
registered stops (the background graph's worker), and an embedded server this process
started stops: no orphan postgres. :func:`job_queue` gives the background graph a durable job
queue on the store's pool and schema.

:func:`studio_models` picks the graphs' models: offline (:class:`RecallChatModel` and
:class:`OfflineExtractor`) unless ``$LANGMEM_VAULT_MODEL`` names an ``init_chat_model``
string or ``$OPENAI_API_KEY`` is set (then ``openai:gpt-4o-mini``); ``LANGMEM_VAULT_OFFLINE=1``
forces offline.

>>> models = studio_models({})
>>> type(models.chat).__name__, type(models.extractor).__name__, models.summarizer
('RecallChatModel', 'OfflineExtractor', None)
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException

from langmem_vault.checkpointers import AsyncVaultSaver, ThreadAccessError
from langmem_vault.db._embedded import DSN_ENV, default_data_dir, release
from langmem_vault.db._migrations import DEFAULT_SCHEMA
from langmem_vault.jobs._queue import AsyncJobQueue
from langmem_vault.store import AsyncVaultStore

__all__ = [
    "MODEL_ENV",
    "OFFLINE_ENV",
    "SCHEMA_ENV",
    "StudioModels",
    "ThreadRefused",
    "close_on_shutdown",
    "job_queue",
    "studio_models",
    "vault_saver",
    "vault_store",
    "warm_up",
]

MODEL_ENV = "LANGMEM_VAULT_MODEL"
OFFLINE_ENV = "LANGMEM_VAULT_OFFLINE"
SCHEMA_ENV = "LANGMEM_VAULT_SCHEMA"
DEFAULT_OPENAI_MODEL = "openai:gpt-4o-mini"

logger = logging.getLogger("langmem_vault.studio")


# --- models ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudioModels:
    """What the Studio graphs run with: the chat model, the extractor, the summarizer."""

    chat: Any
    extractor: Any
    summarizer: Any
    #: "offline", or the init_chat_model string in use
    label: str


def studio_models(environ: Mapping[str, str] | None = None) -> StudioModels:
    """The models named by the environment (see the module docstring).

    A model string that does not load raises (a missing provider package, say): a server
    quietly answering offline when a real model was asked for would mislead.
    """
    env = os.environ if environ is None else environ
    name = env.get(MODEL_ENV) or (DEFAULT_OPENAI_MODEL if env.get("OPENAI_API_KEY") else None)
    if env.get(OFFLINE_ENV, "").lower() in ("1", "true", "yes") or not name:
        from langmem_vault.offline import OfflineExtractor, RecallChatModel

        return StudioModels(RecallChatModel(), OfflineExtractor(), None, "offline")
    from langmem_vault.nodes._common import load_model

    try:
        chat = load_model(name)
    except Exception as exc:
        raise RuntimeError(
            f"could not load the model {name!r} (from ${MODEL_ENV} or $OPENAI_API_KEY): "
            f"{exc}. Install its provider package (pip install 'langmem-vault[openai]' for "
            f"openai:...), or set {OFFLINE_ENV}=1 to run the Studio graphs offline."
        ) from exc
    return StudioModels(chat, chat, chat, name)


def warm_up(models: StudioModels) -> None:
    """Load the models' files now (spaCy for the offline extractor, Presidio's engines for
    PII redaction), so the first run is fast and a broken install fails when the graph loads.

    The server imports graph modules in a worker thread, so calling this at import keeps the
    event loop free; it raises rather than logs when a model does not load.
    """
    warm = getattr(models.extractor, "warm_up", None)
    if warm is not None:
        warm()
    from langmem_vault.privacy._redaction.pii import preload

    preload()


# --- the server's store and checkpointer -------------------------------------------------------


class _Shared:
    """What the store and the checkpointer share in this process: the embedded server they
    may have started, the store (whose pool the job queue shares), and what must stop before
    the pools close (:func:`close_on_shutdown`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.closers: list[Callable[[], Awaitable[Any]]] = []
        self.store: AsyncVaultStore | None = None

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """One user (the store or the saver) of the database; the last one out stops an
        embedded server this process started (unless another live process still holds it)."""
        with self.lock:
            self.users += 1
        try:
            yield
        finally:
            with self.lock:
                self.users -= 1
                last = self.users == 0
            if last and not os.environ.get(DSN_ENV):
                await asyncio.to_thread(release, default_data_dir())  # pg_ctl waits: a thread

    async def close_registered(self) -> None:
        """Close what :func:`close_on_shutdown` registered (once, whichever of the store and
        the saver goes first), while the pools are still open."""
        with self.lock:
            closers, self.closers = self.closers, []
        for closer in reversed(closers):
            try:
                await closer()
            except Exception:  # shutting down: report it, and go on stopping the rest
                logger.exception("studio: could not close %r", closer)


_shared = _Shared()


def close_on_shutdown(target: Any) -> None:
    """Close ``target`` when the server stops, before the pools close: an object with
    ``aclose()`` (an extract node: its worker task), or a compiled graph, whose memory nodes
    are closed.

    >>> close_on_shutdown(graph)  # in a graphs/ module  # doctest: +SKIP
    """
    from langmem_vault.nodes._common import MemoryNode

    if hasattr(target, "aclose"):
        closers = [target.aclose]
    elif hasattr(target, "builder"):
        specs = target.builder.nodes.values()
        closers = [s.runnable.aclose for s in specs if isinstance(s.runnable, MemoryNode)]
    else:
        raise TypeError(f"close_on_shutdown: {type(target).__name__} has no aclose()")
    with _shared.lock:
        _shared.closers.extend(closers)


def job_queue() -> AsyncJobQueue:
    """The durable job queue for background extraction, on the server store's pool and schema
    (its tables are created with the store's). Needs :func:`vault_store` to be open, as it is
    when ``langgraph dev`` loads the graphs (the store is entered first)."""
    store = _shared.store
    if store is None:
        raise RuntimeError(
            "the Studio job queue shares the server's store, which is not open: serve the "
            'graph with langgraph.json\'s "store": {"path": '
            '"langmem_vault.studio.vault_store"}, or enter vault_store() first'
        )
    return AsyncJobQueue(store.conn, schema=store.schema)


@contextmanager
def _stop_reloader_on_error() -> Iterator[None]:
    """``langgraph dev`` runs the server in a child of uvicorn's reloader, and the reloader
    outlives a child that could not start: it waits for a file change, which an unreachable
    database never brings, and the command hangs with the error scrolled away. When the store
    or the saver cannot open in such a child, stop the reloader too: the command exits."""
    try:
        yield
    except Exception:
        parent = multiprocessing.parent_process()
        if parent is not None and parent.pid is not None and "uvicorn" in sys.modules:
            logger.error("studio: the server cannot start; stopping langgraph dev's reloader")
            os.kill(parent.pid, signal.SIGTERM)
        raise


#: a streaming replica's DSN: the server store's reads go there
READ_DSN_ENV = "LANGMEM_VAULT_READ_DSN"


def _schema() -> str:
    return os.environ.get(SCHEMA_ENV) or DEFAULT_SCHEMA


@asynccontextmanager
async def vault_store() -> AsyncIterator[AsyncVaultStore]:
    """The server's store: :class:`AsyncVaultStore` with local embeddings (all-MiniLM-L6-v2,
    384 dimensions, on each item's ``text``) and hybrid search; its tables and the job
    queue's are created if missing."""
    from langmem_vault.embeddings import default_index

    async with AsyncExitStack() as stack:
        with _stop_reloader_on_error():
            await stack.enter_async_context(_shared.held())
            index = await asyncio.to_thread(default_index)  # reads the model: seconds
            store = await stack.enter_async_context(
                AsyncVaultStore.from_conn_string(
                    None,
                    index=index,
                    schema=_schema(),
                    read_conn_string=os.environ.get(READ_DSN_ENV) or None,
                )
            )
            await store.setup()
            await AsyncJobQueue(store.conn, schema=store.schema).setup()
        stack.push_async_callback(_shared.close_registered)  # runs before the pool closes
        _shared.store = store
        try:
            yield store
        finally:
            _shared.store = None


class ThreadRefused(ThreadAccessError, HTTPException):
    """A :class:`ThreadAccessError` as the LangGraph server shows it. The server reports a
    failed run's exception as "An internal error occurred" unless it is one of a few kinds,
    ``HTTPException`` among them: as one (403) the refusal reaches the client with its
    message, and it stays a ``ThreadAccessError`` (a ``PermissionError``) for other code."""

    def __init__(self, message: str) -> None:
        ThreadAccessError.__init__(self, message)
        self.status_code, self.detail, self.headers = 403, message, None

    def __str__(self) -> str:
        return self.detail


class _ServerSaver(AsyncVaultSaver):
    """The server's saver: a thread another user owns is refused with :class:`ThreadRefused`."""

    async def _direct(self, make: Callable[[], Any]) -> Any:
        try:
            return await super()._direct(make)
        except ThreadAccessError as exc:
            raise ThreadRefused(str(exc)) from exc


@asynccontextmanager
async def vault_saver() -> AsyncIterator[AsyncVaultSaver]:
    """The server's checkpointer: :class:`AsyncVaultSaver`, tables created if missing; a
    thread another user owns is refused with a message the client can read."""
    async with AsyncExitStack() as stack:
        with _stop_reloader_on_error():
            await stack.enter_async_context(_shared.held())
            saver = await stack.enter_async_context(
                _ServerSaver.from_conn_string(None, schema=_schema())
            )
            await saver.setup()
        stack.push_async_callback(_shared.close_registered)
        yield saver
