"""langmem-vault: persistent memory for LangGraph apps, as graph wiring on Postgres + pgvector.

>>> from langmem_vault import VaultSaver, VaultStore, build_memory_graph
>>> with VaultStore.from_conn_string() as store:  # doctest: +SKIP
...     store.setup()

Names load on first use (PEP 562), so ``import langmem_vault`` stays light and
``from langmem_vault import VaultStore`` loads the store, not the nodes, Presidio or spaCy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langmem_vault._lazy import LazyNames

if TYPE_CHECKING:
    from langmem_vault._run_config import UserIdError, check_user_id
    from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver
    from langmem_vault.graphs import (
        CompactOptions,
        ExtractOptions,
        InjectOptions,
        MemoryContext,
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
    # the one user id rule of graph, tools, checkpointer, CLI and API, and its error
    "langmem_vault._run_config": ("UserIdError", "check_user_id"),
    "langmem_vault.checkpointers": ("AsyncVaultSaver", "VaultSaver"),
    "langmem_vault.graphs": (
        "CompactOptions",
        "ExtractOptions",
        "InjectOptions",
        "MemoryContext",
        "MemoryState",
        "ReconcileOptions",
        "RespondOptions",
        "add_memory",
        "build_memory_graph",
    ),
    "langmem_vault.memory": (
        "Episode",
        "Extraction",
        "Instruction",
        "MemoryNamespaces",
        "MemoryVault",
        "SemanticFact",
    ),
    "langmem_vault.nodes": (
        "aapply_extraction",
        "apply_extraction",
        "create_compact_node",
        "create_extract_node",
        "create_inject_node",
        "create_reconcile_node",
        "create_respond_node",
    ),
    "langmem_vault.store": ("AsyncVaultStore", "InvalidValueError", "SearchRanking", "VaultStore"),
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
    "MemoryContext",
    "MemoryNamespaces",
    "MemoryState",
    "MemoryVault",
    "ReconcileOptions",
    "RespondOptions",
    "SearchRanking",
    "SemanticFact",
    "UserIdError",
    "VaultSaver",
    "VaultStore",
    "aapply_extraction",
    "add_memory",
    "apply_extraction",
    "build_memory_graph",
    "check_user_id",
    "create_compact_node",
    "create_extract_node",
    "create_inject_node",
    "create_reconcile_node",
    "create_respond_node",
]
__version__ = "0.1.0"


_NAMES = LazyNames(globals(), _WHERE)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
