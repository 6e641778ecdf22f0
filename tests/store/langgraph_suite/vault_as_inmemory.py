"""Pytest plugin: run langgraph's own store tests with every InMemoryStore they build being a
VaultStore on a fresh schema of the Postgres at $LANGMEM_VAULT_DSN, set up with
``partitions=$LANGMEM_VAULT_PARTITIONS`` (0 when unset).

langgraph's tests build stores with ``InMemoryStore(...)`` (a module global) and spy on
``InMemoryStore.batch``; replacing the global with a VaultStore subclass of the same name covers
both. Loaded with ``pytest -p vault_as_inmemory`` with this folder on PYTHONPATH.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from langmem_vault.db import open_pool
from langmem_vault.store import VaultStore

_pool: ConnectionPool[Any] | None = None


def _shared_pool() -> ConnectionPool[Any]:
    global _pool
    if _pool is None:
        _pool = open_pool(os.environ["LANGMEM_VAULT_DSN"], max_size=4)
    return _pool


class InMemoryStore(VaultStore):
    """A VaultStore that takes InMemoryStore's constructor arguments."""

    def __init__(self, *, index: Any = None) -> None:
        super().__init__(_shared_pool(), index=index, schema=f"lg_{uuid.uuid4().hex[:12]}")
        self.setup(partitions=int(os.environ.get("LANGMEM_VAULT_PARTITIONS", "0")))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "InMemoryStore"):
            module.InMemoryStore = InMemoryStore
