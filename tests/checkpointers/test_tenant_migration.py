"""The saver's tenant column (issue 28): threads written before saver/0004 migrate in place.
Every row gets its thread's tenant (the owner, '' for a thread of no user), every checkpoint
reads back as before, the owner check still refuses another user, and the thread goes on."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage

from langmem_vault.checkpointers import ThreadAccessError, VaultSaver
from langmem_vault.checkpointers._base import TABLES
from langmem_vault.db import _migrations as migrations
from langmem_vault.db._connection import Database
from tests.checkpointers.test_graphs import chat_graph, texts

THREADS = {"t-alice": "alice", "t-bob": "bob", "t-nobody": None}


def conf(thread: str, user: str | None) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread} | ({"user_id": user} if user else {})}


def _columns(conn: psycopg.Connection[Any], schema: str, table: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT column_name::text FROM information_schema.columns"
            " WHERE table_schema = %s AND table_name = %s AND column_name <> 'tenant'"
            " ORDER BY ordinal_position",
            (schema, table),
        )
    ]


def _history(saver: VaultSaver, thread: str) -> list[tuple[str, list[str]]]:
    return [
        (
            t.config["configurable"]["checkpoint_id"],
            texts(t.checkpoint["channel_values"].get("messages", [])),
        )
        for t in saver.list(conf(thread, None))
    ]


def test_threads_written_before_the_tenant_column_migrate_in_place(
    pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = f"{schema}_src"
    with VaultSaver.from_conn_string(pg_uri, schema=source) as saver:
        saver.setup()
        graph = chat_graph(saver)
        for thread, user in THREADS.items():
            for turn in range(2):
                graph.invoke({"messages": [HumanMessage(f"{thread} {turn}")]}, conf(thread, user))
        before = {thread: _history(saver, thread) for thread in THREADS}
    # The schema as saver/0003 left it, holding the same rows (without a tenant).
    every = migrations.load_migrations("saver")
    assert [m.version for m in every][:4] == [1, 2, 3, 4]
    with monkeypatch.context() as m:
        m.setattr(migrations, "load_migrations", lambda track: every[:3])
        with psycopg.connect(pg_uri) as conn:
            Database(conn).run(migrations.migrate_plan(schema, "saver"))
    with psycopg.connect(pg_uri) as conn:
        for table in TABLES:
            cols = ", ".join(_columns(conn, schema, table))
            conn.execute(
                f"INSERT INTO {schema}.{table} ({cols}) SELECT {cols} FROM {source}.{table}"
            )
        conn.execute(f"DROP SCHEMA {source} CASCADE")

    with VaultSaver.from_conn_string(pg_uri, schema=schema) as saver:
        saver.setup()
        owners = {t: u or "" for t, u in THREADS.items()}
        with psycopg.connect(pg_uri) as conn:
            for table in TABLES:
                found = dict(
                    conn.execute(f"SELECT DISTINCT thread_id, tenant FROM {schema}.{table}")
                )
                assert found.items() <= owners.items(), table
                if table in ("saver_threads", "saver_checkpoints", "saver_blobs"):
                    assert found == owners, table
        assert {thread: _history(saver, thread) for thread in THREADS} == before
        graph = chat_graph(saver)
        state = graph.get_state(conf("t-alice", "alice"))
        assert texts(state.values["messages"])[-1] == "ai:echo t-alice 1"
        with pytest.raises(ThreadAccessError):
            graph.get_state(conf("t-alice", "bob"))
        out = graph.invoke({"messages": [HumanMessage("again")]}, conf("t-alice", "alice"))
        assert texts(out["messages"])[-2:] == ["human:again", "ai:echo again"]
        assert len(_history(saver, "t-alice")) == len(before["t-alice"]) + 3
        # a thread of no user is read by any user, and stays in the shared tenant
        assert graph.get_state(conf("t-nobody", "bob")).values["messages"]
