"""The reconcile node: applies ``state["extraction"]`` to the store, then clears it.

The rules live in :mod:`langmem_vault.extraction._reconcile` (shared with the extract node and
the background worker); this module is the graph seam for apps that produce their own
extraction.

>>> create_reconcile_node(confirm_threshold=0.7).name
'reconcile'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from langmem_vault.extraction._reconcile import (
    ReconcileReport,
    aapply_extraction,
    apply_extraction,
    reconcile_plan,
)
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.nodes._common import MemoryNode, aobserved, observed, resolve_store
from langmem_vault.nodes._degrade import Degrade, OnError

__all__ = [
    "ReconcileReport",
    "aapply_extraction",
    "apply_extraction",
    "create_reconcile_node",
    "reconcile_plan",
]


class ReconcileNode:
    """Applies ``state["extraction"]`` (if any) and clears it. Extract in inline mode
    reconciles by itself, so in the reference graph this node usually has nothing to do; it
    is the seam for apps that produce their own extraction."""

    def __init__(
        self,
        *,
        store: BaseStore | None,
        namespaces: MemoryNamespaces,
        similarity_threshold: float,
        confirm_threshold: float,
        guard: Degrade | None = None,
    ) -> None:
        self.guard = guard or Degrade("reconcile")
        self.store = store
        self.namespaces = namespaces
        self.similarity_threshold = similarity_threshold
        self.confirm_threshold = confirm_threshold
        self.last_report: ReconcileReport | None = None

    def invoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Apply the pending extraction synchronously (see :mod:`.degrade` for failures)."""
        return observed(self.guard, self.store, config, lambda: self._invoke(state, config))

    async def ainvoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Apply the pending extraction asynchronously."""
        return await aobserved(self.guard, self.store, config, lambda: self._ainvoke(state, config))

    def _invoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        pending = state.get("extraction")
        if not pending:
            return {}
        self.last_report = apply_extraction(
            resolve_store(self.store),
            pending,
            config=config,
            namespaces=self.namespaces,
            similarity_threshold=self.similarity_threshold,
            confirm_threshold=self.confirm_threshold,
        )
        return {"extraction": None}

    async def _ainvoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        pending = state.get("extraction")
        if not pending:
            return {}
        self.last_report = await aapply_extraction(
            resolve_store(self.store),
            pending,
            config=config,
            namespaces=self.namespaces,
            similarity_threshold=self.similarity_threshold,
            confirm_threshold=self.confirm_threshold,
        )
        return {"extraction": None}


def create_reconcile_node(
    *,
    store: BaseStore | None = None,
    namespaces: MemoryNamespaces | None = None,
    similarity_threshold: float = 0.9,
    confirm_threshold: float = 0.8,
    on_error: OnError = "degrade",
    name: str = "reconcile",
) -> MemoryNode:
    """Build the reconcile node (applies ``state["extraction"]``, then clears it)."""
    for label, value in (
        ("similarity_threshold", similarity_threshold),
        ("confirm_threshold", confirm_threshold),
    ):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{label} must be in [0, 1], got {value}")
    node = ReconcileNode(
        store=store,
        namespaces=namespaces or MemoryNamespaces(),
        similarity_threshold=similarity_threshold,
        confirm_threshold=confirm_threshold,
        guard=Degrade("reconcile", on_error),
    )
    return MemoryNode(node, name=name)
