"""Fixtures for the privacy tests: a VaultStore, saver, job queue and audit log per schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langgraph.store.base import IndexConfig
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langmem_vault.db._connection import aopen_pool, open_pool
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.embeddings import HASH_DIMS, HashEmbeddings


def index_config() -> IndexConfig:
    return {"dims": HASH_DIMS, "embed": HashEmbeddings(), "fields": ["text"]}


@pytest.fixture(scope="session")
def index_cfg() -> IndexConfig:
    """The index config of the stores here (for module-scoped stores of a test file)."""
    return index_config()


@pytest.fixture
def pool(pg_uri: str) -> Iterator[ConnectionPool[Any]]:
    p = open_pool(pg_uri, max_size=4)
    yield p
    p.close()


@pytest.fixture
async def apool(pg_uri: str) -> AsyncIterator[AsyncConnectionPool[Any]]:
    p = await aopen_pool(pg_uri, max_size=4)
    yield p
    await p.close()


@pytest.fixture
def store(pool: ConnectionPool[Any], schema: str) -> VaultStore:
    s = VaultStore(pool, schema=schema, index=index_config())
    s.setup()
    return s


@pytest.fixture
async def astore(apool: AsyncConnectionPool[Any], schema: str) -> AsyncVaultStore:
    s = AsyncVaultStore(apool, schema=schema, index=index_config())
    await s.setup()
    return s


@pytest.fixture
def audit(pool: ConnectionPool[Any], schema: str) -> AuditLog:
    log = AuditLog(pool, schema=schema)
    log.setup()
    return log


@pytest.fixture
async def aaudit(apool: AsyncConnectionPool[Any], schema: str) -> AsyncAuditLog:
    log = AsyncAuditLog(apool, schema=schema)
    await log.setup()
    return log
