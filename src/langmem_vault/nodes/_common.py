"""What every memory node shares: the node runnable, the store it writes to, its chat model.

>>> from langgraph.store.memory import InMemoryStore
>>> store = InMemoryStore()
>>> resolve_store(store) is store
True
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.config import get_store
from langgraph.store.base import BaseStore

from langmem_vault._run_config import RunConfigError, config_value
from langmem_vault.extraction._protocol import load_model
from langmem_vault.memory._recall.accounting import aobserve, observe
from langmem_vault.nodes._degrade import Degrade

__all__ = [
    "MemoryNode",
    "MissingStoreError",
    "aobserved",
    "load_model",
    "observed",
    "resolve_store",
    "run_user",
]


class MissingStoreError(RunConfigError, ValueError):
    """A memory node has no store: the graph is wired wrong, so it raises whatever the
    node's ``on_error`` says."""


def resolve_store(store: BaseStore | None) -> BaseStore:
    """The node's store: the one given to the factory, else the graph's (``compile(store=)``)."""
    if store is not None:
        return store
    try:
        found = get_store()
    except (RuntimeError, KeyError):  # outside a runnable, or a config with no graph runtime
        found = None
    if found is None:
        raise MissingStoreError(
            "memory nodes need a store: pass store=... to the node factory or compile the "
            "graph with builder.compile(store=...)"
        )
    return found


def run_user(config: Mapping[str, Any] | None) -> str | None:
    """The run's user id, or None when it has none (the stage then fails or skips, and
    says so)."""
    try:
        user = config_value("user_id", config)
    except RunConfigError:
        return None
    return None if user is None else str(user)


def _accounted(
    store: BaseStore | None, config: Mapping[str, Any] | None
) -> tuple[BaseStore | None, str | None]:
    """The store and user a stage's accounting goes to (None, None when the run lacks one)."""
    try:
        found = resolve_store(store)
    except MissingStoreError:
        return None, None
    return found, run_user(config)


def observed(
    guard: Degrade,
    store: BaseStore | None,
    config: Any,
    call: Callable[[], Mapping[str, Any]],
    then: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """A node's body (and its bookkeeping ``then``: :meth:`Degrade.run`) run by its
    ``guard``, traced, timed and accounted as the guard's stage
    (:func:`~langmem_vault.memory._recall.accounting.observe`)."""
    found, user = _accounted(store, config)
    with observe(guard.stage, found, user):
        return guard.run(call, then)


async def aobserved(
    guard: Degrade,
    store: BaseStore | None,
    config: Any,
    call: Callable[[], Awaitable[Mapping[str, Any]]],
    then: Callable[[], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """Async :func:`observed`."""
    found, user = _accounted(store, config)
    async with aobserve(guard.stage, found, user):
        return await guard.arun(call, then)


class MemoryNode(RunnableLambda[Any, dict[str, Any]]):
    """A node runnable with native sync and async paths; ``.node`` is the node object.

    LangGraph runs ``invoke`` under ``graph.invoke``/``stream`` and ``ainvoke`` under
    ``graph.ainvoke``/``astream``, so async graphs never block on a thread.
    """

    def __init__(self, node: Any, *, name: str) -> None:
        super().__init__(node.invoke, afunc=node.ainvoke, name=name)
        self.node = node

    def close(self) -> None:
        """Stop what the node started (the extract node's worker and the pool it opened from
        a DSN); a no-op for nodes that start nothing.

        >>> with create_extract_node(model, queue=dsn) as extract:  # doctest: +SKIP
        ...     graph = builder.add_node("extract", extract).compile()
        """
        close = getattr(self.node, "close", None)
        if close is not None:
            close()

    async def aclose(self) -> None:
        """Async :meth:`close` (for a worker task and pool on the running loop)."""
        aclose = getattr(self.node, "aclose", None)
        if aclose is not None:
            await aclose()
        else:
            self.close()

    def __enter__(self) -> MemoryNode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MemoryNode:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
