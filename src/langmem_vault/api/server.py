"""The app object that servers load: ``langgraph.json``'s ``"http": {"app":
"langmem_vault.api.server:app"}`` and ``uvicorn langmem_vault.api.server:app``.

Inside a LangGraph server (``langgraph dev``, which imports ``langgraph_api`` before loading
the app) the API works on the server's own store (``langgraph_api.store.get_store()``, the
VaultStore of ``langgraph.json``'s ``"store"``), so the dashboard shows exactly what the
graphs remember, and on a VaultSaver opened like the server's checkpointer
(:func:`langmem_vault.studio.vault_saver`: same DSN and schema) for threads and the
injection trace; the audit log shares the saver's pool. Alone, it opens its own (see
:func:`~langmem_vault.api._resources.open_service`).

Configured from the environment: ``LANGMEM_VAULT_DSN`` (default: the embedded server),
``LANGMEM_VAULT_API_PREFIX`` (default ``/vault``), and the API keys of
:mod:`langmem_vault.api._auth`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langmem_vault.api._app import DEFAULT_PREFIX, create_app
from langmem_vault.api._resources import COMPONENT
from langmem_vault.service import MemoryService

__all__ = ["PREFIX_ENV", "app", "langgraph_service"]

PREFIX_ENV = "LANGMEM_VAULT_API_PREFIX"


@asynccontextmanager
async def langgraph_service() -> AsyncIterator[MemoryService]:
    """The service on the LangGraph server's store (entered after the server's lifespan)."""
    from langgraph_api.store import get_store

    from langmem_vault.privacy._audit.log import AsyncAuditLog
    from langmem_vault.studio import vault_saver

    store = await get_store()
    async with vault_saver() as saver:
        audit = AsyncAuditLog(saver.conn, schema=saver.schema)
        await audit.setup()
        yield MemoryService(store, saver=saver, audit=audit, component=COMPONENT)


app = create_app(
    langgraph_service if "langgraph_api" in sys.modules else None,
    prefix=os.environ.get(PREFIX_ENV, DEFAULT_PREFIX),
)
