"""Fixtures for the CLI tests: one schema for the module (each test uses its own user ids),
a CliRunner that passes ``--dsn``/``--schema``, and a sync MemoryService on the same schema to
seed data and check what the database holds after a command."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import typer
from click.testing import CliRunner, Result

from langmem_vault.checkpointers import VaultSaver
from langmem_vault.cli import app
from langmem_vault.db._connection import open_pool
from langmem_vault.embeddings import local_embeddings
from langmem_vault.privacy._audit.log import AuditLog
from langmem_vault.service import MemoryService
from langmem_vault.store import VaultStore


class Cli:
    """Runs ``langmem-vault ...`` in process against the test database."""

    def __init__(self, uri: str, schema: str, service: MemoryService) -> None:
        self.uri = uri
        self.schema = schema
        self.service = service
        self.runner = CliRunner()
        # Built once: Typer builds the click command tree on every invoke otherwise.
        self.command = typer.main.get_command(app)

    def __call__(self, *args: str, input: str | None = None) -> Result:
        argv = [*args, "--dsn", self.uri, "--schema", self.schema]
        # Wide enough that a table never folds a key or a text in two.
        return self.runner.invoke(self.command, argv, input=input, env={"COLUMNS": "250"})

    def audit_count(self, user_id: str) -> int:
        return len(self.service.audit_log(user_id, limit=1000))

    def memory_count(self, user_id: str) -> int:
        return self.service.list_memories(user_id).total


def user() -> str:
    """A user id no other test of the module uses."""
    return f"u-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def cli(pg_uri: str) -> Iterator[Cli]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    index: Any = {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}
    with open_pool(pg_uri, max_size=2) as pool:
        store = VaultStore(pool, schema=schema, index=index)
        saver = VaultSaver(pool, schema=schema)
        audit = AuditLog(pool, schema=schema)
        for component in (store, saver, audit):
            component.setup()
        yield Cli(pg_uri, schema, MemoryService(store, saver=saver, audit=audit))
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
