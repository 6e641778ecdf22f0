"""The memory model: typed values, namespace templates, conditions, the typed facade, and the
lifecycle's entry points (feedback, consolidation).

>>> from langmem_vault.memory import MemoryVault, SemanticFact
"""

from typing import Any

from langmem_vault._lazy import LazyNames
from langmem_vault.memory._dates import statement_validity
from langmem_vault.memory._models import Episode, Extraction, Instruction, SemanticFact
from langmem_vault.memory._namespaces import MemoryNamespaces, MissingConfigKeyError
from langmem_vault.memory._recall.expansion import aexpand, expand, query_terms
from langmem_vault.memory._recall.fusion import BranchHit
from langmem_vault.memory._recall.scoring import ScoringWeights
from langmem_vault.memory._recall.time_filter import QueryTime, TimeWindow, read_query_time
from langmem_vault.memory._vault import MemoryVault, Recalled

# The entry points: the facade, the kinds it stores, where they live (and the error a run
# without the template's key gets), recall's results and weights, the keyring, the
# lifecycle's functions, and the entity expansion recall builds on. The model's parts
# (proposals, conditions, namespace constants) stay in their modules.
__all__ = [
    "METRICS",
    "BranchHit",
    "Episode",
    "Extraction",
    "Instruction",
    "Keyring",
    "MemoryNamespaces",
    "MemoryVault",
    "MissingConfigKeyError",
    "ModelJudge",
    "QueryTime",
    "Recalled",
    "ScoringWeights",
    "SemanticFact",
    "TimeWindow",
    "aconsolidate",
    "aexpand",
    "amemory_feedback",
    "arate_turn",
    "aturn_feedback",
    "consolidate",
    "expand",
    "memory_feedback",
    "query_terms",
    "rate_turn",
    "read_query_time",
    "statement_validity",
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
        # the process's batched accounting writes: METRICS.flush() writes what is held
        "langmem_vault.memory._recall.accounting": ("METRICS",),
    },
)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
