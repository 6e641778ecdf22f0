"""The service layer: what the CLI, the REST API and the dashboard call (one layer, no copies).

:class:`MemoryService` lists, searches, shows, adds, edits, forgets, restores, confirms and
rejects memories; remembers what an agent states (redaction, consent, reconcile) and gives
a user's profile; manages standing instructions; lists episodes and threads; exports,
imports and erases a user; reads and sets consent; queries the audit log; reports
statistics; lists and retries failed background jobs. It acts
for one user (:class:`Identity`) or as an admin; every write is audited with the acting
identity; bad input raises a :class:`ServiceError` (:class:`NotFound`, :class:`InvalidInput`
naming the field, :class:`Forbidden`) with nothing written.

>>> from langgraph.store.memory import InMemoryStore
>>> service = MemoryService(InMemoryStore())
>>> service.add_memory("bob", "Works at Acme", category="company").status
'active'
"""

from langmem_vault.service._errors import Forbidden, InvalidInput, NotFound, ServiceError
from langmem_vault.service._facade import MemoryService
from langmem_vault.service._records import Identity, MemoryQuery

# The entry points: the service, who it acts for, the query it takes and the errors it
# raises. Its results (MemoryRecord, MemoryPage, StatsReport...) are what its methods return
# (pydantic models, documented on the methods); their classes stay in their modules.
__all__ = [
    "Forbidden",
    "Identity",
    "InvalidInput",
    "MemoryQuery",
    "MemoryService",
    "NotFound",
    "ServiceError",
]
