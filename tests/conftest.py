"""Shared fixtures: one embedded Postgres per test session, a fresh schema per test."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmem_vault.db import open_pool
from langmem_vault.db._connection import Database
from langmem_vault.db._embedded import embedded_uri, release
from langmem_vault.db._health import vector_smoke_plan
from langmem_vault.memory._recall.background_writes import flush_all


@pytest.fixture(autouse=True)
def _earlier_bookkeeping_written() -> None:
    """The bookkeeping writers hold writes for up to a quarter of a second: what an earlier
    test left is written before this one starts, never inside the batches it counts."""
    flush_all()


@pytest.fixture
def server_dir() -> Iterator[Path]:
    """A directory for an embedded server's data, removed afterwards.

    Not under pytest's tmp_path: as root the server runs as its own OS user, and every pytest
    session started meanwhile (several suites at once on one machine) resets pytest's temp
    root to mode 0700, which would lock that user out of its data.
    """
    path = Path(tempfile.mkdtemp(prefix="lmv-test-"))
    yield path
    release(path / "pg")
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_uri() -> Iterator[str]:
    """URI of a real PostgreSQL 18 + pgvector server private to this test session.

    The suite starts with an HNSW build, insert and search on it: on a server whose pgvector
    does not run on this CPU, every later test would fail obscurely, so stop at once instead.
    """
    path = Path(tempfile.mkdtemp(prefix="lmv-test-session-"))
    uri = embedded_uri(path / "pg")
    try:
        with open_pool(uri, max_size=1) as pool:
            Database(pool).run(vector_smoke_plan())
    except Exception as exc:
        pytest.exit(f"the embedded server fails the pgvector smoke test: {exc}", returncode=3)
    yield uri
    release(path / "pg")
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def schema(pg_uri: str) -> Iterator[str]:
    """A schema name no other test uses, dropped afterwards."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
