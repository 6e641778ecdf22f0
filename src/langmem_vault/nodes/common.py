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

from langmem_vault.extraction.protocol import load_model

__all__ = ["MemoryNode", "load_model", "resolve_store"]


def resolve_store(store: BaseStore | None) -> BaseStore:
    """The node's store: the one given to the factory, else the graph's (``compile(store=)``)."""
    if store is not None:
        return store
    try:
        found = get_store()
    except RuntimeError:
        found = None
    if found is None:
        raise ValueError(
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
