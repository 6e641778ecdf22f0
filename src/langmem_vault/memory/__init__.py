"""The memory model: typed values, namespace templates, conditions, and the typed facade.

>>> from langmem_vault.memory import MemoryVault, SemanticFact
"""

from typing import Any

from langmem_vault._lazy import LazyNames
from langmem_vault.memory._conditions import Condition, parse_condition
from langmem_vault.memory._models import (
    CATEGORIES,
    Episode,
    Extraction,
    Instruction,
    ProposedEpisode,
    ProposedFact,
    ProposedInstruction,
    SemanticFact,
)
from langmem_vault.memory._namespaces import (
    EPISODES,
    INSTRUCTIONS,
    SEMANTIC,
    MemoryNamespaces,
    MissingConfigKeyError,
    resolve_namespace,
)
from langmem_vault.memory._recall.scoring import ScoringWeights
from langmem_vault.memory._vault import Memory, MemoryVault

__all__ = [
    "CATEGORIES",
    "EPISODES",
    "INSTRUCTIONS",
    "SEMANTIC",
    "Condition",
    "Episode",
    "Extraction",
    "Instruction",
    "Keyring",
    "Memory",
    "MemoryNamespaces",
    "MemoryVault",
    "MissingConfigKeyError",
    "ProposedEpisode",
    "ProposedFact",
    "ProposedInstruction",
    "ScoringWeights",
    "SemanticFact",
    "consolidate",
    "memory_feedback",
    "parse_condition",
    "resolve_namespace",
]

_NAMES = LazyNames(
    globals(),
    {
        "langmem_vault.memory._lifecycle.consolidation": ("consolidate",),
        "langmem_vault.memory._lifecycle.feedback": ("memory_feedback",),
        "langmem_vault.memory._sealing": ("Keyring",),
    },
)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
