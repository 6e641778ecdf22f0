"""Graph wiring: the memory state and graph builders.

>>> from langmem_vault.graphs import MemoryState, add_memory, build_memory_graph
"""

from langmem_vault.graphs.builder import add_memory, build_memory_graph
from langmem_vault.graphs.state import MemoryState

__all__ = ["MemoryState", "add_memory", "build_memory_graph"]
