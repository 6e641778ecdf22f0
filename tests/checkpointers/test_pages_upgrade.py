"""A data dir written before element pages (saver migrations 0001-0002) upgrades in place.

``data/saver_v2_thread.json.gz`` holds every row of a thread that the saver as of commit
5f7ba67 wrote (a ten-turn graph conversation of 50 human, AI, tool-calling and tool
messages, one element row per message). The test loads those rows into a schema at saver
migration 2, runs today's ``setup()`` (migration 3 adds the pages table and touches no row),
and checks that every checkpoint reads back as written, that the thread's next turn stores
its first 32 elements as a page, and that everything still reads back the same afterwards.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from psycopg.types.json import Jsonb

from langmem_vault.checkpointers import AsyncVaultSaver
from langmem_vault.db import _migrations as migrations
from langmem_vault.db._connection import Database
from tests.support.savers import AnySaver, call

FIXTURE = Path(__file__).parent / "data" / "saver_v2_thread.json.gz"
THREAD = {"configurable": {"thread_id": "legacy-thread", "user_id": "legacy-user"}}
JSON_COLUMNS = {"channel_versions", "metadata"}
SKIPPED_COLUMNS = {"started_at", "last_activity"}  # defaults will do


def load_v2_rows(pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The schema at saver migration 2, holding the fixture's rows as 5f7ba67 wrote them."""
    every = migrations.load_migrations("saver")
    assert [m.version for m in every][:2] == [1, 2]
    with monkeypatch.context() as m:
        m.setattr(migrations, "load_migrations", lambda track: every[:2])
        with psycopg.connect(pg_uri) as conn:
            Database(conn).run(migrations.migrate_plan(schema, "saver"))
    dump = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    with psycopg.connect(pg_uri) as conn:
        for table, data in dump["tables"].items():
            columns = [c for c in data["columns"] if c not in SKIPPED_COLUMNS]
            for row in data["rows"]:
                values = []
                for c in columns:
                    v = row[c]
                    if isinstance(v, dict) and set(v) == {"hex"}:
                        v = bytes.fromhex(v["hex"])
                    elif c in JSON_COLUMNS:
                        v = Jsonb(v)
                    values.append(v)
                conn.execute(
                    f"INSERT INTO {schema}.{table} ({', '.join(columns)})"
                    f" VALUES ({', '.join(['%s'] * len(columns))})",
                    values,
                )
    return dump


def chat(saver: AnySaver) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"reply {len(state['messages'])}", id="new-reply")]}

    return StateGraph(MessagesState).add_node(reply).add_edge(START, "reply").compile(saver)


async def history(saver: AnySaver) -> list[list[tuple[str, Any, Any]]]:
    """Every checkpoint's messages as (type, content, id), newest first."""
    found = await call(saver, "list", {"configurable": {"thread_id": "legacy-thread"}})
    return [
        [(m.type, m.content, m.id) for m in t.checkpoint["channel_values"].get("messages", [])]
        for t in found
    ]


def stored(pg_uri: str, schema: str) -> tuple[int, list[tuple[int, int]]]:
    with psycopg.connect(pg_uri) as conn:
        (loose,) = conn.execute(f"SELECT count(*) FROM {schema}.saver_elements").fetchone() or (0,)
        pages = conn.execute(
            f"SELECT first_id, last_id FROM {schema}.saver_pages ORDER BY 1"
        ).fetchall()
    return int(loose), [(int(a), int(b)) for a, b in pages]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_threads_written_before_pages_read_and_grow_after_the_upgrade(
    kind: str, pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = load_v2_rows(pg_uri, schema, monkeypatch)
    expected = [tuple(x) for x in dump["expected_types_contents"]]
    with psycopg.connect(pg_uri) as conn:
        assert conn.execute(f"SELECT count(*) FROM {schema}.saver_elements").fetchone() == (50,)

    from langmem_vault.checkpointers import VaultSaver

    opened: Any = (
        VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2)
        if kind == "sync"
        else AsyncVaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2)
    )
    if kind == "sync":
        saver = opened.__enter__()
    else:
        saver = await opened.__aenter__()
    try:
        await call(saver, "setup")
        with psycopg.connect(pg_uri) as conn:
            versions = conn.execute(
                f"SELECT version FROM {schema}.vault_migrations WHERE track = 'saver'"
            ).fetchall()
        assert sorted(versions) == [(1,), (2,), (3,), (4,)]
        assert stored(pg_uri, schema) == (50, [])  # the migration moved no row

        before = await history(saver)
        assert len(before) == 30 and before[0] == expected

        graph = chat(saver)
        new_turn = {"messages": [("user", "one more question")]}
        if kind == "sync":
            graph.invoke(new_turn, THREAD)
        else:
            await graph.ainvoke(new_turn, THREAD)
        # The put holding ids 1-32 stored them as a page; the rest stay rows of their own.
        assert stored(pg_uri, schema) == (52 - 32, [(1, 32)])

        after = await history(saver)
        assert after[len(after) - len(before) :] == before  # old checkpoints read the same
        assert after[0][:50] == expected
        assert [(t, c) for t, c, _ in after[0][50:]] == [
            ("human", "one more question"),
            ("ai", "reply 51"),
        ]
    finally:
        if kind == "sync":
            opened.__exit__(None, None, None)
        else:
            await opened.__aexit__(None, None, None)
