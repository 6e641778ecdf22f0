"""The memory nodes: inject, respond, extract, reconcile, compact.

Each factory returns a runnable with native sync and async paths, ready for
``StateGraph.add_node``. Imports are lazy so that importing one node does not load the others'
dependencies (the job queue, spaCy...).

>>> from langmem_vault.nodes import create_inject_node
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "aapply_extraction",
    "apply_extraction",
    "create_compact_node",
    "create_extract_node",
    "create_inject_node",
    "create_reconcile_node",
    "create_respond_node",
]

_WHERE = {
    "create_inject_node": "langmem_vault.nodes.inject",
    "create_respond_node": "langmem_vault.nodes.respond",
    "create_reconcile_node": "langmem_vault.nodes.reconcile",
    "apply_extraction": "langmem_vault.nodes.reconcile",
    "aapply_extraction": "langmem_vault.nodes.reconcile",
    "create_extract_node": "langmem_vault.nodes.extract",
    "create_compact_node": "langmem_vault.nodes.compact",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'langmem_vault.nodes' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
