"""Versioned SQL migrations, applied by ``setup()``.

Migrations live in ``db/_sql/<track>/NNNN_name.sql``. Each component (the store, its
vectors, the saver, the job queue) has its own track, so an app that uses only the saver gets
only the saver's tables. Files may use ``{schema}`` and named template parameters such as
``{dims}``; they are substituted before the file runs.

The whole run happens in one transaction under a transaction-level advisory lock, so several
processes may call ``setup()`` at once, a caller may call it inside its own transaction, and a
failure leaves nothing half-applied. No ``CREATE INDEX CONCURRENTLY`` (it cannot run inside a
transaction, langgraph #7630): a step that must not lock a large table for long is an
*online* migration, a file whose first line is ``-- online`` (it holds the version's number
and says where the step is); this runner skips it, and :func:`~langmem_vault.db._online.online_plan`
runs it after the track's other migrations, outside the transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from psycopg import sql

from langmem_vault._tenants import DEFAULT_RULE
from langmem_vault.db._runner import Plan, Query

DEFAULT_SCHEMA = "langmem_vault"
# One lock for every track and schema: CREATE EXTENSION and CREATE SCHEMA race otherwise.
ADVISORY_LOCK_KEY = 0x6C6D7661  # "lmva"
_SCHEMA_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_FILE_RE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
ONLINE_MARK = "-- online\n"


@dataclass(frozen=True, slots=True)
class Migration:
    track: str
    version: int
    name: str
    sql: str

    @property
    def online(self) -> bool:
        """Run outside the transaction by db/_online.py, not as SQL by this runner."""
        return self.sql.startswith(ONLINE_MARK)


def check_schema(schema: str) -> str:
    """Validate a schema name: lower-case letters, digits and underscores, at most 63 chars."""
    if not isinstance(schema, str) or not _SCHEMA_RE.match(schema):
        raise ValueError(
            f"invalid schema name {schema!r}: use lower-case letters, digits and underscores, "
            "starting with a letter or underscore, at most 63 characters"
        )
    return schema


def in_schema(template: str, schema: str) -> sql.Composed:
    """``template`` with ``{schema}`` filled in as a quoted identifier, once ``schema`` passes
    :func:`check_schema` (the job queue and the audit log write their statements this way).

    >>> in_schema("SELECT 1 FROM {schema}.vault_jobs", "app").as_string()
    'SELECT 1 FROM "app".vault_jobs'
    """
    return sql.SQL(template).format(schema=sql.Identifier(check_schema(schema)))


@cache
def load_migrations(track: str) -> tuple[Migration, ...]:
    """The migrations of ``track``, in version order."""
    folder = resources.files("langmem_vault.db") / "_sql" / track
    found = []
    for entry in folder.iterdir():
        match = _FILE_RE.match(entry.name)
        if match:
            found.append(Migration(track, int(match.group(1)), entry.name, entry.read_text()))
    found.sort(key=lambda m: m.version)
    if not found:
        raise ValueError(f"no migrations found for track {track!r}")
    return tuple(found)


@cache
def _defaults() -> dict[str, object]:
    """Parameters a caller need not give: the default tenant rule (store/0006)."""
    return {"tenant_rule": DEFAULT_RULE.tenant_sql("namespace").as_string(None)}


def render(migration: Migration, schema: str, params: dict[str, object]) -> str:
    text = migration.sql.replace("{schema}", check_schema(schema))
    for name, value in {**_defaults(), **params}.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def record_query(schema: str, migration: Migration) -> Query:
    """The statement that notes ``migration`` as applied."""
    return Query(
        sql.SQL(
            "INSERT INTO {}.vault_migrations (track, version, name) VALUES (%s, %s, %s)"
        ).format(sql.Identifier(check_schema(schema))),
        (migration.track, migration.version, migration.name),
    )


def applied_plan(schema: str, track: str) -> Plan[set[int]]:
    """The versions of ``track`` applied (vault_migrations exists: migrate_plan made it)."""
    rows = yield Query(
        sql.SQL("SELECT version FROM {}.vault_migrations WHERE track = %s").format(
            sql.Identifier(check_schema(schema))
        ),
        (track,),
    )
    return {row["version"] for row in rows or []}


def migrate_plan(
    schema: str, track: str, params: dict[str, object] | None = None
) -> Plan[list[int]]:
    """Apply the pending migrations of ``track``; returns the versions applied."""
    schema_id = sql.Identifier(check_schema(schema))
    yield Query("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,))
    yield Query(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema_id))
    yield Query(
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.vault_migrations ("
            " track text NOT NULL, version integer NOT NULL, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (track, version))"
        ).format(schema_id)
    )
    done = yield from applied_plan(schema, track)
    applied = []
    for migration in load_migrations(track):
        if migration.version in done or migration.online:
            continue
        yield Query(render(migration, schema, params or {}), prepare=False)
        yield record_query(schema, migration)
        applied.append(migration.version)
    return applied
