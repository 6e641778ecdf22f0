"""The memory model: typed values, namespace templates, conditions."""

from langmem_vault.memory.conditions import Condition, parse_condition
from langmem_vault.memory.models import (
    CATEGORIES,
    Episode,
    Extraction,
    Instruction,
    ProposedEpisode,
    ProposedFact,
    ProposedInstruction,
    SemanticFact,
)
from langmem_vault.memory.namespaces import (
    EPISODES,
    INSTRUCTIONS,
    SEMANTIC,
    MemoryNamespaces,
    MissingConfigKeyError,
    resolve_namespace,
)

__all__ = [
    "CATEGORIES",
    "EPISODES",
    "INSTRUCTIONS",
    "SEMANTIC",
    "Condition",
    "Episode",
    "Extraction",
    "Instruction",
    "MemoryNamespaces",
    "MissingConfigKeyError",
    "ProposedEpisode",
    "ProposedFact",
    "ProposedInstruction",
    "SemanticFact",
    "parse_condition",
    "resolve_namespace",
]
