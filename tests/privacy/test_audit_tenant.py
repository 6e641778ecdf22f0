"""The audit log's tenant (issue 28, audit/0002): each entry's tenant is the user it is about,
first in every key; an audit table written before the column migrates in place; with
``setup(partitions=N)`` a user's history, a read by memory key, the delete of an erase (and
the erase itself) read that user's partition only (the stand-in for Citus's router planner,
as tests/store/test_routing.py is for the store)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from langmem_vault.db import _migrations as migrations
from langmem_vault.db._connection import Database, open_pool
from langmem_vault.privacy import erase_user
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditEvent, AuditLog
from langmem_vault.store import VaultStore
from tests.support.routing import assert_reads_within, partition_of, partitions_read, recorded

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PARTITIONS = 4
USERS = [f"u{n}" for n in range(6)]
_PARTITION = re.compile(r"^(vault_audit)_p(\d+)$")


def _events(user: str, n: int = 3) -> list[AuditEvent]:
    ns = ("memories", user, "semantic")
    return [
        AuditEvent(user, "read", "api", memory_key=f"k{i}", namespace=ns, at=T0 + timedelta(i))
        for i in range(n)
    ]


def _keys(conn: psycopg.Connection[Any], schema: str) -> dict[str, str]:
    """Each unique index of the audit table and its columns."""
    rows = conn.execute(
        "SELECT c.relname::text, pg_get_indexdef(i.indexrelid) FROM pg_index AS i"
        " JOIN pg_class AS c ON c.oid = i.indexrelid"
        " WHERE i.indrelid = to_regclass(%s) AND i.indisunique",
        (f"{schema}.vault_audit",),
    )
    return {name: ddl.split(" USING btree ")[1] for name, ddl in rows}


def test_an_audit_table_written_before_the_tenant_column_migrates_in_place(
    pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrations.load_migrations("audit")
    assert [m.version for m in every][:2] == [1, 2]
    with monkeypatch.context() as m:  # the schema as audit/0001 left it
        m.setattr(migrations, "load_migrations", lambda track: every[:1])
        with psycopg.connect(pg_uri) as conn:
            Database(conn).run(migrations.migrate_plan(schema, "audit"))
    with psycopg.connect(pg_uri) as conn:  # rows the code before wrote (no tenant)
        for user in ("alice", "ana.g@x.io"):
            for e in _events(user):
                conn.execute(
                    f"INSERT INTO {schema}.vault_audit (at, user_id, action, component,"
                    " namespace, memory_key) VALUES (%s, %s, 'read', 'api', %s, %s)",
                    (e.at, e.user_id, ".".join(e.namespace or ()), e.memory_key),
                )
    with open_pool(pg_uri, max_size=2) as pool:
        log = AuditLog(pool, schema=schema)
        log.setup()
        with psycopg.connect(pg_uri) as conn:
            rows = set(conn.execute(f"SELECT tenant, user_id FROM {schema}.vault_audit"))
            assert rows == {("alice", "alice"), ("ana.g@x.io", "ana.g@x.io")}
            assert _keys(conn, schema) == {"vault_audit_pkey": "(tenant, id)"}
        before = [r.memory_key for r in log.query("alice")]
        assert before == ["k2", "k1", "k0"]
        assert [r.memory_key for r in log.query("alice", memory_key="k1")] == ["k1"]
        log.record(AuditEvent("alice", "delete", "api", memory_key="k3", at=T0 + timedelta(9)))
        assert [r.memory_key for r in log.query("alice")] == ["k3", *before]
        assert log.delete_user("alice") == 4
        assert [r.user_id for r in log.query("ana.g@x.io")] == ["ana.g@x.io"] * 3


@pytest.fixture(scope="module")
def routed(pg_uri: str) -> Iterator[tuple[AuditLog, VaultStore, str]]:
    """An audit log in 4 partitions holding six users' events, and a store beside it."""
    schema = "audit_routing_" + str(abs(hash(pg_uri)) % 10**8)
    with open_pool(pg_uri, max_size=2) as pool:
        log = AuditLog(pool, schema=schema)
        log.setup(partitions=PARTITIONS)
        store = VaultStore(pool, schema=schema)
        store.setup()
        log.record([e for user in USERS for e in _events(user, 20)])
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"ANALYZE {schema}.vault_audit")
        yield log, store, schema
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _partition(uri: str, schema: str, user: str) -> int:
    match = _PARTITION.match(partition_of(uri, schema, "vault_audit", user))
    assert match
    return int(match.group(2))


OPS: dict[str, Callable[[AuditLog, VaultStore, str], Any]] = {
    "history": lambda log, store, u: log.query(u, limit=5),
    "history, one memory": lambda log, store, u: log.query(u, memory_key="k3"),
    "history, filtered": lambda log, store, u: log.query(u, actions=["read"], since=T0),
    "delete_user": lambda log, store, u: log.delete_user(u),
    "erase": lambda log, store, u: erase_user(store, u, audit=log),
}


def test_setup_partitions_the_audit_table(
    routed: tuple[AuditLog, VaultStore, str], pg_uri: str
) -> None:
    log, _, schema = routed
    with psycopg.connect(pg_uri) as conn:
        (kind, parts) = conn.execute(
            "SELECT relkind::text, (SELECT count(*) FROM pg_inherits WHERE inhparent = oid)"
            " FROM pg_class WHERE oid = to_regclass(%s)",
            (f"{schema}.vault_audit",),
        ).fetchone()  # type: ignore[misc]
        assert (kind, parts) == ("p", PARTITIONS)
        assert _keys(conn, schema) == {"vault_audit_pkey": "(tenant, id)"}
    log.setup(partitions=PARTITIONS)  # again: nothing to do
    with pytest.raises(ValueError, match="already in 4 partitions"):
        log.setup(partitions=8)


@pytest.mark.parametrize("name", list(OPS))
def test_each_read_of_a_user_reads_one_partition(
    routed: tuple[AuditLog, VaultStore, str], pg_uri: str, name: str
) -> None:
    log, store, schema = routed
    log.record(_events("u3", 20))  # again: a delete before this one took them
    mine = _partition(pg_uri, schema, "u3")
    assert {_partition(pg_uri, schema, u) for u in USERS} != {mine}  # others elsewhere
    with recorded() as sent:
        OPS[name](log, store, "u3")
    reads = partitions_read(pg_uri, schema, sent, "vault_audit", _PARTITION)
    assert_reads_within(reads, {mine}, name, "audit table")


async def test_async_setup_partitions_and_reads(pg_uri: str, schema: str) -> None:
    async with AsyncAuditLog.from_conn_string(pg_uri, schema=schema) as log:
        await log.setup(partitions=2)
        await log.record([*_events("alice"), *_events("bob", 1)])
        assert [r.memory_key for r in await log.query("alice", limit=2)] == ["k2", "k1"]
        assert await log.delete_user("alice") == 3
        assert [r.user_id for r in await log.query("bob")] == ["bob"]
    with psycopg.connect(pg_uri) as conn:
        tenants = conn.execute(
            f"SELECT tableoid::regclass::text, tenant FROM {schema}.vault_audit"
        ).fetchall()
    assert [t for _, t in tenants] == ["bob"]
    assert tenants[0][0].startswith(f"{schema}.vault_audit_p")
