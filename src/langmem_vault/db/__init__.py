"""Connections, the embedded server, the sans-IO runtime (steps and their two drivers) and
migrations."""

from langmem_vault.db._connection import (
    AsyncDatabase,
    Database,
    aopen_pool,
    open_pool,
)
from langmem_vault.db._embedded import (
    DataDirError,
    EmbeddedServerError,
    ServerCrashedError,
    embedded_uri,
    resolve_dsn,
)
from langmem_vault.db._migrations import check_schema, migrate_plan
from langmem_vault.db._pools import PoolConfig, apooled, pooled
from langmem_vault.db._runner import Plan, Query, Statements
from langmem_vault.db._steps import Step, Steps, arun_steps, run_steps

__all__ = [
    "AsyncDatabase",
    "DataDirError",
    "Database",
    "EmbeddedServerError",
    "Plan",
    "PoolConfig",
    "Query",
    "ServerCrashedError",
    "Statements",
    "Step",
    "Steps",
    "aopen_pool",
    "apooled",
    "arun_steps",
    "check_schema",
    "embedded_uri",
    "migrate_plan",
    "open_pool",
    "pooled",
    "resolve_dsn",
    "run_steps",
]
