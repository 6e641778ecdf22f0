"""langmem-vault: persistent memory for LangGraph apps, as graph wiring on Postgres + pgvector.

>>> from langmem_vault import VaultSaver, VaultStore, build_memory_graph
>>> with VaultStore.from_conn_string() as store:  # doctest: +SKIP
...     store.setup()
"""

from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver
from langmem_vault.graphs import MemoryState, add_memory, build_memory_graph
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

__all__ = [
    "AsyncVaultSaver",
    "AsyncVaultStore",
    "Episode",
    "Extraction",
    "Instruction",
    "InvalidValueError",
    "MemoryNamespaces",
    "MemoryState",
    "MemoryVault",
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
