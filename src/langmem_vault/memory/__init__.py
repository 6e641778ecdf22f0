"""The memory model: typed values, namespace templates, conditions, and the typed facade.

>>> from langmem_vault.memory import MemoryVault, SemanticFact
"""

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
    "Memory",
    "MemoryNamespaces",
    "MemoryVault",
    "MissingConfigKeyError",
    "ProposedEpisode",
    "ProposedFact",
    "ProposedInstruction",
    "ScoringWeights",
    "SemanticFact",
    "parse_condition",
    "resolve_namespace",
]
