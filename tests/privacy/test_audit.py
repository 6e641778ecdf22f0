"""The audit log on the real embedded Postgres: record, query per user, erase, buffers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from langmem_vault.db._connection import aopen_pool, open_pool
from langmem_vault.privacy._audit.buffer import AsyncAuditBuffer, AuditBuffer
from langmem_vault.privacy._audit.log import (
    AsyncAuditLog,
    AuditAction,
    AuditEvent,
    AuditLog,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def log(pg_uri: str, schema: str) -> Iterator[AuditLog]:
    pool = open_pool(pg_uri, max_size=3)
    try:
        audit = AuditLog(pool, schema=schema)
        audit.setup()
        audit.setup()  # idempotent
        yield audit
    finally:
        pool.close()


@pytest.fixture
async def alog(pg_uri: str, schema: str) -> AsyncIterator[AsyncAuditLog]:
    pool = await aopen_pool(pg_uri, max_size=3)
    try:
        audit = AsyncAuditLog(pool, schema=schema)
        await audit.setup()
        yield audit
    finally:
        await pool.close()


def _events() -> list[AuditEvent]:
    return [
        AuditEvent("alice", "read", "api", actor="ops@x", memory_key="k1", at=T0),
        AuditEvent(
            "alice",
            AuditAction.INJECT,
            "inject",
            memory_key="k1",
            namespace=("memories", "alice", "semantic"),
            at=T0 + timedelta(minutes=1),
        ),
        AuditEvent("alice", "cite", "respond", memory_key="k2", at=T0 + timedelta(minutes=2)),
        AuditEvent("alice", "delete", "api", memory_key="k2", at=T0 + timedelta(minutes=3)),
        AuditEvent("bob", "read", "api", memory_key="k1", at=T0),
    ]


def test_record_and_query_per_user(log: AuditLog) -> None:
    assert log.record(_events()) == 5
    alice = log.query("alice")
    assert [r.action for r in alice] == ["delete", "cite", "inject", "read"]  # newest first
    assert {r.user_id for r in alice} == {"alice"}
    inject = alice[2]
    assert inject.namespace == ("memories", "alice", "semantic")
    assert inject.component == "inject" and inject.at == T0 + timedelta(minutes=1)
    assert [r.action for r in log.query("alice", memory_key="k1")] == ["inject", "read"]
    assert [r.action for r in log.query("alice", actions=["cite", "delete"])] == [
        "delete",
        "cite",
    ]
    window = log.query("alice", since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=3))
    assert [r.action for r in window] == ["cite", "inject"]
    assert [r.actor for r in log.query("alice", component="api", actions=["read"])] == ["ops@x"]
    page1 = log.query("alice", limit=2)
    page2 = log.query("alice", limit=2, before_id=page1[-1].id)
    assert [r.action for r in page1 + page2] == ["delete", "cite", "inject", "read"]
    assert log.query("carol") == []


def test_delete_user_and_purge(log: AuditLog) -> None:
    log.record(_events())
    log.record(AuditEvent("bob", "read", "api"))  # now
    assert log.delete_user("alice") == 4
    assert log.query("alice") == []
    assert log.purge(timedelta(days=1)) == 1  # bob's event at T0
    assert [r.at > T0 for r in log.query("bob")] == [True]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"user_id": ""}, "user_id"),
        ({"user_id": "x" * 300}, "user_id"),
        ({"action": "steal"}, "action"),
        ({"component": ""}, "component"),
        ({"memory_key": "a\x00b"}, "memory_key"),
        ({"detail": {"blob": "x" * 9000}}, "detail"),
        ({"detail": {"obj": {1, 2}}}, "detail"),
        ({"namespace": ("memories", "")}, "namespace"),
    ],
)
def test_bad_events_are_refused(log: AuditLog, kwargs: dict[str, object], field: str) -> None:
    base: dict[str, object] = {"user_id": "alice", "action": "read", "component": "api"}
    with pytest.raises(ValueError, match=field):
        AuditEvent(**{**base, **kwargs})  # type: ignore[arg-type]
    assert log.query("alice") == []


def test_bad_queries_are_refused(log: AuditLog) -> None:
    with pytest.raises(ValueError, match="limit"):
        log.query("alice", limit=0)
    with pytest.raises(ValueError, match="limit"):
        log.query("alice", limit=10_000)
    with pytest.raises(ValueError, match="steal"):
        log.query("alice", actions=["steal"])
    with pytest.raises(TypeError, match="AuditEvent"):
        log.record(["not an event"])  # type: ignore[list-item]


def test_hostile_strings_are_data(log: AuditLog) -> None:
    evil = "x'; DROP TABLE vault_audit; --"
    log.record(AuditEvent(evil, "read", evil, actor=evil, memory_key="%", detail={"q": evil}))
    log.record(AuditEvent("alice", "read", "api", memory_key="k"))
    [rec] = log.query(evil, memory_key="%")
    assert rec.detail == {"q": evil} and rec.component == evil
    assert log.query("%") == [] and len(log.query("alice")) == 1


def test_naive_time_is_utc() -> None:
    event = AuditEvent("alice", "read", "api", at=datetime(2026, 1, 1))
    assert event.at.tzinfo is UTC


def test_buffer_is_durable_after_flush(log: AuditLog) -> None:
    with AuditBuffer(log, flush_interval=5.0, max_batch=1000) as buf:
        for i in range(250):
            buf.record(AuditEvent("alice", "inject", "inject", memory_key=f"k{i}"))
        buf.flush(timeout=10)
        assert len(log.query("alice", limit=1000)) == 250
        buf.record(AuditEvent("alice", "cite", "respond"))
    # close() flushed the last one
    assert len(log.query("alice", limit=1000)) == 251


def test_buffer_writes_on_its_own(log: AuditLog) -> None:
    with AuditBuffer(log, flush_interval=0.05) as buf:
        buf.record(AuditEvent("alice", "read", "api"))
        for _ in range(100):
            if log.query("alice"):
                break
            import time

            time.sleep(0.02)
        assert len(log.query("alice")) == 1


def test_buffer_keeps_events_while_the_database_fails(pg_uri: str, schema: str) -> None:
    pool = open_pool(pg_uri, max_size=2)
    try:
        log = AuditLog(pool, schema=schema)  # no setup(): the table does not exist yet
        buf = AuditBuffer(log, flush_interval=0.05)
        buf.record(AuditEvent("alice", "read", "api"))
        with pytest.raises(Exception, match="vault_audit"):
            buf.flush(timeout=10)
        log.setup()  # the database "comes back"
        buf.flush(timeout=10)
        assert len(log.query("alice")) == 1
        buf.close()
        with pytest.raises(RuntimeError, match="closed"):
            buf.record(AuditEvent("alice", "read", "api"))
    finally:
        pool.close()


def test_buffer_rejects_bad_settings(log: AuditLog) -> None:
    with pytest.raises(ValueError, match="max_batch"):
        AuditBuffer(log, max_batch=0)
    with pytest.raises(ValueError, match="flush_interval"):
        AuditBuffer(log, flush_interval=0)


async def test_async_record_query_delete(alog: AsyncAuditLog) -> None:
    assert await alog.record(_events()) == 5
    assert [r.action for r in await alog.query("alice", memory_key="k2")] == ["delete", "cite"]
    assert await alog.delete_user("alice") == 4
    assert await alog.query("alice") == []
    assert len(await alog.query("bob")) == 1


async def test_async_buffer(alog: AsyncAuditLog) -> None:
    async with AsyncAuditBuffer(alog, flush_interval=5.0, max_batch=50) as buf:
        for i in range(120):
            await buf.record(AuditEvent("alice", "inject", "inject", memory_key=f"k{i}"))
        await asyncio.sleep(0.05)  # max_batch reached: the task writes without waiting 5 s
        assert len(await alog.query("alice", limit=1000)) >= 50
        await buf.flush()
        assert len(await alog.query("alice", limit=1000)) == 120
        await buf.record(AuditEvent("alice", "cite", "respond"))
    assert len(await alog.query("alice", limit=1000)) == 121


async def test_async_buffer_backpressure(alog: AsyncAuditLog) -> None:
    buf = AsyncAuditBuffer(alog, flush_interval=60.0, max_batch=10, max_pending=10)
    for _ in range(25):
        await buf.record(AuditEvent("alice", "read", "api"))
    assert len(buf._pending) <= 10  # the caller wrote batches once the buffer was full
    await buf.aclose()
    assert len(await alog.query("alice", limit=100)) == 25


def test_on_a_single_caller_connection(pg_uri: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(pg_uri) as conn:  # not autocommit: the log must still commit
        log = AuditLog(conn, schema=schema)
        log.setup()
        log.record(AuditEvent("alice", "read", "api"))
    with psycopg.connect(pg_uri) as other:
        count = other.execute(f"SELECT count(*) FROM {schema}.vault_audit").fetchone()
    assert count == (1,)
