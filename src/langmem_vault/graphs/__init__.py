"""Graph wiring: the memory state, graph builders and the typed node options.

>>> from langmem_vault.graphs import MemoryState, add_memory, build_memory_graph
"""

from langmem_vault.graphs._builder import SAME_AS_MODEL, add_memory, build_memory_graph
from langmem_vault.graphs._options import (
    CompactOptions,
    ExtractOptions,
    InjectOptions,
    ReconcileOptions,
    RespondOptions,
)
from langmem_vault.graphs._state import MemoryContext, MemoryInput, MemoryOutput, MemoryState

__all__ = [
    "SAME_AS_MODEL",
    "CompactOptions",
    "ExtractOptions",
    "InjectOptions",
    "MemoryContext",
    "MemoryInput",
    "MemoryOutput",
    "MemoryState",
    "ReconcileOptions",
    "RespondOptions",
    "add_memory",
    "build_memory_graph",
]
