"""Long list channels are stored one element at a time, and read back exactly."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from saver_helpers import AnySaver, call, checkpoint, config, meta

from langmem_vault.checkpointers.codec import ELEMENTS_TYPE


def message(i: int) -> Any:
    text = f"turn {i}: " + "lorem ipsum dolor sit amet " * 4
    if i % 3 == 0:
        return HumanMessage(text, id=f"h{i}")
    if i % 3 == 1:
        return AIMessage(
            text, id=f"a{i}", tool_calls=[{"name": "f", "args": {"i": i}, "id": f"c{i}"}]
        )
    return ToolMessage(text, id=f"m{i}", tool_call_id=f"c{i - 1}")


def rows(pg_uri: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(pg_uri) as conn:
        return conn.execute(sql, args).fetchall()


async def put_messages(
    saver: AnySaver, thread_id: str, lists: list[list[Any]]
) -> list[dict[str, Any]]:
    """One checkpoint per list, as a growing conversation would write them."""
    stored: list[dict[str, Any]] = []
    parent = None
    version: str | None = None
    for step, messages in enumerate(lists):
        version = saver.get_next_version(version, None)
        cp = checkpoint({"messages": messages}, {"messages": version})
        out = await call(
            saver,
            "put",
            config(thread_id, checkpoint_id=parent),
            cp,
            meta(step),
            {"messages": version},
        )
        stored.append(out)
        parent = out["configurable"]["checkpoint_id"]
    return stored


async def test_each_message_is_stored_once_and_read_back_exactly(
    any_saver: AnySaver, pg_uri: str, schema: str
) -> None:
    t = f"t-{uuid.uuid4().hex[:8]}"
    history = [message(i) for i in range(60)]
    lists = [history[: n + 1] for n in range(60)]
    stored = await put_messages(any_saver, t, lists)

    (count,) = rows(
        pg_uri, f"SELECT count(*) FROM {schema}.saver_elements WHERE thread_id = %s", t
    )[0]
    assert count == 60
    blobs = rows(
        pg_uri,
        f"SELECT type, elems FROM {schema}.saver_blobs"
        " WHERE thread_id = %s AND channel = 'messages'",
        t,
    )
    big = [elems for type_, elems in blobs if type_ == ELEMENTS_TYPE]
    assert len(big) >= 55  # the first few lists are too small to split
    assert all(len(elems) == 2 for elems in big)  # an append-only list is one id range

    for cfg, expected in zip(stored, lists, strict=True):
        got = await call(any_saver, "get_tuple", cfg)
        assert got.checkpoint["channel_values"]["messages"] == expected
        assert [type(m) for m in got.checkpoint["channel_values"]["messages"]] == [
            type(m) for m in expected
        ]
    listed = await call(any_saver, "list", config(t), limit=3)
    assert [x.checkpoint["channel_values"]["messages"] for x in listed] == lists[::-1][:3]


async def test_edits_duplicates_and_removals_round_trip(
    any_saver: AnySaver, pg_uri: str, schema: str
) -> None:
    t = f"t-{uuid.uuid4().hex[:8]}"
    base = [message(i) for i in range(12)]
    edited = [*base[:5], HumanMessage("changed " * 20, id="h3"), *base[6:]]
    duplicated = [*edited, base[0], base[0]]
    removed = [m for i, m in enumerate(duplicated) if i % 2]
    lists = [base, edited, duplicated, removed]
    stored = await put_messages(any_saver, t, lists)
    for cfg, expected in zip(stored, lists, strict=True):
        got = await call(any_saver, "get_tuple", cfg)
        assert got.checkpoint["channel_values"]["messages"] == expected
    (count,) = rows(
        pg_uri, f"SELECT count(*) FROM {schema}.saver_elements WHERE thread_id = %s", t
    )[0]
    assert count == 13  # 12 originals + the edited one; duplicates share a row

    # Pruning drops the elements no kept checkpoint uses any more.
    await call(any_saver, "prune", [t])
    (after,) = rows(
        pg_uri, f"SELECT count(*) FROM {schema}.saver_elements WHERE thread_id = %s", t
    )[0]
    assert after == len({m.id + str(m.content) for m in removed})
    got = await call(any_saver, "get_tuple", config(t))
    assert got.checkpoint["channel_values"]["messages"] == removed


async def test_small_lists_stay_whole(any_saver: AnySaver, pg_uri: str, schema: str) -> None:
    t = f"t-{uuid.uuid4().hex[:8]}"
    values = {"ints": list(range(500)), "few": ["a", "b"], "tup": [(1, 2)]}
    cp = checkpoint(values)
    await call(any_saver, "put", config(t), cp, meta(), {k: 1 for k in values})
    types = rows(pg_uri, f"SELECT DISTINCT type FROM {schema}.saver_blobs WHERE thread_id = %s", t)
    assert ELEMENTS_TYPE not in {r[0] for r in types}
    got = await call(any_saver, "get_tuple", config(t))
    # Same as langgraph's serde gives back for the whole value (tuples come back as lists).
    expected = {
        k: any_saver.serde.loads_typed(any_saver.serde.dumps_typed(v)) for k, v in values.items()
    }
    assert got.checkpoint["channel_values"] == expected


async def test_copy_thread_keeps_elements_usable_after_source_is_deleted(
    any_saver: AnySaver,
) -> None:
    src, dst = f"s-{uuid.uuid4().hex[:8]}", f"d-{uuid.uuid4().hex[:8]}"
    lists = [[message(i) for i in range(n)] for n in (10, 20)]
    await put_messages(any_saver, src, lists)
    await call(any_saver, "copy_thread", src, dst)
    await call(any_saver, "delete_thread", src)
    got = await call(any_saver, "get_tuple", config(dst))
    assert got.checkpoint["channel_values"]["messages"] == lists[-1]
    # The copy keeps growing from where the source was, without reusing ids.
    await put_messages(any_saver, dst, [[*lists[-1], message(99)]])
    got = await call(any_saver, "get_tuple", config(dst))
    assert got.checkpoint["channel_values"]["messages"] == [*lists[-1], message(99)]
