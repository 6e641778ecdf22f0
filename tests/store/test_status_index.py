"""store/0010 and 0011 (issue 28): the status indexes are built online (CONCURRENTLY,
partition by partition, again after an interrupted build) and recorded once built; a store's
status counts walk every row until it knows store/0010 recorded, then read only the rows its
index holds, and once store/0011 is, count the statuses no time changes in their own indexes
(store/0010's then dropped). The counts are Python's labels either way. Sync and async."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp

from langmem_vault.db._status_counts_index import ENDS, FIXED
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store import _page_plan as page_plan
from langmem_vault.store._pages import CountOp
from tests.store.test_pages import _batch
from tests.store.test_status_counts import EDGES, FACTS, LABELS, RULES, TALKS, _expected
from tests.support.online import forget, index_state
from tests.support.routing import recorded

STATUS_INDEX = "store_items_status_idx"
#: store/0011's indexes
COUNTS = [f"store_items_status_{s}" for k in FIXED.values() for _, s, _ in k] + [
    f"store_items_status_{kind}_ends_idx" for kind in ENDS
]


def _before_0010(uri: str, schema: str) -> None:
    """The database as the code before store/0010 left it, with what a crashed CREATE INDEX
    CONCURRENTLY of the index leaves (an invalid index of its name, on the table or on the
    first partition); store/0011 not applied either."""
    for name in COUNTS:
        forget(uri, schema, name, 11)
    forget(uri, schema, STATUS_INDEX, 10)
    with psycopg.connect(uri, autocommit=True) as conn:
        leaves = conn.execute(
            "SELECT c.relname::text FROM pg_class AS c WHERE c.relkind = 'r'"
            " AND (c.oid = %s::regclass OR c.oid IN (SELECT relid FROM pg_partition_tree(%s)))"
            " ORDER BY 1",
            (f"{schema}.store_items",) * 2,
        ).fetchall()
        leaf = next(  # one that holds two rows or more
            name
            for (name,) in leaves
            if conn.execute(f"SELECT count(*) > 1 FROM {schema}.{name}").fetchone() == (True,)
        )
        with pytest.raises(psycopg.errors.UniqueViolation):  # ((1)): every row the same
            conn.execute(
                f"CREATE UNIQUE INDEX CONCURRENTLY {leaf}_status_idx ON {schema}.{leaf}"
                " ((1)) WHERE true"
            )


@pytest.mark.parametrize(("is_async", "partitions"), [(False, 0), (True, 4)])
async def test_the_status_index_is_built_online_and_counted_through_once_recorded(
    pg_uri: str, schema: str, is_async: bool, partitions: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = [(ns, v) for _ in range(2) for ns, v in EDGES] + [(FACTS, {})] * 5
    with VaultStore.from_conn_string(pg_uri, schema=schema) as first:
        first.setup(partitions=partitions)
        first.batch([PutOp(ns, f"k{n}", v, index=False) for n, (ns, v) in enumerate(values)])
    _before_0010(pg_uri, schema)
    versions, indexes = index_state(pg_uri, schema, "status_idx")
    assert 10 not in versions and [valid for _, valid in indexes] == [False], indexes
    walks: list[int] = []
    walk = page_plan._walk_counts

    def counted_walk(*args: Any) -> Any:
        walks.append(1)
        return walk(*args)

    monkeypatch.setattr(page_plan, "_walk_counts", counted_walk)
    now = datetime.now(UTC)
    op = CountOp((FACTS, RULES, TALKS), LABELS, now=now)

    async def before_and_after(store: Any) -> tuple[Any, int, Any, list[Any]]:
        # the same store: before the migration (it walks), then after setup() recorded it
        (before,) = await _batch(store, [op])
        walked = len(walks)
        with recorded() as sent:
            await (store.setup() if is_async else _sync(store.setup))
        (after,) = await _batch(store, [op])
        return before, walked, after, sent

    if is_async:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as astore:
            before, walked, after, sent = await before_and_after(astore)
    else:
        with VaultStore.from_conn_string(pg_uri, schema=schema) as sstore:
            before, walked, after, sent = await before_and_after(sstore)
    expected = _expected(values, now)
    assert before == expected and walked == 1
    assert after == expected and len(walks) == 1  # after: the indexes' path, no walk
    versions, indexes = index_state(pg_uri, schema, "status_idx")
    assert versions == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    # store/0010's leftover dropped and built again, then dropped by store/0011
    assert indexes == []
    for name in COUNTS:  # partitioned: the partitioned index and each partition's, valid
        _, indexes = index_state(pg_uri, schema, name.removeprefix("store_items"))
        own = [f"store_items_p{n}{name.removeprefix('store_items')}" for n in range(partitions)]
        assert indexes == [(n, True) for n in sorted([name, *own])], indexes
    if not is_async:  # sync cursors are the ones recorded: the builds were concurrent
        built = [str(q) for q, _ in sent if "status_" in str(q) and "CREATE" in str(q)]
        assert len(built) >= 7 and all("CONCURRENTLY" in q for q in built), built


async def _sync(call: Any) -> Any:
    return call()


_WAITING = """SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
AND query LIKE '%%status_idx%%' AND wait_event_type = 'Lock'"""


@pytest.mark.parametrize("is_async", [False, True])
async def test_writes_go_on_while_the_index_is_built(
    pg_uri: str, schema: str, is_async: bool
) -> None:
    """While the build waits for a write that was open when it began (CONCURRENTLY does, as
    a plain CREATE INDEX would), a new write goes through: a plain build would queue it
    behind its own lock (1.4 s at 1M rows without any open write)."""
    with VaultStore.from_conn_string(pg_uri, schema=schema) as first:
        first.setup()
        first.batch([PutOp(FACTS, f"k{n}", {"text": "x"}, index=False) for n in range(20)])
    forget(pg_uri, schema, STATUS_INDEX, 10)
    update = f"UPDATE {schema}.store_items SET value = value WHERE key = %s"
    with (
        psycopg.connect(pg_uri) as open_write,
        psycopg.connect(pg_uri, autocommit=True) as other,
    ):
        open_write.execute(update, ("k0",))  # its transaction stays open
        other.execute("SET lock_timeout = '3s'")
        if is_async:
            async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as astore:
                build = asyncio.ensure_future(astore.setup())
                try:
                    while other.execute(_WAITING).fetchone() != (1,):
                        await asyncio.sleep(0.05)
                    other.execute(update, ("k1",))  # not queued behind the build
                finally:
                    open_write.commit()
                await asyncio.wait_for(build, 30)
        else:
            with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
                thread = threading.Thread(target=store.setup)
                thread.start()
                try:
                    deadline = time.monotonic() + 30
                    while other.execute(_WAITING).fetchone() != (1,):
                        assert time.monotonic() < deadline, "the build never waited"
                        time.sleep(0.05)
                    other.execute(update, ("k1",))
                finally:
                    open_write.commit()
                    thread.join(30)
    versions, indexes = index_state(pg_uri, schema, "status_idx")
    assert 10 in versions and indexes == [(STATUS_INDEX, True)]


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_partitioned_build_gives_up_its_brief_lock_rather_than_queue_writes(
    pg_uri: str, schema: str, is_async: bool
) -> None:
    """On a partitioned table the parent's index and each ATTACH take the table's lock for a
    moment: behind a write left open, setup() waits BRIEF_LOCK at most (every new write
    would queue behind it), raises, and its next run builds the index."""
    with VaultStore.from_conn_string(pg_uri, schema=schema) as first:
        first.setup(partitions=4)
        first.batch([PutOp(FACTS, f"k{n}", {"text": "x"}, index=False) for n in range(20)])
    forget(pg_uri, schema, STATUS_INDEX, 10)
    update = f"UPDATE {schema}.store_items SET value = value WHERE key = %s"
    failed: list[BaseException] = []

    def sync_setup() -> None:
        with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
            try:
                store.setup()
            except psycopg.Error as error:
                failed.append(error)

    with psycopg.connect(pg_uri) as open_write:
        open_write.execute(update, ("k0",))  # its transaction stays open
        try:
            if is_async:
                async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as astore:
                    try:
                        await asyncio.wait_for(astore.setup(), 10)
                    except psycopg.Error as error:
                        failed.append(error)
            else:
                thread = threading.Thread(target=sync_setup)
                thread.start()
                thread.join(10)
                assert not thread.is_alive(), "setup() queued behind the open write"
        finally:
            open_write.commit()
    assert [type(e) for e in failed] == [psycopg.errors.LockNotAvailable], failed
    versions, _ = index_state(pg_uri, schema, "status_idx")
    assert 10 not in versions
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
    versions, indexes = index_state(pg_uri, schema, "status_idx")
    assert 10 in versions and all(valid for _, valid in indexes) and len(indexes) == 5
