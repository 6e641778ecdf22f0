"""The BaseCheckpointSaver API, on the sync and the async saver alike."""

from __future__ import annotations

import uuid

import pytest
from langgraph.checkpoint.base import WRITES_IDX_MAP
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, RESUME, TASKS

from tests.support.savers import AnySaver, call, checkpoint, config, ids, meta, put_chain


def tid() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


async def test_put_then_get_tuple_round_trips_values_metadata_and_parent(
    any_saver: AnySaver,
) -> None:
    t = tid()
    first = await call(any_saver, "put", config(t), checkpoint({"a": 1}), meta(0), {"a": 1})
    values = {
        "a": 1,
        "text": "plain",
        "none": None,
        "flag": True,
        "ratio": 1e20,  # jsonb would turn this into an int: must come back a float
        "nul": "a\x00b",  # jsonb cannot hold NUL
        "odd": "\ud800 é",  # a lone surrogate is not UTF-8
        "big": 2**70,
        "items": [{"k": i} for i in range(3)],
    }
    cp = checkpoint(values)
    second = await call(
        any_saver,
        "put",
        config(t, checkpoint_id=first["configurable"]["checkpoint_id"], user_id="u1"),
        cp,
        meta(1, run_id="r1"),
        {k: 1 for k in values},
    )
    assert second == config(t, checkpoint_id=cp["id"])
    got = await call(any_saver, "get_tuple", config(t))
    assert got is not None
    assert got.checkpoint["channel_values"] == values
    assert type(got.checkpoint["channel_values"]["ratio"]) is float
    assert got.checkpoint["channel_versions"] == cp["channel_versions"]
    assert got.metadata["run_id"] == "r1" and got.metadata["user_id"] == "u1"
    assert got.parent_config == first
    assert got.pending_writes == []


async def test_get_tuple_of_unknown_thread_or_id_is_none(any_saver: AnySaver) -> None:
    assert await call(any_saver, "get_tuple", config(tid())) is None
    t = tid()
    await put_chain(any_saver, t, 1)
    assert await call(any_saver, "get_tuple", config(t, checkpoint_id="nope")) is None


async def test_missing_thread_id_is_a_clear_error_and_stores_nothing(
    any_saver: AnySaver,
) -> None:
    with pytest.raises(ValueError, match="thread_id"):
        await call(any_saver, "put", {"configurable": {}}, checkpoint(), meta(), {})
    with pytest.raises(ValueError, match="thread_id"):
        await call(any_saver, "get_tuple", {"configurable": {"checkpoint_ns": ""}})
    with pytest.raises(ValueError, match="checkpoint_id"):
        await call(any_saver, "put_writes", config(tid()), [("a", 1)], "task")
    assert await call(any_saver, "list", None) == []


async def test_list_filters_before_limit_and_namespaces(any_saver: AnySaver) -> None:
    t = tid()
    stored = await put_chain(any_saver, t, 4)
    child = await put_chain(any_saver, t, 2, ns="child:1")
    newest_first = ids(await call(any_saver, "list", config(t)))
    assert newest_first == [s["configurable"]["checkpoint_id"] for s in reversed(stored)]
    every_ns = await call(any_saver, "list", {"configurable": {"thread_id": t}})
    assert len(every_ns) == 6
    assert len(await call(any_saver, "list", config(t, "child:1"))) == len(child)
    step2 = await call(any_saver, "list", config(t), filter={"step": 2, "source": "loop"})
    assert ids(step2) == [stored[2]["configurable"]["checkpoint_id"]]
    before = await call(any_saver, "list", config(t), before=stored[2], limit=1)
    assert ids(before) == [stored[1]["configurable"]["checkpoint_id"]]
    assert await call(any_saver, "list", config(t), filter={"step": 99}) == []


async def test_put_writes_orders_pending_writes_and_handles_special_channels(
    any_saver: AnySaver,
) -> None:
    t = tid()
    (cfg,) = await put_chain(any_saver, t, 1)
    await call(any_saver, "put_writes", cfg, [("b", 2), ("a", 1)], "task-b", "~2")
    await call(any_saver, "put_writes", cfg, [("c", 3)], "task-a", "~1")
    # Ordinary writes are kept as first written: a retried task cannot change or duplicate.
    await call(any_saver, "put_writes", cfg, [("b", 99)], "task-b", "~2")
    # Special writes replace the earlier ones of their channel (fixed negative index).
    await call(any_saver, "put_writes", cfg, [(INTERRUPT, "first")], "task-i", "~3")
    await call(any_saver, "put_writes", cfg, [(INTERRUPT, "second"), (RESUME, "r")], "task-i", "~3")
    got = await call(any_saver, "get_tuple", cfg)
    # writes_sort_key: (task_path, task_id, idx)
    assert got.pending_writes == [
        ("task-a", "c", 3),
        ("task-b", "b", 2),
        ("task-b", "a", 1),
        ("task-i", RESUME, "r"),
        ("task-i", INTERRUPT, "second"),
    ]
    assert WRITES_IDX_MAP[ERROR] == -1  # the map the saver relies on


async def test_pre_v4_checkpoint_gets_pending_sends_from_its_parent(any_saver: AnySaver) -> None:
    t = tid()
    parent_cp = checkpoint({"x": "1"})
    parent_cp["v"] = 1
    parent = await call(any_saver, "put", config(t), parent_cp, meta(0), {"x": 1})
    await call(any_saver, "put_writes", parent, [(TASKS, "send-1"), (TASKS, "send-2")], "t1")
    child_cp = checkpoint({"x": "2"}, {"x": 2})
    child_cp["v"] = 1
    child_cfg = config(t, checkpoint_id=parent["configurable"]["checkpoint_id"])
    await call(any_saver, "put", child_cfg, child_cp, meta(1), {"x": 2})
    got = await call(any_saver, "get_tuple", config(t))
    assert got.checkpoint["channel_values"][TASKS] == ["send-1", "send-2"]
    assert got.checkpoint["channel_versions"][TASKS] == 2


async def test_get_next_version_increases_as_strings(any_saver: AnySaver) -> None:
    v1 = any_saver.get_next_version(None, None)
    v2 = any_saver.get_next_version(v1, None)
    v3 = any_saver.get_next_version(v2, None)
    assert v1 < v2 < v3
    assert any_saver.get_next_version(7, None).startswith("0000000008.")  # type: ignore[arg-type]


async def test_delete_thread_removes_every_namespace_only_of_that_thread(
    any_saver: AnySaver,
) -> None:
    keep, gone = tid(), tid()
    await put_chain(any_saver, keep, 2)
    (cfg,) = await put_chain(any_saver, gone, 1)
    await put_chain(any_saver, gone, 1, ns="child:1")
    await call(any_saver, "put_writes", cfg, [("a", 1)], "task")
    await call(any_saver, "delete_thread", gone)
    assert await call(any_saver, "list", {"configurable": {"thread_id": gone}}) == []
    assert len(await call(any_saver, "list", config(keep))) == 2


async def test_delete_for_runs_removes_the_runs_checkpoints_and_writes(
    any_saver: AnySaver,
) -> None:
    t = tid()
    (a,) = await put_chain(any_saver, t, 1, run_id="run-a")
    await call(any_saver, "put_writes", a, [("x", 1)], "task")
    b_cp = checkpoint({"step": "b"}, {"step": 9})
    b_cfg = config(t, checkpoint_id=a["configurable"]["checkpoint_id"])
    await call(any_saver, "put", b_cfg, b_cp, meta(1, run_id="run-b"), {"step": 9})
    await call(any_saver, "delete_for_runs", ["run-a"])
    await call(any_saver, "delete_for_runs", [])
    left = await call(any_saver, "list", config(t))
    assert [x.metadata["run_id"] for x in left] == ["run-b"]
    assert left[0].checkpoint["channel_values"] == {"step": "b"}
    assert await call(any_saver, "get_tuple", a) is None


async def test_copy_thread_copies_everything_and_refuses_a_used_target(
    any_saver: AnySaver,
) -> None:
    src, dst = tid(), tid()
    stored = await put_chain(any_saver, src, 3)
    await put_chain(any_saver, src, 1, ns="child:1")
    await call(any_saver, "put_writes", stored[-1], [("w", "v")], "task")
    await call(any_saver, "copy_thread", src, dst)
    a = await call(any_saver, "list", {"configurable": {"thread_id": src}})
    b = await call(any_saver, "list", {"configurable": {"thread_id": dst}})
    assert ids(a) == ids(b)
    assert [x.checkpoint for x in a] == [x.checkpoint for x in b]
    assert (await call(any_saver, "get_tuple", config(dst))).pending_writes == [("task", "w", "v")]
    with pytest.raises(ValueError, match="already has checkpoints"):
        await call(any_saver, "copy_thread", src, dst)


async def test_prune_keep_latest_and_delete(any_saver: AnySaver) -> None:
    t, other = tid(), tid()
    stored = await put_chain(any_saver, t, 4)
    await call(any_saver, "put_writes", stored[-1], [("w", 1)], "task")
    await call(any_saver, "put_writes", stored[0], [("w", 0)], "task")
    await put_chain(any_saver, other, 3)
    await call(any_saver, "prune", [t], strategy="keep_latest")
    left = await call(any_saver, "list", config(t))
    assert ids(left) == [stored[-1]["configurable"]["checkpoint_id"]]
    assert left[0].parent_config is None  # its parent is gone
    assert left[0].pending_writes == [("task", "w", 1)]
    assert left[0].checkpoint["channel_values"] == {"step": "s3"}
    assert len(await call(any_saver, "list", config(other))) == 3
    await call(any_saver, "prune", [t, other], strategy="delete")
    assert await call(any_saver, "list", None) == []
    with pytest.raises(ValueError, match="strategy"):
        await call(any_saver, "prune", [t], strategy="everything")
    with pytest.raises(TypeError, match="thread_ids"):
        await call(any_saver, "prune", t)
