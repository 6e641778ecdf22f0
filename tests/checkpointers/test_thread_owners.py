"""A thread belongs to the user it was created under: another user_id is refused, by default."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage

from langmem_vault.checkpointers import AsyncVaultSaver, ThreadAccessError, VaultSaver
from langmem_vault.checkpointers._queries import SELECT_LATEST_SQL, load_sql
from tests.checkpointers.test_graphs import Runner, chat_graph, texts


def conf(thread: str, user: str | None) -> dict[str, Any]:
    configurable = {"thread_id": thread} | ({"user_id": user} if user else {})
    return {"configurable": configurable}


async def _scenario(saver: VaultSaver | AsyncVaultSaver) -> None:
    run = Runner(chat_graph(saver), isinstance(saver, AsyncVaultSaver))
    await run.invoke({"messages": [HumanMessage("alice's secret")]}, conf("t1", "alice"))
    # bob can neither read alice's thread nor write to it
    with pytest.raises(ThreadAccessError, match="belongs to another user") as refused:
        await run.invoke({"messages": [HumanMessage("what did she say?")]}, conf("t1", "bob"))
    assert "alice" not in str(refused.value)  # the error does not name the owner
    with pytest.raises(ThreadAccessError):
        await run.state(conf("t1", "bob"))
    with pytest.raises(ThreadAccessError):
        await run.history(conf("t1", "bob"))
    # alice's thread is unchanged and still hers
    state = await run.state(conf("t1", "alice"))
    assert texts(state.values["messages"]) == ["human:alice's secret", "ai:echo alice's secret"]
    # bob's own thread works; a config without user_id (service code) is not a user
    await run.invoke({"messages": [HumanMessage("hi")]}, conf("t2", "bob"))
    assert len((await run.state(conf("t1", None))).values["messages"]) == 2


async def test_threads_belong_to_their_user(any_saver: VaultSaver | AsyncVaultSaver) -> None:
    await _scenario(any_saver)


def test_shared_threads_switch(pg_uri: str, schema: str) -> None:
    with VaultSaver.from_conn_string(pg_uri, schema=schema, shared_threads=True) as saver:
        saver.setup()
        graph = chat_graph(saver)
        graph.invoke({"messages": [HumanMessage("team notes")]}, conf("t", "alice"))
        out = graph.invoke({"messages": [HumanMessage("more")]}, conf("t", "bob"))
        assert texts(out["messages"])[:2] == ["human:team notes", "ai:echo team notes"]
        assert [t.thread_id for t in saver.list_threads("alice")] == ["t"]  # first owner


async def test_async_shared_threads_switch(pg_uri: str, schema: str) -> None:
    async with AsyncVaultSaver.from_conn_string(
        pg_uri, schema=schema, shared_threads=True
    ) as saver:
        await saver.setup()
        graph = chat_graph(saver)
        await graph.ainvoke({"messages": [HumanMessage("team notes")]}, conf("t", "alice"))
        out = await graph.ainvoke({"messages": [HumanMessage("more")]}, conf("t", "bob"))
        assert len(out["messages"]) == 4


async def test_a_thread_without_owner_is_read_by_any_user(
    any_saver: VaultSaver | AsyncVaultSaver,
) -> None:
    run = Runner(chat_graph(any_saver), isinstance(any_saver, AsyncVaultSaver))
    await run.invoke({"messages": [HumanMessage("service note")]}, conf("t0", None))
    state = await run.state(conf("t0", "bob"))
    assert texts(state.values["messages"]) == ["human:service note", "ai:echo service note"]
    assert len(await run.history(conf("t0", "bob"))) >= 2


def test_another_users_read_sends_no_rows_of_the_thread(pg_uri: str, schema: str) -> None:
    # The owner check travels inside get_tuple's and list's statement: refused, it sends
    # only the owner row, never the thread's checkpoints, values or messages.
    with VaultSaver.from_conn_string(pg_uri, schema=schema) as saver:
        saver.setup()
        chat_graph(saver).invoke(
            {"messages": [HumanMessage("alice's secret")]}, conf("t1", "alice")
        )
    params = {"tenant": "alice", "thread_id": "t1", "checkpoint_ns": "", "checkpoint_id": None}
    listing = "SELECT * FROM {schema}.saver_checkpoints WHERE thread_id = %(thread_id)s"
    with psycopg.connect(pg_uri) as conn:
        for select in (SELECT_LATEST_SQL, listing):
            sql = load_sql(select, schema, True)

            def kinds(user: str, sql: str = sql) -> set[str]:
                return {r[0] for r in conn.execute(sql, {**params, "user_id": user})}

            assert kinds("bob") == {"o"}
            assert kinds("alice") >= {"o", "c", "b"}


@pytest.mark.parametrize("how", ["delete_user_threads", "apply_retention"])
async def test_a_thread_id_made_again_after_its_owner_was_deleted_takes_the_new_tenant(
    any_saver: VaultSaver | AsyncVaultSaver, pg_uri: str, schema: str, how: str
) -> None:
    """The saver learns a thread's tenant once per process; deleting a user's threads (or
    retention dropping idle ones) forgets it, so the same thread id made again by bob is
    stored under bob's tenant (the old one would put bob's rows in alice's partition, and
    alice's erase would take them)."""
    is_async = isinstance(any_saver, AsyncVaultSaver)
    run = Runner(chat_graph(any_saver), is_async)
    await run.invoke({"messages": [HumanMessage("alice here")]}, conf("t", "alice"))
    if how == "delete_user_threads":
        args: tuple[Any, ...] = ("alice",)
        kwargs: dict[str, Any] = {}
    else:
        args, kwargs = (), {"idle_longer_than": timedelta(microseconds=1)}
    if is_async:
        await getattr(any_saver, "a" + how)(*args, **kwargs)
    else:
        getattr(any_saver, how)(*args, **kwargs)
    await run.invoke({"messages": [HumanMessage("bob here")]}, conf("t", "bob"))
    with psycopg.connect(pg_uri) as conn:
        tenants = conn.execute(
            f"SELECT DISTINCT tenant FROM {schema}.saver_checkpoints WHERE thread_id = 't'"
        ).fetchall()
    assert tenants == [("bob",)]
