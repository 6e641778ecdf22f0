"""The memory nodes: inject, respond, extract, reconcile, compact.

Each factory returns a runnable with native sync and async paths, ready for
``StateGraph.add_node``. Imports are lazy so that importing one node does not load the others'
dependencies (the job queue, spaCy...).

>>> from langmem_vault.nodes import create_inject_node
"""

from __future__ import annotations

from typing import Any

from langmem_vault._lazy import LazyNames

__all__ = [
    "CatchUpThenInject",
    "ObservedAtError",
    "aapply_extraction",
    "apply_extraction",
    "create_compact_node",
    "create_extract_node",
    "create_inject_node",
    "create_reconcile_node",
    "create_respond_node",
    "memory_system_message",
]

_WHERE = {
    "langmem_vault.nodes._inject": ("create_inject_node",),
    "langmem_vault.nodes._respond": ("create_respond_node", "memory_system_message"),
    "langmem_vault.nodes._reconcile": (
        "create_reconcile_node",
        "apply_extraction",
        "aapply_extraction",
    ),
    "langmem_vault.nodes._extract": ("create_extract_node",),
    "langmem_vault.nodes._extract_config": ("ObservedAtError",),
    "langmem_vault.nodes._catch_up": ("CatchUpThenInject",),
    "langmem_vault.nodes._compact": ("create_compact_node",),
}


_NAMES = LazyNames(globals(), _WHERE)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
