"""Shared fixtures: one embedded Postgres per test session, a fresh schema per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from langmem_vault.db import embedded_uri


@pytest.fixture(scope="session")
def pg_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URI of a real PostgreSQL 18 + pgvector server private to this test session."""
    return embedded_uri(tmp_path_factory.mktemp("pgdata"))


@pytest.fixture
def schema(pg_uri: str) -> Iterator[str]:
    """A schema name no other test uses, dropped afterwards."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
