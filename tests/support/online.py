"""What an online migration left: the store track's versions and the state of an index."""

from __future__ import annotations

import psycopg


def index_state(uri: str, schema: str, suffix: str) -> tuple[list[int], list[tuple[str, bool]]]:
    """The store track's versions, and every index of ``schema`` whose name ends in
    ``suffix`` (the partitioned index and each partition's), with whether it is valid."""
    with psycopg.connect(uri) as conn:
        versions = [
            r[0]
            for r in conn.execute(
                f"SELECT version FROM {schema}.vault_migrations WHERE track = 'store'"
                " ORDER BY version"
            )
        ]
        indexes = conn.execute(
            "SELECT c.relname::text, i.indisvalid FROM pg_index AS i"
            " JOIN pg_class AS c ON c.oid = i.indexrelid WHERE c.relnamespace = %s::regnamespace"
            " AND c.relname LIKE %s ORDER BY 1",
            (schema, f"%{suffix}"),
        ).fetchall()
    return versions, indexes


def forget(uri: str, schema: str, index: str, version: int) -> None:
    """The database as the code before store/``version`` left it: ``index`` dropped and the
    version not recorded."""
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {schema}.{index}")  # a later one may have dropped it
        conn.execute(
            f"DELETE FROM {schema}.vault_migrations WHERE track = 'store' AND version = %s",
            (version,),
        )
