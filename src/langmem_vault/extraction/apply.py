"""Apply an extraction: the user's consent filter first, then reconcile, in one atomic write.

The extract node (inline mode) and the extraction worker (background mode) both end here, so
the two modes store the same thing.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.memory.models import Extraction, ProposedFact
>>> from langmem_vault.memory.namespaces import MemoryNamespaces
>>> ns = MemoryNamespaces().resolve({"configurable": {"user_id": "u1"}})
>>> fact = ProposedFact(text="Likes tea", confidence=0.9)
>>> report = apply(InMemoryStore(), Extraction(facts=[fact]), ns)
>>> len(report.added)
1
"""

from __future__ import annotations

from langgraph.store.base import BaseStore

from langmem_vault.extraction.reconcile import (
    ReconcileReport,
    aapply_extraction,
    apply_extraction,
)
from langmem_vault.memory.models import Extraction
from langmem_vault.memory.namespaces import ResolvedNamespaces
from langmem_vault.privacy.subject_rights.consent import (
    afilter_for_namespaces,
    filter_for_namespaces,
)

__all__ = ["aapply", "apply"]


def apply(
    store: BaseStore, extraction: Extraction, namespaces: ResolvedNamespaces
) -> ReconcileReport:
    """Filter ``extraction`` by the user's consent, then reconcile it into ``store``."""
    extraction = filter_for_namespaces(store, extraction, namespaces).extraction
    return apply_extraction(store, extraction, namespaces=namespaces)


async def aapply(
    store: BaseStore, extraction: Extraction, namespaces: ResolvedNamespaces
) -> ReconcileReport:
    """Async twin of :func:`apply`."""
    extraction = (await afilter_for_namespaces(store, extraction, namespaces)).extraction
    return await aapply_extraction(store, extraction, namespaces=namespaces)
