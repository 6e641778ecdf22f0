"""Store fixtures shared by the memory, node, graph and job tests: each test runs on
langgraph's InMemoryStore and on VaultStore (real embedded Postgres), with local embeddings.

Registered for the whole suite by tests/conftest.py; a folder's own conftest may override
``store``/``astore`` (tests/store and tests/privacy do).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langmem_vault.embeddings import local_embeddings

USER = {"configurable": {"user_id": "u1"}}


def thread(user: str, thread_id: str) -> dict[str, Any]:
    """A run config for one user's thread."""
    return {"configurable": {"user_id": user, "thread_id": thread_id}}


@pytest.fixture(scope="session")
def index() -> dict[str, Any]:
    return {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}


@pytest.fixture(params=["memory", "vault"])
def store(request: pytest.FixtureRequest, index: dict[str, Any]) -> Iterator[BaseStore]:
    """A sync store: InMemoryStore and VaultStore on the embedded Postgres."""
    if request.param == "memory":
        yield InMemoryStore(index=index)  # type: ignore[arg-type]
        return
    from langmem_vault.store import VaultStore

    pg_uri = request.getfixturevalue("pg_uri")
    schema = request.getfixturevalue("schema")
    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as vault:  # type: ignore[arg-type]
        vault.setup()
        yield vault


@pytest.fixture(params=["memory", "vault"])
async def astore(request: pytest.FixtureRequest, index: dict[str, Any]) -> AsyncIterator[BaseStore]:
    """An async store: InMemoryStore and AsyncVaultStore on the embedded Postgres."""
    if request.param == "memory":
        yield InMemoryStore(index=index)  # type: ignore[arg-type]
        return
    from langmem_vault.store import AsyncVaultStore

    pg_uri = request.getfixturevalue("pg_uri")
    schema = request.getfixturevalue("schema")
    async with AsyncVaultStore.from_conn_string(pg_uri, index=index, schema=schema) as vault:  # type: ignore[arg-type]
        await vault.setup()
        yield vault
