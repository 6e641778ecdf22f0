"""Connections, the embedded server, sans-IO plan runners and migrations."""

from langmem_vault.db.connection import (
    AsyncDatabase,
    Database,
    aopen_pool,
    open_pool,
)
from langmem_vault.db.embedded import (
    DataDirError,
    EmbeddedServerError,
    ServerCrashedError,
    embedded_uri,
    resolve_dsn,
)
from langmem_vault.db.migrations import check_schema, migrate_plan
from langmem_vault.db.pools import PoolConfig, apooled, pooled
from langmem_vault.db.runner import Plan, Query, arun_plan, run_plan

__all__ = [
    "AsyncDatabase",
    "DataDirError",
    "Database",
    "EmbeddedServerError",
    "Plan",
    "PoolConfig",
    "Query",
    "ServerCrashedError",
    "aopen_pool",
    "apooled",
    "arun_plan",
    "check_schema",
    "embedded_uri",
    "migrate_plan",
    "open_pool",
    "pooled",
    "resolve_dsn",
    "run_plan",
]
