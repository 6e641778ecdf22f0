"""Fixtures for the service tests: a MemoryService on a real VaultStore + audit log, run
through its sync methods or its async twins (on AsyncVaultStore and AsyncAuditLog)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.store.base import BaseStore

from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver
from langmem_vault.db._connection import aopen_pool, open_pool
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
from langmem_vault.service import MemoryService
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.embeddings import TrigramEmbeddings


class Driver:
    """Calls a service method through its sync form or its async twin, the same way."""

    def __init__(self, service: MemoryService, mode: str) -> None:
        self.service = service
        self.mode = mode
        self.store: BaseStore = service.store
        self.audit = service.audit
        self.saver = service.saver

    async def __call__(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return getattr(self.service, name)(*args, **kwargs)
        return await getattr(self.service, "a" + name)(*args, **kwargs)

    async def events(self, user_id: str) -> list[Any]:
        """The audit records of ``user_id``, newest first."""
        found = self.audit.query(user_id)
        return await found if self.mode == "async" else found  # type: ignore[no-any-return]


def index() -> dict[str, Any]:
    return {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}


@pytest.fixture(params=["sync", "async"])
async def drive(request: pytest.FixtureRequest, pg_uri: str, schema: str) -> AsyncIterator[Driver]:
    """A Driver over a fresh schema, once per mode."""
    if request.param == "sync":
        pool = open_pool(pg_uri, max_size=2)
        store = VaultStore(pool, schema=schema, index=index())  # type: ignore[arg-type]
        store.setup()
        audit = AuditLog(pool, schema=schema)
        audit.setup()
        saver = VaultSaver(pool, schema=schema)
        saver.setup()
        yield Driver(MemoryService(store, audit=audit, saver=saver), "sync")
        pool.close()
        return
    apool = await aopen_pool(pg_uri, max_size=2)
    astore = AsyncVaultStore(apool, schema=schema, index=index())  # type: ignore[arg-type]
    await astore.setup()
    aaudit = AsyncAuditLog(apool, schema=schema)
    await aaudit.setup()
    asaver = AsyncVaultSaver(apool, schema=schema)
    await asaver.setup()
    yield Driver(MemoryService(astore, audit=aaudit, saver=asaver), "async")
    await apool.close()
