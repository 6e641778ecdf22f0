"""Every hot statement of the saver names one tenant (issue 28): with its tables hash-partitioned
by tenant (``setup(partitions=N)``), ``EXPLAIN ANALYZE`` of each statement a user's call sends
reads one partition of each table, that user's (the thread's owner). The stand-in for Citus's
router planner, as tests/store/test_routing.py is for the store.

Checked: a cold saver's first read of a user's own thread (no lookup by thread id: the caller's
user id is the tenant), list, put (with enough messages to store a page of elements),
put_writes, a whole turn of a graph, the delta history read, and delete_thread. Not routed,
so not here: the lookup by thread id alone (_tenancy.py) that a call about a thread this
process has not seen makes when the caller's user is not the owner (another user, or code
with no user), and a delete_thread of a thread this process never saw.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from langmem_vault._tenants import SHARED_TENANT
from langmem_vault.checkpointers import VaultSaver
from langmem_vault.checkpointers._base import TABLES
from tests.checkpointers.test_graphs import chat_graph
from tests.support.routing import assert_reads_within, partition_of, partitions_read, recorded

PARTITIONS = 4
USERS = [f"u{n}" for n in range(6)]
_PARTITION = re.compile(r"^(saver_[a-z]+)_p(\d+)$")


def conf(user: str | None, **more: str) -> dict[str, Any]:
    user_part = {"user_id": user} if user else {}
    return {"configurable": {"thread_id": f"chat-{user}", **user_part, **more}}


def _put(saver: VaultSaver, user: str) -> None:
    latest = saver.get_tuple(conf(user))
    assert latest is not None
    checkpoint = empty_checkpoint()
    version = saver.get_next_version(None)
    checkpoint["channel_values"] = {"messages": [HumanMessage(f"m{n}") for n in range(40)]}
    checkpoint["channel_versions"] = {"messages": version}
    saver.put(
        latest.config | conf(user),
        checkpoint,
        {"source": "update", "step": 9, "parents": {}},
        {"messages": version},
    )


def _put_writes(saver: VaultSaver, user: str) -> None:
    latest = saver.get_tuple(conf(user))
    assert latest is not None
    config = conf(user, checkpoint_id=latest.config["configurable"]["checkpoint_id"])
    saver.put_writes(config, [("messages", [HumanMessage("pending")])], "task-1")


OPS: dict[str, Callable[[VaultSaver, VaultSaver, str], Any]] = {
    "get_tuple, cold": lambda warm, cold, u: cold.get_tuple(conf(u)),
    "list": lambda warm, cold, u: list(cold.list(conf(u), limit=3)),
    "a turn": lambda warm, cold, u: chat_graph(warm).invoke(
        {"messages": [HumanMessage("and now?")]}, conf(u)
    ),
    "delta history": lambda warm, cold, u: warm.get_delta_channel_history(
        config=conf(u), channels=["messages"]
    ),
    "put_writes": lambda warm, cold, u: _put_writes(warm, u),
    "put": lambda warm, cold, u: _put(warm, u),
    "delete_thread": lambda warm, cold, u: warm.delete_thread(f"chat-{u}"),  # the last
}


@pytest.fixture(scope="module")
def schema(pg_uri: str) -> Iterator[str]:
    """One schema for the module: the operations run in order, delete_thread last."""
    name = "saver_routing_" + str(abs(hash(pg_uri)) % 10**8)
    yield name
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture(scope="module")
def routed_savers(pg_uri: str, schema: str) -> Iterator[tuple[VaultSaver, VaultSaver]]:
    """Two savers on the same partitioned tables: one that wrote six users' threads and a
    thread of no user (it knows their tenants), one that has seen none of them."""
    with (
        VaultSaver.from_conn_string(pg_uri, schema=schema) as warm,
        VaultSaver.from_conn_string(pg_uri, schema=schema) as cold,
    ):
        warm.setup(partitions=PARTITIONS)
        graph = chat_graph(warm)
        for user in [*USERS, None]:
            graph.invoke({"messages": [HumanMessage("hello")]}, conf(user))
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"ANALYZE {', '.join(f'{schema}.{t}' for t in _tables(conn, schema))}")
        yield warm, cold


def _tables(conn: psycopg.Connection[Any], schema: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT relname::text FROM pg_class WHERE relnamespace = to_regnamespace(%s)"
            " AND relkind = 'p'",
            (schema,),
        )
    ]


def _partition(uri: str, schema: str, tenant: str) -> int:
    match = _PARTITION.match(partition_of(uri, schema, "saver_threads", tenant))
    assert match
    return int(match.group(2))


def test_setup_partitions_every_saver_table(
    routed_savers: tuple[VaultSaver, VaultSaver], pg_uri: str, schema: str
) -> None:
    with psycopg.connect(pg_uri) as conn:
        assert sorted(_tables(conn, schema)) == sorted(TABLES)
        tenants = {r[0] for r in conn.execute(f"SELECT tenant FROM {schema}.saver_checkpoints")}
    assert tenants == {*USERS, SHARED_TENANT}
    warm, _ = routed_savers
    warm.setup(partitions=PARTITIONS)  # again: nothing to do
    with pytest.raises(ValueError, match="already in 4 partitions"):
        warm.setup(partitions=8)


@pytest.mark.parametrize("name", list(OPS))
def test_each_hot_statement_reads_one_partition(
    routed_savers: tuple[VaultSaver, VaultSaver], pg_uri: str, schema: str, name: str
) -> None:
    warm, cold = routed_savers
    mine = _partition(pg_uri, schema, "u3")
    assert {_partition(pg_uri, schema, u) for u in USERS} != {mine}  # others elsewhere
    with recorded() as sent:
        OPS[name](warm, cold, "u3")
    reads = partitions_read(pg_uri, schema, sent, "saver_", _PARTITION)
    assert_reads_within(reads, {mine}, name, "saver's tables")


def test_a_users_thread_list_and_erase_read_their_partition_and_the_shared_one(
    routed_savers: tuple[VaultSaver, VaultSaver], pg_uri: str, schema: str
) -> None:
    """``list_threads`` and ``delete_user_threads`` name the user's tenant and the shared one
    (a thread created with no user and written by the user since is the user's, but stays in
    the shared tenant): no other partition is read."""
    warm, cold = routed_savers
    shared = _partition(pg_uri, schema, SHARED_TENANT)
    user = next(u for u in reversed(USERS) if u != "u3" and _partition(pg_uri, schema, u) != shared)
    mine = _partition(pg_uri, schema, user)
    graph = chat_graph(warm)
    adopted = {"thread_id": f"adopted-{user}"}
    graph.invoke({"messages": [HumanMessage("made with no user")]}, {"configurable": adopted})
    graph.invoke({"messages": [HumanMessage("mine now")]}, conf(user, **adopted))
    for name, call in (
        ("list_threads", lambda: [t.thread_id for t in cold.list_threads(user)]),
        ("delete_user_threads", lambda: cold.delete_user_threads(user).thread_ids),
    ):
        with recorded() as sent:
            threads = call()
        assert sorted(threads) == sorted([f"chat-{user}", f"adopted-{user}"]), name
        reads = partitions_read(pg_uri, schema, sent, "saver_", _PARTITION)
        assert reads, f"{name}: no statement read the saver's tables"
        for scanned in reads:
            assert {p for _, p in scanned} <= {mine, shared}, f"{name}: read {sorted(scanned)}"
        assert any((mine_read := {p for _, p in s}) and mine in mine_read for s in reads), name
