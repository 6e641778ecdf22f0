"""The one sans-IO runtime (db/_steps.py): a generator mixing every kind of step (SQL
statements on the driver's cursor, a store batch, an embedding call, a call on another
component, steps run with a context of their own) gives the same result, with the same calls
in the same order, under the sync and the async driver, on a real Postgres."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any

import pytest
from langgraph.store.base import GetOp, Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.db._connection import AsyncDatabase, Database
from langmem_vault.db._runner import Pipelined, Query
from langmem_vault.db._steps import Call, Embed, Steps, Together, Within, arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan


class Log:
    """Every call of the components below, sync and async alike, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []


class LoggedStore(InMemoryStore):
    def __init__(self, log: Log) -> None:
        super().__init__()
        self.log = log

    def batch(self, ops: Any) -> list[Result]:
        ops = list(ops)
        self.log.calls.append(("batch", [type(op).__name__ for op in ops]))
        return super().batch(ops)

    async def abatch(self, ops: Any) -> list[Result]:
        ops = list(ops)
        self.log.calls.append(("batch", [type(op).__name__ for op in ops]))
        return super().batch(ops)


class LoggedEmbeddings:
    def __init__(self, log: Log) -> None:
        self.log = log

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.log.calls.append(("embed", texts))
        return [[float(len(t)), 1.0] for t in texts]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0)
        return self.embed_documents(texts)


def _counter_plan() -> StorePlan[int]:
    (item,) = yield Batch([GetOp(("c",), "n")])
    n = (item.value["n"] if item else 0) + 1
    yield Batch([PutOp(("c",), "n", {"n": n})])
    return int(n)


def _mixed(store: LoggedStore, embeddings: LoggedEmbeddings, log: Log) -> Steps[list[Any]]:
    seen: list[Any] = []
    rows = yield Query("SELECT %s::int + 1 AS v", (41,))
    seen.append(rows[0]["v"])
    ops: list[Op] = [PutOp(("docs",), "a", {"text": "tea"})]
    yield Batch(ops, store)
    vectors = yield Embed(embeddings, ["tea", "green tea"])
    seen.append([list(v) for v in vectors])
    answers = yield Pipelined((Query("SELECT 1 AS v"), Query("SELECT %s::text AS v", ("x",))))
    seen.append([a[0]["v"] for a in answers])

    def sync_call() -> str:
        log.calls.append(("call", "sync"))
        return "called"

    async def async_call() -> str:
        log.calls.append(("call", "sync"))  # the same call, made by the async twin
        return "called"

    seen.append((yield Call(sync_call, async_call)))
    seen.append((yield Call.same(lambda: len(log.calls))))
    seen.append((yield Within(store, _counter_plan())))
    (item,) = yield Batch([GetOp(("docs",), "a")], store)
    seen.append(item.value)
    rows = yield Query("SELECT count(*) AS n FROM (VALUES (1), (2)) AS t(x)")
    seen.append(rows[0]["n"])
    return seen


EXPECTED_CALLS = [
    ("batch", ["PutOp"]),
    ("embed", ["tea", "green tea"]),
    ("call", "sync"),
    ("batch", ["GetOp"]),
    ("batch", ["PutOp"]),
    ("batch", ["GetOp"]),
]
EXPECTED = [42, [[3.0, 1.0], [9.0, 1.0]], [1, "x"], "called", 3, 1, {"text": "tea"}, 2]


@pytest.mark.parametrize("pipeline", [False, True])
def test_both_drivers_make_the_same_calls_in_the_same_order(pg_uri: str, pipeline: bool) -> None:
    sync_log = Log()
    with open_pool(pg_uri, max_size=1) as pool:
        result = Database(pool).run(
            _mixed(LoggedStore(sync_log), LoggedEmbeddings(sync_log), sync_log),
            pipeline=pipeline,
        )

    async def main() -> list[Any]:
        async with await aopen_pool(pg_uri, max_size=1) as apool:
            return await AsyncDatabase(apool).run(
                _mixed(LoggedStore(async_log), LoggedEmbeddings(async_log), async_log),
                pipeline=pipeline,
            )

    async_log = Log()
    aresult = asyncio.run(main())
    assert result == aresult == EXPECTED
    assert sync_log.calls == async_log.calls == EXPECTED_CALLS


def test_steps_without_a_database_run_on_no_context() -> None:
    def steps(store: LoggedStore, embeddings: LoggedEmbeddings) -> Steps[tuple[Any, ...]]:
        n = yield Within(store, _counter_plan())
        m = yield Within(store, _counter_plan())
        vectors = yield Embed(embeddings, ["ab"])
        return n, m, [list(v) for v in vectors]

    logs = Log(), Log()
    sync = run_steps(steps(LoggedStore(logs[0]), LoggedEmbeddings(logs[0])))
    asyn = asyncio.run(arun_steps(steps(LoggedStore(logs[1]), LoggedEmbeddings(logs[1]))))
    assert sync == asyn == (1, 2, [[2.0, 1.0]])
    assert logs[0].calls == logs[1].calls
    assert [c[0] for c in logs[0].calls] == ["batch"] * 4 + ["embed"]


def test_a_failing_step_raises_from_both_drivers() -> None:
    def steps() -> Steps[None]:
        yield Call.same(lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        run_steps(steps())
    with pytest.raises(ZeroDivisionError):
        asyncio.run(arun_steps(steps()))


TURN: contextvars.ContextVar[str] = contextvars.ContextVar("turn", default="none")


def test_together_runs_its_steps_at_the_same_time_in_order() -> None:
    # Each step waits for the other to arrive: run one after the other, they never meet.
    barrier = threading.Barrier(2, timeout=5)

    def meet(value: str) -> str:
        barrier.wait()
        return f"{value} in {TURN.get()}"  # the caller's context, in its thread too

    def steps() -> Steps[list[Any]]:
        TURN.set("turn 1")
        return (yield Together(Call.same(lambda: meet("a")), Call.same(lambda: meet("b"))))

    assert run_steps(steps()) == ["a in turn 1", "b in turn 1"]

    async def meet_async(mine: asyncio.Event, theirs: asyncio.Event, value: str) -> str:
        mine.set()
        await asyncio.wait_for(theirs.wait(), 5)
        return value

    async def main() -> list[Any]:
        a, b = asyncio.Event(), asyncio.Event()

        def asteps() -> Steps[list[Any]]:
            return (
                yield Together(
                    Call(lambda: "unused", lambda: meet_async(a, b, "a")),
                    Call(lambda: "unused", lambda: meet_async(b, a, "b")),
                )
            )

        return await arun_steps(asteps())

    assert asyncio.run(main()) == ["a", "b"]


def test_together_finishes_every_step_then_raises_the_first_failure() -> None:
    for failing in (0, 1):
        done: list[str] = []

        def step(i: int, done: list[str] = done, failing: int = failing) -> Call:
            def call() -> str:
                if i == failing:
                    raise ValueError(f"step {i}")
                time.sleep(0.05)  # the other step is still running when this one fails
                done.append(f"step {i}")
                return f"step {i}"

            return Call.same(call)

        def steps() -> Steps[list[Any]]:
            return (yield Together(step(0), step(1)))

        with pytest.raises(ValueError, match=f"step {failing}"):
            run_steps(steps())
        assert done == [f"step {1 - failing}"]
        done.clear()
        with pytest.raises(ValueError, match=f"step {failing}"):
            asyncio.run(arun_steps(steps()))
        assert done == [f"step {1 - failing}"]
