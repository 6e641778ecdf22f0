"""What the API holds open while it runs: one async pool shared by the store, the saver, the
audit log and the job queue, behind one :class:`~langmem_vault.service.MemoryService`.

``open_service`` is entered once by the app's lifespan (also under ``langgraph dev``, which
runs a mounted app's lifespan beside its own). Tests and apps that already hold a store hand
their own ``MemoryService`` to ``create_app`` instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.store.base import IndexConfig

from langmem_vault.checkpointers._aio import AsyncVaultSaver
from langmem_vault.db._migrations import DEFAULT_SCHEMA
from langmem_vault.db._pools import apooled
from langmem_vault.jobs._queue import AsyncJobQueue
from langmem_vault.privacy._audit.log import AsyncAuditLog
from langmem_vault.service import MemoryService
from langmem_vault.store._aio import AsyncVaultStore

__all__ = ["COMPONENT", "open_service"]

#: the component name the audit log records for the API's writes
COMPONENT = "api"


@asynccontextmanager
async def open_service(
    dsn: str | None = None, *, schema: str = DEFAULT_SCHEMA, index: IndexConfig | None = None
) -> AsyncIterator[MemoryService]:
    """Open the pool on ``dsn`` (default ``$LANGMEM_VAULT_DSN``, else the embedded server),
    set up the tables and yield the service. Without ``index`` the local embeddings (offline)
    are loaded off the event loop: the LangGraph dev server refuses blocking calls on it."""
    if index is None:
        from langmem_vault.embeddings import default_index

        index = await asyncio.to_thread(default_index)
    async with apooled(dsn) as pool:
        store = AsyncVaultStore(pool, index=index, schema=schema)
        saver = AsyncVaultSaver(pool, schema=schema)
        audit = AsyncAuditLog(pool, schema=schema)
        jobs = AsyncJobQueue(pool, schema=schema)
        for component in (store, saver, audit, jobs):
            await component.setup()
        yield MemoryService(store, saver=saver, audit=audit, jobs=jobs, component=COMPONENT)
