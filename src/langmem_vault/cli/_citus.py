"""``langmem-vault citus-ddl``: the statements that distribute a set-up schema on Citus
(docs/citus.md), from the database's catalog with ``--dsn``, else from the tables setup()
makes."""

from __future__ import annotations

import os

import typer

from langmem_vault.cli._context import DsnOption, SchemaOption, fail

__all__ = ["register"]


def citus_ddl(dsn: DsnOption = None, schema: SchemaOption = None) -> None:
    """Print the Citus statements for a schema set up by setup(): run them on the coordinator.

    With --dsn (or $LANGMEM_VAULT_DSN) the tables, and which have a tenant, are read from that
    database's catalog; without, from the tables setup() makes."""
    import psycopg

    from langmem_vault.cli._context import SCHEMA_ENV
    from langmem_vault.db._citus import (
        CATALOG,
        DECLARED,
        FUNCTIONS_CATALOG,
        catalog_tables,
        citus_statements,
    )
    from langmem_vault.db._embedded import DSN_ENV
    from langmem_vault.db._migrations import DEFAULT_SCHEMA, check_schema

    name = schema or os.environ.get(SCHEMA_ENV) or DEFAULT_SCHEMA
    try:
        check_schema(name)
    except ValueError as exc:
        fail(f"schema: {exc}")
    dsn = dsn or os.environ.get(DSN_ENV)
    if dsn is None:
        lines = citus_statements(name, DECLARED)
    else:
        try:
            with psycopg.connect(dsn, row_factory=psycopg.rows.dict_row) as conn:
                rows = conn.execute(CATALOG, {"schema": name}).fetchall()
                functions = [
                    r["signature"] for r in conn.execute(FUNCTIONS_CATALOG, {"schema": name})
                ]
        except psycopg.Error as exc:
            fail(f"cannot read the catalog: {exc}", 1)
        if not rows:
            fail(f"schema: {name!r} has no tables: run setup() first")
        lines = citus_statements(name, catalog_tables(name, rows), functions)
    typer.echo("\n".join(lines))


def register(app: typer.Typer) -> None:
    """Add ``citus-ddl`` to the root app."""
    app.command("citus-ddl")(citus_ddl)
