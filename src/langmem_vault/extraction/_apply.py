"""Apply an extraction: the user's consent filter first, then reconcile, in one atomic write.

The extract node (inline mode) and the extraction worker (background mode) both end here, so
the two modes store the same thing. A proposal consent refuses is never dropped silently:
its reason (kind and category, never its text) is in the report's ``dropped``, logged at
INFO, and written to the audit log (action ``consent``) when the store is an
:class:`~langmem_vault.privacy._audit.store.AuditedStore`; the extract node also puts it in
the turn's state (``memory_dropped``), where the injection trace shows it.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.memory._models import Extraction, ProposedFact
>>> from langmem_vault.memory._namespaces import MemoryNamespaces
>>> ns = MemoryNamespaces().resolve({"configurable": {"user_id": "u1"}})
>>> fact = ProposedFact(text="Likes tea", confidence=0.9)
>>> report = apply(InMemoryStore(), Extraction(facts=[fact]), ns)
>>> len(report.added), report.dropped
(1, [])
"""

from __future__ import annotations

import inspect
import logging
import re

from langgraph.store.base import BaseStore

from langmem_vault.extraction._reconcile import (
    ReconcileReport,
    aapply_extraction,
    apply_extraction,
)
from langmem_vault.memory._models import Extraction
from langmem_vault.memory._namespaces import ResolvedNamespaces
from langmem_vault.privacy._audit.log import AuditAction, AuditEvent
from langmem_vault.privacy._audit.store import AuditedStore
from langmem_vault.privacy._subject_rights.consent import (
    FilteredExtraction,
    afilter_for_namespaces,
    filter_for_namespaces,
)

__all__ = ["aapply", "apply", "refusal_events"]

logger = logging.getLogger("langmem_vault.extract")
#: "fact: sensitive (medical, financial)" -> kind "fact", category "sensitive", topics
_REASON = re.compile(r"^(?P<kind>\w+): (?P<category>\w+)(?: \((?P<topics>[^)]*)\))?$")


def refusal_events(
    filtered: FilteredExtraction, namespaces: ResolvedNamespaces
) -> list[AuditEvent]:
    """One ``consent`` audit event per refused proposal: its kind and category, no text.

    >>> from langmem_vault.memory._namespaces import MemoryNamespaces
    >>> ns = MemoryNamespaces().resolve({"configurable": {"user_id": "u1"}})
    >>> out = FilteredExtraction(Extraction(), ["fact: sensitive (medical)"], "u1")
    >>> refusal_events(out, ns)[0].detail
    {'refused': 'fact', 'category': 'sensitive', 'topics': ['medical']}
    """
    if filtered.user_id is None:
        return []
    events = []
    for reason in filtered.dropped:
        match = _REASON.match(reason)
        detail: dict[str, object] = {"refused": reason}
        if match is not None:
            topics = match["topics"] or ""
            detail = {"refused": match["kind"], "category": match["category"]}
            if match["category"] != "personal":  # "personal (relationship)" names a category
                detail["topics"] = [t.strip() for t in topics.split(",") if t.strip()]
            elif topics:
                detail["fact_category"] = topics
        events.append(
            AuditEvent(
                filtered.user_id,
                AuditAction.CONSENT,
                "extract",
                namespace=namespaces.semantic,
                detail=detail,
            )
        )
    return events


def _report(filtered: FilteredExtraction, report: ReconcileReport) -> ReconcileReport:
    report.dropped = list(filtered.dropped)
    for reason in filtered.dropped:
        logger.info("extract: consent refused %s for user %s", reason, filtered.user_id)
    return report


def apply(
    store: BaseStore, extraction: Extraction, namespaces: ResolvedNamespaces
) -> ReconcileReport:
    """Filter ``extraction`` by the user's consent, then reconcile it into ``store``."""
    filtered = filter_for_namespaces(store, extraction, namespaces)
    report = apply_extraction(store, filtered.extraction, namespaces=namespaces)
    events = refusal_events(filtered, namespaces)
    if events and isinstance(store, AuditedStore):
        store.audit.record(events)
    return _report(filtered, report)


async def aapply(
    store: BaseStore, extraction: Extraction, namespaces: ResolvedNamespaces
) -> ReconcileReport:
    """Async twin of :func:`apply`."""
    filtered = await afilter_for_namespaces(store, extraction, namespaces)
    report = await aapply_extraction(store, filtered.extraction, namespaces=namespaces)
    events = refusal_events(filtered, namespaces)
    if events and isinstance(store, AuditedStore):
        outcome = store.audit.record(events)
        if inspect.isawaitable(outcome):
            await outcome
    return _report(filtered, report)
