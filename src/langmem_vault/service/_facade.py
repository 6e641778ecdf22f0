"""``MemoryService``: every operation the CLI, the REST API and the dashboard need, in one
class with sync methods and ``a``-prefixed async twins.

The areas live in their own modules (memories, instructions and episodes, stats, threads,
privacy, failed jobs); this class only puts them together.
"""

from __future__ import annotations

from langmem_vault.service._agent import AgentMixin
from langmem_vault.service._analytics import AnalyticsMixin
from langmem_vault.service._categories import CategoriesMixin
from langmem_vault.service._jobs import JobsMixin
from langmem_vault.service._privacy import PrivacyMixin
from langmem_vault.service._stats import StatsMixin
from langmem_vault.service._threads import ThreadsMixin
from langmem_vault.service._trace import TraceMixin

__all__ = ["MemoryService"]


class MemoryService(
    JobsMixin,
    TraceMixin,
    CategoriesMixin,
    AnalyticsMixin,
    PrivacyMixin,
    ThreadsMixin,
    StatsMixin,
    AgentMixin,
):
    """Inspect and correct what the system remembers, acting for one user or as an admin.

    Components: ``store`` (any BaseStore; ``VaultStore``/``AsyncVaultStore`` in production),
    and optionally ``saver`` (``VaultSaver``/``AsyncVaultSaver``, for threads), ``jobs``
    (``JobQueue``/``AsyncJobQueue``: an erase deletes the user's jobs; failed ones are
    listed and retried), ``audit``
    (``AuditLog``/``AsyncAuditLog``/a buffer: every write is recorded with the acting
    identity), ``keyring`` (opens private facts; default ``$LANGMEM_VAULT_KEY``) and
    ``namespaces``; ``redaction``, the PII policy of what an agent states (:meth:`remember`;
    default :data:`~langmem_vault.privacy.DEFAULT_POLICY`). ``identity`` (default: an admin)
    is who acts; :meth:`acting_as` gives a copy for another identity, as an API does per
    request.

    Every method validates before writing and raises a
    :class:`~langmem_vault.service._errors.ServiceError` (``NotFound``, ``InvalidInput``
    naming the field, ``Forbidden``) with nothing written. Results are pydantic models
    (``.model_dump(mode="json")`` for JSON).

    >>> from langgraph.store.memory import InMemoryStore
    >>> service = MemoryService(InMemoryStore())
    >>> key = service.add_memory("alice", "Prefers green tea", category="preference").key
    >>> [m.text for m in service.list_memories("alice", status=["active"]).items]
    ['Prefers green tea']
    >>> service.count_memories("alice").counts
    {'active': 1}
    """
