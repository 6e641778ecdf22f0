"""What every memory node shares: the node runnable, the store it writes to, its chat model.

>>> from langgraph.store.memory import InMemoryStore
>>> store = InMemoryStore()
>>> resolve_store(store) is store
True
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.config import get_store
from langgraph.store.base import BaseStore

from langmem_vault._run_config import RunConfigError
from langmem_vault.extraction._protocol import load_model

__all__ = ["MemoryNode", "MissingStoreError", "load_model", "resolve_store"]


class MissingStoreError(RunConfigError, ValueError):
    """A memory node has no store: the graph is wired wrong, so it raises whatever the
    node's ``on_error`` says."""


def resolve_store(store: BaseStore | None) -> BaseStore:
    """The node's store: the one given to the factory, else the graph's (``compile(store=)``)."""
    if store is not None:
        return store
    try:
        found = get_store()
    except RuntimeError:
        found = None
    if found is None:
        raise MissingStoreError(
            "memory nodes need a store: pass store=... to the node factory or compile the "
            "graph with builder.compile(store=...)"
        )
    return found


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
