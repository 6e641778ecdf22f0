"""Reads on a real streaming replica (store/_replicas.py), sync and async.

The replica is made from the embedded server's binaries (tests/support/replica.py). Pausing
its replay (``pg_wal_replay_pause``) makes its lag as long as the test needs: a row written
on the primary by someone else is then invisible to a read that went to the replica, which
proves where reads go; a row this store wrote is visible at once (read-your-writes)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp

from langmem_vault._tenants import TenantRule
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.replica import streaming_replica

NS = ("memories", "u1", "semantic")


@pytest.fixture(scope="session")
def replica_uri(pg_uri: str) -> Iterator[str]:
    with streaming_replica(pg_uri) as uri:
        yield uri


def _replay(uri: str, on: bool) -> None:
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("SELECT pg_wal_replay_resume()" if on else "SELECT pg_wal_replay_pause()")


def _caught_up(primary: str, replica: str) -> None:
    with psycopg.connect(primary, autocommit=True) as p, psycopg.connect(replica) as r:
        row = p.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert row is not None
        deadline = time.monotonic() + 30
        while not r.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (row[0],)).fetchone()[
            0
        ]:  # type: ignore[index]
            assert time.monotonic() < deadline, "the replica did not catch up"
            time.sleep(0.05)


async def _batch(store: Any, ops: list[Any]) -> list[Any]:
    return await store.abatch(ops) if isinstance(store, AsyncVaultStore) else store.batch(ops)


@pytest.fixture(params=["vault", "avault"])
async def store(request: pytest.FixtureRequest, pg_uri: str, replica_uri: str, schema: str) -> Any:
    kw = {"schema": schema, "read_conn_string": replica_uri}
    if request.param == "vault":
        with VaultStore.from_conn_string(pg_uri, **kw) as s:
            s.setup()
            yield s
    else:
        async with AsyncVaultStore.from_conn_string(pg_uri, **kw) as a:
            await a.setup()
            yield a


def test_the_replica_is_a_streaming_standby(pg_uri: str, replica_uri: str) -> None:
    with psycopg.connect(replica_uri) as r, psycopg.connect(pg_uri) as p:
        assert r.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        assert p.execute("SELECT pg_is_in_recovery()").fetchone() == (False,)
        assert r.execute("SELECT status FROM pg_stat_wal_receiver").fetchone() == ("streaming",)


async def test_reads_go_to_the_replica_and_see_this_stores_writes(
    store: Any, pg_uri: str, replica_uri: str, schema: str
) -> None:
    _caught_up(pg_uri, replica_uri)
    _replay(replica_uri, False)
    try:
        # A write of this store, read at once: the replica has not replayed it, the primary
        # answers.
        await _batch(store, [PutOp(NS, "mine", {"text": "green tea"})])
        (item,) = await _batch(store, [GetOp(NS, "mine")])
        assert item is not None and item.value == {"text": "green tea"}
        (found,) = await _batch(store, [SearchOp(NS)])
        assert [i.key for i in found] == ["mine"]
    finally:
        _replay(replica_uri, True)
    _caught_up(pg_uri, replica_uri)
    (item,) = await _batch(store, [GetOp(NS, "mine")])  # replayed: read there, forgotten
    assert item is not None
    _replay(replica_uri, False)
    try:
        # Someone else's write, not replayed: a read on the replica does not see it.
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(
                f"INSERT INTO {schema}.store_items (tenant, prefix, key, namespace, value) "
                "VALUES (%s, %s, 'theirs', %s, '{}')",
                (TenantRule().tenant_of(NS), ".".join(NS), list(NS)),
            )
        (theirs, mine) = await _batch(store, [GetOp(NS, "theirs"), GetOp(NS, "mine")])
        assert theirs is None and mine is not None
        # This store writes again: its next read goes to the primary, which has both.
        await _batch(store, [PutOp(NS, "later", {"text": "black coffee"})])
        (found,) = await _batch(store, [SearchOp(NS)])
        assert {i.key for i in found} == {"mine", "theirs", "later"}
    finally:
        _replay(replica_uri, True)
    _caught_up(pg_uri, replica_uri)
    (found,) = await _batch(store, [SearchOp(NS)])
    assert {i.key for i in found} == {"mine", "theirs", "later"}
