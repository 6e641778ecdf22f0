"""langmem-vault: persistent memory for LangGraph apps, as graph wiring on Postgres + pgvector.

>>> from langmem_vault import VaultSaver, VaultStore, build_memory_graph
>>> with VaultStore.from_conn_string() as store:  # doctest: +SKIP
...     store.setup()

Names load on first use (PEP 562), so ``import langmem_vault`` stays light and
``from langmem_vault import VaultStore`` loads the store, not the nodes, Presidio or spaCy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver
    from langmem_vault.graphs import (
        CompactOptions,
        ExtractOptions,
        InjectOptions,
        MemoryState,
        ReconcileOptions,
        RespondOptions,
        add_memory,
        build_memory_graph,
    )
    from langmem_vault.memory import (
        Episode,
        Extraction,
        Instruction,
        MemoryNamespaces,
        MemoryVault,
        SemanticFact,
    )
    from langmem_vault.nodes import (
        aapply_extraction,
        apply_extraction,
        create_compact_node,
        create_extract_node,
        create_inject_node,
        create_reconcile_node,
        create_respond_node,
    )
    from langmem_vault.store import AsyncVaultStore, InvalidValueError, SearchRanking, VaultStore

_WHERE = {
    "AsyncVaultSaver": "langmem_vault.checkpointers",
    "VaultSaver": "langmem_vault.checkpointers",
    "CompactOptions": "langmem_vault.graphs",
    "ExtractOptions": "langmem_vault.graphs",
    "InjectOptions": "langmem_vault.graphs",
    "MemoryState": "langmem_vault.graphs",
    "ReconcileOptions": "langmem_vault.graphs",
    "RespondOptions": "langmem_vault.graphs",
    "add_memory": "langmem_vault.graphs",
    "build_memory_graph": "langmem_vault.graphs",
    "Episode": "langmem_vault.memory",
    "Extraction": "langmem_vault.memory",
    "Instruction": "langmem_vault.memory",
    "MemoryNamespaces": "langmem_vault.memory",
    "MemoryVault": "langmem_vault.memory",
    "SemanticFact": "langmem_vault.memory",
    "aapply_extraction": "langmem_vault.nodes",
    "apply_extraction": "langmem_vault.nodes",
    "create_compact_node": "langmem_vault.nodes",
    "create_extract_node": "langmem_vault.nodes",
    "create_inject_node": "langmem_vault.nodes",
    "create_reconcile_node": "langmem_vault.nodes",
    "create_respond_node": "langmem_vault.nodes",
    "AsyncVaultStore": "langmem_vault.store",
    "InvalidValueError": "langmem_vault.store",
    "SearchRanking": "langmem_vault.store",
    "VaultStore": "langmem_vault.store",
}

__all__ = [
    "AsyncVaultSaver",
    "AsyncVaultStore",
    "CompactOptions",
    "Episode",
    "ExtractOptions",
    "Extraction",
    "InjectOptions",
    "Instruction",
    "InvalidValueError",
    "MemoryNamespaces",
    "MemoryState",
    "MemoryVault",
    "ReconcileOptions",
    "RespondOptions",
    "SearchRanking",
    "SemanticFact",
    "VaultSaver",
    "VaultStore",
    "aapply_extraction",
    "add_memory",
    "apply_extraction",
    "build_memory_graph",
    "create_compact_node",
    "create_extract_node",
    "create_inject_node",
    "create_reconcile_node",
    "create_respond_node",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'langmem_vault' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
