"""``langmem-vault citus-ddl`` against a freshly set-up schema: the script names every table
with a tenant column, runs (on stand-ins for Citus's functions that check what Citus would:
the table and the column exist, the co-location target and every foreign key's target are
distributed first), and the list used without a database agrees with the catalog."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import typer
from click.testing import CliRunner

from langmem_vault.checkpointers import VaultSaver
from langmem_vault.cli import app
from langmem_vault.db._connection import open_pool
from langmem_vault.jobs import JobQueue
from langmem_vault.privacy._audit.log import AuditLog
from langmem_vault.store import VaultStore

# Citus's signatures; each records its call, after the checks Citus makes.
STUBS = """
CREATE SCHEMA {stub};
CREATE TABLE {stub}.distributed (name regclass PRIMARY KEY);
CREATE TABLE {stub}.functions (name regprocedure PRIMARY KEY);
CREATE FUNCTION {stub}.create_distributed_function(function_name regprocedure)
RETURNS void LANGUAGE sql AS $$ INSERT INTO {stub}.functions VALUES (function_name) $$;
CREATE FUNCTION {stub}.create_distributed_table(
    table_name regclass, distribution_column text, colocate_with text DEFAULT 'default')
RETURNS void LANGUAGE plpgsql AS $$
DECLARE missing regclass;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = table_name
                   AND attname = distribution_column AND NOT attisdropped) THEN
        RAISE EXCEPTION '% has no column %', table_name, distribution_column;
    END IF;
    IF colocate_with <> 'default'
       AND NOT EXISTS (SELECT 1 FROM {stub}.distributed WHERE name = colocate_with::regclass) THEN
        RAISE EXCEPTION 'colocate_with % is not distributed', colocate_with;
    END IF;
    SELECT f.confrelid INTO missing FROM pg_constraint AS f
    WHERE f.conrelid = table_name AND f.contype = 'f' AND f.confrelid <> table_name
      AND NOT EXISTS (SELECT 1 FROM {stub}.distributed AS d WHERE d.name = f.confrelid);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION '% references % which is not distributed', table_name, missing;
    END IF;
    INSERT INTO {stub}.distributed VALUES (table_name);
END $$;
"""


@pytest.fixture(scope="module")
def schema(pg_uri: str) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    index: Any = {"dims": 4, "embed": lambda texts: [[1.0, 0.0, 0.0, 0.0] for _ in texts]}
    with open_pool(pg_uri, max_size=2) as pool:
        for component in (
            VaultStore(pool, schema=name, index=index),
            VaultSaver(pool, schema=name),
            AuditLog(pool, schema=name),
            JobQueue(pool, schema=name),
        ):
            component.setup()
    yield name
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def ddl(*args: str) -> list[str]:
    # No $LANGMEM_VAULT_DSN: without --dsn the command must use its declared tables.
    command = typer.main.get_command(app)
    result = CliRunner().invoke(command, ["citus-ddl", *args], env={"LANGMEM_VAULT_DSN": None})
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def statements(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("--")]


def test_script_distributes_every_tenant_table_in_order(pg_uri: str, schema: str) -> None:
    lines = ddl("--dsn", pg_uri, "--schema", schema)
    stub = f"s_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_uri) as conn:  # rolled back on leaving: nothing stays
        keyed = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.columns"
                " WHERE table_schema = %s AND column_name = 'tenant'",
                (schema,),
            )
        }
        assert {"store_items", "store_vectors", "entities", "entity_vectors"} <= keyed
        conn.execute(STUBS.replace("{stub}", stub))
        conn.execute(f"SET LOCAL search_path = {stub}")
        for statement in statements(lines):
            conn.execute(statement)
        done = [r[0] for r in conn.execute(f"SELECT name::text FROM {stub}.distributed")]
        functions = {r[0] for r in conn.execute(f"SELECT name::text FROM {stub}.functions")}
        conn.rollback()
    assert sorted(done) == sorted(f"{schema}.{t}" for t in keyed)
    assert done[0] == f"{schema}.store_items"
    assert functions == {
        f"{schema}.end_time(jsonb)",
        f"{schema}.fill_page_at()",
        f"{schema}.tenant_of(text[])",
        f"{schema}.item_time(jsonb,timestamp with time zone)",
    }
    local = [line for line in lines if "stays local on the coordinator" in line]
    assert f"{schema}.saver_checkpoints" in done  # the saver is tenant-keyed: distributed
    assert f"{schema}.vault_audit" in done  # so is the audit log (audit/0002)
    for table in ("vault_jobs", "vault_migrations"):
        [line] = [line for line in local if f"{schema}.{table} " in line]
        assert "no tenant column" in line or "only setup()" in line


def test_declared_tables_match_the_catalog(pg_uri: str, schema: str) -> None:
    assert ddl("--schema", schema) == ddl("--dsn", pg_uri, "--schema", schema)


def test_bad_schema_is_exit_2() -> None:
    result = CliRunner().invoke(typer.main.get_command(app), ["citus-ddl", "--schema", "A-b"])
    assert result.exit_code == 2 and "schema" in result.output
