"""Fixtures for the API tests: one MemoryService per module on a real AsyncVaultStore,
AsyncVaultSaver, AsyncAuditLog and AsyncJobQueue (embedded Postgres, a schema of its own), and
the app with three API keys: an admin's, alice's and bob's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import psycopg
import pytest
import pytest_asyncio
from fastapi import FastAPI

from langmem_vault.api import ApiKeyAuth, create_app
from langmem_vault.checkpointers import AsyncVaultSaver
from langmem_vault.db._connection import aopen_pool
from langmem_vault.jobs import AsyncJobQueue
from langmem_vault.privacy._audit.log import AsyncAuditLog
from langmem_vault.service import Identity, MemoryService
from langmem_vault.store import AsyncVaultStore
from tests.support.embeddings import TrigramEmbeddings

PREFIX = "/vault"
KEYS = {
    "admin-key": Identity.admin("ops"),
    "alice-key": Identity.for_user("alice", name="user:alice"),
    "bob-key": Identity.for_user("bob", name="user:bob"),
}


@dataclass
class Api:
    app: FastAPI
    service: MemoryService
    schema: str

    def client(self, key: str | None = None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        transport = httpx.ASGITransport(app=self.app)
        return httpx.AsyncClient(
            transport=transport, base_url=f"http://test{PREFIX}/api", headers=headers
        )


@pytest.fixture(scope="module")
def module_schema(pg_uri: str) -> Iterator[str]:
    name = f"t_api_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest_asyncio.fixture(scope="module")
async def api(pg_uri: str, module_schema: str) -> AsyncIterator[Api]:
    pool = await aopen_pool(pg_uri, max_size=4)
    index = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text", "summary"]}
    store = AsyncVaultStore(pool, schema=module_schema, index=index)  # type: ignore[arg-type]
    saver = AsyncVaultSaver(pool, schema=module_schema)
    audit = AsyncAuditLog(pool, schema=module_schema)
    await store.setup()
    await saver.setup()
    await audit.setup()
    jobs = AsyncJobQueue(pool, schema=module_schema)
    await jobs.setup()
    service = MemoryService(store, saver=saver, audit=audit, jobs=jobs, component="api")
    app = create_app(service, prefix=PREFIX, auth=ApiKeyAuth(KEYS))
    yield Api(app, service, module_schema)
    await pool.close()
