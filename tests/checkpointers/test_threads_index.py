"""The per-user thread index, erasing a user's threads, and retention."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from tests.support.savers import AnySaver, call, checkpoint, config, meta, put_chain


def tid() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


async def converse(saver: AnySaver, thread_id: str, turns: int, **configurable: Any) -> None:
    messages: list[Any] = []
    parent = None
    version: str | None = None
    for i in range(turns):
        messages = [*messages, HumanMessage(f"question {i} " + "x" * 100), AIMessage(f"answer {i}")]
        version = saver.get_next_version(version, None)
        cp = checkpoint({"messages": messages}, {"messages": version})
        cfg = config(thread_id, checkpoint_id=parent, **configurable)
        out = await call(saver, "put", cfg, cp, meta(i), {"messages": version})
        parent = out["configurable"]["checkpoint_id"]


async def test_threads_are_indexed_per_user_with_title_and_count(any_saver: AnySaver) -> None:
    a, b, other = tid(), tid(), tid()
    await converse(any_saver, a, 2, user_id="alice")
    await converse(any_saver, b, 3, langgraph_user_id="alice")  # the fallback key
    await converse(any_saver, other, 1, user_id="bob")
    threads = await call(any_saver, "list_threads", "alice")
    assert [t.thread_id for t in threads] == [b, a]  # most recent activity first
    assert threads[0].message_count == 6
    assert threads[1].message_count == 4
    assert threads[1].title == "question 0 " + "x" * 68 + "…"
    assert len(threads[1].title) == 80
    assert threads[0].started_at <= threads[0].last_activity
    assert [t.thread_id for t in await call(any_saver, "list_threads", "bob")] == [other]
    assert await call(any_saver, "list_threads", "nobody") == []
    with pytest.raises(ValueError, match="user_id"):
        await call(any_saver, "list_threads", "")


async def test_delete_user_threads_removes_everything_of_that_user_only(
    any_saver: AnySaver,
) -> None:
    a, b, keep = tid(), tid(), tid()
    await converse(any_saver, a, 3, user_id="carol")
    await converse(any_saver, b, 1, user_id="carol")
    await converse(any_saver, keep, 2, user_id="dave")
    latest = await call(any_saver, "get_tuple", config(a))
    await call(any_saver, "put_writes", latest.config, [("messages", ["w"])], "task")
    removed = await call(any_saver, "delete_user_threads", "carol")
    assert removed.thread_ids == sorted([a, b])
    assert removed.checkpoints == 4
    assert removed.writes == 1
    assert removed.elements > 0 and removed.blobs > 0
    for t in (a, b):
        assert await call(any_saver, "list", {"configurable": {"thread_id": t}}) == []
    assert await call(any_saver, "list_threads", "carol") == []
    assert len(await call(any_saver, "list", config(keep))) == 2
    again = await call(any_saver, "delete_user_threads", "carol")
    assert again.thread_ids == [] and again.checkpoints == 0


async def test_retention_keeps_last_n_and_drops_idle_threads(
    any_saver: AnySaver, pg_uri: str, schema: str
) -> None:
    long, idle, short = tid(), tid(), tid()
    await converse(any_saver, long, 5, user_id="erin")
    await put_chain(any_saver, idle, 2)
    await put_chain(any_saver, short, 2)
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(
            f"UPDATE {schema}.saver_threads SET last_activity = now() - interval '3 days'"
            " WHERE thread_id = %s",
            (idle,),
        )
    report = await call(
        any_saver, "apply_retention", keep_last=2, idle_longer_than=timedelta(days=1)
    )
    assert report.idle_threads_deleted == [idle]
    assert report.threads_trimmed == [long]
    assert report.checkpoints_deleted == 2 + 3
    kept = await call(any_saver, "list", config(long))
    assert len(kept) == 2
    assert len(kept[0].checkpoint["channel_values"]["messages"]) == 10
    assert len(kept[1].checkpoint["channel_values"]["messages"]) == 8
    assert await call(any_saver, "list", config(idle)) == []
    assert len(await call(any_saver, "list", config(short))) == 2
    with pytest.raises(ValueError, match="keep_last"):
        await call(any_saver, "apply_retention", keep_last=0)
    with pytest.raises(ValueError, match="pass keep_last"):
        await call(any_saver, "apply_retention")
