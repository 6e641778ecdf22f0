"""Long list channels are stored one element at a time, and read back exactly."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langmem_vault.checkpointers import AsyncVaultSaver
from langmem_vault.checkpointers._codec import ELEMENTS_TYPE
from tests.support.savers import AnySaver, call, checkpoint, config, meta


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


def stored_elements(pg_uri: str, schema: str, t: str) -> tuple[int, list[tuple[int, int]]]:
    """How many loose element rows a thread has, and its pages' (first, last) ids."""
    (loose,) = rows(
        pg_uri, f"SELECT count(*) FROM {schema}.saver_elements WHERE thread_id = %s", t
    )[0]
    pages = rows(
        pg_uri,
        f"SELECT first_id, last_id FROM {schema}.saver_pages WHERE thread_id = %s ORDER BY 1",
        t,
    )
    return int(loose), [(int(a), int(b)) for a, b in pages]


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

    # Ids 1-32 went into one page when the list held them all; 33-60 are rows of their own.
    assert stored_elements(pg_uri, schema, t) == (28, [(1, 32)])
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


async def test_concurrent_puts_and_prunes_of_one_thread_stay_consistent(
    asaver: AsyncVaultSaver,
) -> None:
    """Puts racing on one thread (and a prune) number elements once; every list reads back."""
    import asyncio

    t = f"race-{uuid.uuid4().hex[:8]}"
    shared = [message(i) for i in range(30)]

    async def writer(ns: str, offset: int) -> list[tuple[Any, list[Any]]]:
        out = []
        parent = None
        for k in range(8):
            messages = [*shared, *(message(1000 + offset + j) for j in range(k + 1))]
            cp = checkpoint({"messages": messages}, {"messages": k + 1})
            cfg = config(t, ns, parent)
            stored = await asaver.aput(cfg, cp, meta(k), {"messages": k + 1})
            parent = stored["configurable"]["checkpoint_id"]
            out.append((stored, messages))
        return out

    async def pruner() -> None:
        for _ in range(4):
            await asyncio.sleep(0.01)
            await asaver.aprune([t])

    writers = [writer(f"ns{i}:x" if i else "", i * 100) for i in range(4)]
    *results, _ = await asyncio.gather(*writers, pruner())
    for per_ns in results:
        assert per_ns is not None
        stored, messages = per_ns[-1]  # the latest of each namespace survives any prune
        got = await asaver.aget_tuple(stored)
        assert got is not None
        assert got.checkpoint["channel_values"]["messages"] == messages


async def test_a_saver_learning_elements_stays_exact_with_other_writers(
    pg_uri: str, schema: str
) -> None:
    """Each saver remembers the element ids it saw; another saver's writes, or elements it
    never asked about, must send it back to the database, never to a wrong id."""
    from langmem_vault.checkpointers import VaultSaver

    t = f"cache-{uuid.uuid4().hex[:8]}"
    old = [message(i) for i in range(10)]
    fresh = [message(100 + i) for i in range(10)]
    with (
        VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2) as one,
        VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2) as two,
    ):
        one.setup()
        await put_messages(two, t, [old])  # elements `one` has never heard of
        await put_messages(one, t, [fresh])  # `one` learns only these
        await put_messages(one, t, [[*old, *fresh]])  # `old` looks new to it: must recover
        await put_messages(two, t, [[*fresh, message(7)]])  # moves the counter under `one`
        await put_messages(one, t, [[*old, *fresh, message(200)]])
        for saver in (one, two):
            got = saver.get_tuple(config(t))
            assert got is not None
            assert got.checkpoint["channel_values"]["messages"] == [*old, *fresh, message(200)]
        one.delete_thread(t)  # a recreated thread must not match what `two` remembers
        await put_messages(one, t, [[message(300), message(301), *fresh]])
        await put_messages(two, t, [[message(300), message(301), *fresh, message(302)]])
        got = one.get_tuple(config(t))
        assert got is not None
        expected = [message(300), message(301), *fresh, message(302)]
        assert got.checkpoint["channel_values"]["messages"] == expected
    rows_ = rows(pg_uri, f"SELECT count(*), count(DISTINCT hash) FROM {schema}.saver_elements")
    assert rows_[0][0] == rows_[0][1]  # no element stored twice


async def test_pages_are_pruned_copied_and_deleted_with_their_thread(
    any_saver: AnySaver, pg_uri: str, schema: str
) -> None:
    t, copy = f"pg-{uuid.uuid4().hex[:8]}", f"pc-{uuid.uuid4().hex[:8]}"
    history = [message(i) for i in range(70)]
    summary = HumanMessage("summary of the first forty turns " * 3, id="sum")
    trimmed = [summary, *history[40:]]  # a compaction dropped ids 1-40 from the list
    await put_messages(any_saver, t, [history[:35], history])
    assert stored_elements(pg_uri, schema, t) == (6, [(1, 32), (33, 64)])
    await put_messages(any_saver, t, [trimmed])  # a new root checkpoint
    await call(any_saver, "prune", [t])  # keeps only that one
    # Page 1 is no longer used at all; page 2 still holds ids 41-64, so it stays whole.
    loose, pages = stored_elements(pg_uri, schema, t)
    assert pages == [(33, 64)] and loose == 6 + 1
    got = await call(any_saver, "get_tuple", config(t))
    assert got.checkpoint["channel_values"]["messages"] == trimmed

    await call(any_saver, "copy_thread", t, copy)
    await call(any_saver, "delete_thread", t)
    assert stored_elements(pg_uri, schema, t) == (0, [])
    assert stored_elements(pg_uri, schema, copy) == (7, [(33, 64)])
    got = await call(any_saver, "get_tuple", config(copy))
    assert got.checkpoint["channel_values"]["messages"] == trimmed


async def test_two_savers_sealing_one_thread_lose_nothing(pg_uri: str, schema: str) -> None:
    """Two processes writing one thread both see its pages complete: the second page row is
    dropped, its delete finds nothing, and every checkpoint reads back."""
    from langmem_vault.checkpointers import VaultSaver

    t = f"seal-{uuid.uuid4().hex[:8]}"
    history = [message(i) for i in range(100)]
    with (
        VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2) as one,
        VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2) as two,
    ):
        one.setup()
        written = []
        for n in range(10, 101, 6):
            saver = one if n % 4 else two
            written += [(cfg, history[:n]) for cfg in await put_messages(saver, t, [history[:n]])]
        for saver in (one, two):
            saver._decoded.clear()
            for cfg, expected in written:
                got = saver.get_tuple(cfg)
                assert got is not None
                assert got.checkpoint["channel_values"]["messages"] == expected
    assert stored_elements(pg_uri, schema, t) == (4, [(1, 32), (33, 64), (65, 96)])


async def test_a_page_sealed_twice_is_stored_once(
    pg_uri: str, schema: str, monkeypatch: Any
) -> None:
    """Two savers both holding a thread written before pages seal its first page with no new
    element (so the counter does not move): the second insert is dropped, nothing is lost."""
    from langmem_vault.checkpointers import VaultSaver
    from langmem_vault.checkpointers import _elements as elements

    t = f"twice-{uuid.uuid4().hex[:8]}"
    history = [message(i) for i in range(40)]
    with (
        VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2) as one,
        VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2) as two,
    ):
        one.setup()
        seal = elements.to_seal
        monkeypatch.setattr(elements, "to_seal", lambda by_id, sealed: [])  # as before pages
        await put_messages(one, t, [history])
        await put_messages(two, t, [history])  # both now know the thread, without pages
        assert stored_elements(pg_uri, schema, t) == (40, [])
        monkeypatch.setattr(elements, "to_seal", seal)
        first = await put_messages(one, t, [history])
        second = await put_messages(two, t, [history])  # believes page 1 is still loose
        assert stored_elements(pg_uri, schema, t) == (8, [(1, 32)])
        for saver in (one, two):
            saver._decoded.clear()
            for cfg in (*first, *second):
                got = saver.get_tuple(cfg)
                assert got is not None
                assert got.checkpoint["channel_values"]["messages"] == history
