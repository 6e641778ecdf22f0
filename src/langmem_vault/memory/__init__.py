"""The memory model: typed values, namespace templates, conditions, the typed facade, and the
lifecycle's entry points (feedback, consolidation).

>>> from langmem_vault.memory import MemoryVault, SemanticFact
"""

from typing import Any

from langmem_vault._lazy import LazyNames
from langmem_vault.memory._conditions import Condition, parse_condition
from langmem_vault.memory._entities import Entity, Relation
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
from langmem_vault.memory._recall.expansion import aexpand, expand, expansion_op, query_terms
from langmem_vault.memory._recall.scoring import ScoringWeights
from langmem_vault.memory._vault import Memory, MemoryVault

__all__ = [
    "CATEGORIES",
    "EPISODES",
    "INSTRUCTIONS",
    "SEMANTIC",
    "Condition",
    "Entity",
    "Episode",
    "Extraction",
    "Instruction",
    "Keyring",
    "Memory",
    "MemoryNamespaces",
    "MemoryVault",
    "MissingConfigKeyError",
    "ModelJudge",
    "ProposedEpisode",
    "ProposedFact",
    "ProposedInstruction",
    "Relation",
    "ScoringWeights",
    "SemanticFact",
    "aconsolidate",
    "aexpand",
    "amemory_feedback",
    "arate_turn",
    "aturn_feedback",
    "consolidate",
    "expand",
    "expansion_op",
    "memory_feedback",
    "parse_condition",
    "query_terms",
    "rate_turn",
    "resolve_namespace",
    "turn_feedback",
]

_NAMES = LazyNames(
    globals(),
    {
        "langmem_vault.memory._lifecycle.consolidation": ("aconsolidate", "consolidate"),
        "langmem_vault.memory._lifecycle.consolidation_judge": ("ModelJudge",),
        "langmem_vault.memory._lifecycle.feedback": (
            "amemory_feedback",
            "arate_turn",
            "aturn_feedback",
            "memory_feedback",
            "rate_turn",
            "turn_feedback",
        ),
        "langmem_vault.memory._sealing": ("Keyring",),
    },
)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
