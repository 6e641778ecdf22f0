"""Pipelined steps: statements sent together and answered together (one round trip), the
``gather`` combinator that runs independent plans side by side, and transactions run in
pipeline mode (``Database.run(pipeline=True)``), on a real Postgres."""

from __future__ import annotations

import psycopg
import pytest

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.db._connection import AsyncDatabase, Database
from langmem_vault.db._runner import Pipelined, Plan, Query, gather


def _two_steps(tag: str) -> Plan[list[str]]:
    (first,) = yield Pipelined((Query("SELECT %s::text AS v", (f"{tag}1",)),))
    second = yield Query("SELECT %s::text AS v", (f"{tag}2",))
    return [first[0]["v"], second[0]["v"]]


def _one_step(tag: str) -> Plan[str]:
    rows = yield Query("SELECT %s::text AS v", (tag,))
    return str(rows[0]["v"])


def test_gather_sends_one_step_of_every_plan_per_round() -> None:
    # Sans-IO: drive the combined plan by hand and look at what it asks for.
    plan = gather([_two_steps("a"), _one_step("b"), _two_steps("c")])
    step = next(plan)
    assert isinstance(step, Pipelined)
    assert [q.params[0] for q in step.queries] == ["a1", "b", "c1"]
    step = plan.send([[{"v": "a1"}], [{"v": "b"}], [{"v": "c1"}]])
    # The plan that finished drops out; the others' second steps travel together.
    assert isinstance(step, Pipelined)
    assert [q.params[0] for q in step.queries] == ["a2", "c2"]
    with pytest.raises(StopIteration) as done:
        plan.send([[{"v": "a2"}], [{"v": "c2"}]])
    assert done.value.value == [["a1", "a2"], "b", ["c1", "c2"]]


def test_gather_of_a_single_statement_sends_a_plain_query() -> None:
    plan = gather([_one_step("x")])
    step = next(plan)
    assert isinstance(step, Query)
    with pytest.raises(StopIteration) as done:
        plan.send([{"v": "x"}])
    assert done.value.value == ["x"]


def _setting_then_read() -> Plan[tuple[str, str]]:
    # A local setting made by the first statement of a step holds for the next one.
    _, seen = yield Pipelined(
        (
            Query("SELECT set_config('application_name', 'pipelined', true)"),
            Query("SELECT current_setting('application_name') AS v"),
        )
    )
    after = yield Query("SELECT current_setting('application_name') AS v")
    return seen[0]["v"], after[0]["v"]


def _probe(pg_uri: str) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS pipeline_probe")
        conn.execute("CREATE TABLE pipeline_probe (n int PRIMARY KEY)")


def _count(pg_uri: str) -> int:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pipeline_probe").fetchone()
    assert row is not None
    return int(row[0])


def _insert_then(fail: bool) -> Plan[int]:
    _, rows = yield Pipelined(
        (
            Query("INSERT INTO pipeline_probe VALUES (1)"),
            Query("SELECT count(*) AS n FROM pipeline_probe"),
        )
    )
    yield Query("INSERT INTO pipeline_probe VALUES (%s)", (2 if not fail else 1,))
    return int(rows[0]["n"])


def test_pipelined_steps_and_pipeline_transactions(pg_uri: str) -> None:
    _probe(pg_uri)
    with open_pool(pg_uri, max_size=2) as pool:
        db = Database(pool)
        # Without a transaction block (run_direct): the step is one implicit transaction.
        assert db.run_direct(_setting_then_read) == ("pipelined", "")
        # In a transaction block, it holds until the commit.
        assert db.run(_setting_then_read()) == ("pipelined", "pipelined")
        assert db.run(_setting_then_read(), pipeline=True) == ("pipelined", "pipelined")
        # A pipeline transaction commits at the end, with the rows its steps read.
        assert db.run(_insert_then(fail=False), pipeline=True) == 1
        assert _count(pg_uri) == 2
        _probe(pg_uri)
        # A failing statement rolls the whole transaction back, earlier steps included.
        with pytest.raises(psycopg.errors.UniqueViolation):
            db.run(_insert_then(fail=True), pipeline=True)
        assert _count(pg_uri) == 0
        # The connection went back to the pool usable.
        assert db.run(_insert_then(fail=False), pipeline=True) == 1


async def test_async_pipelined_steps_and_pipeline_transactions(pg_uri: str) -> None:
    _probe(pg_uri)
    async with await aopen_pool(pg_uri, max_size=2) as pool:
        db = AsyncDatabase(pool)
        assert await db.run_direct(_setting_then_read) == ("pipelined", "")
        assert await db.run(_setting_then_read(), pipeline=True) == ("pipelined", "pipelined")
        with pytest.raises(psycopg.errors.UniqueViolation):
            await db.run(_insert_then(fail=True), pipeline=True)
        assert _count(pg_uri) == 0
        assert await db.run(_insert_then(fail=False), pipeline=True) == 1
        assert _count(pg_uri) == 2
        gathered = await db.run_direct(lambda: gather([_two_steps("a"), _one_step("b")]))
        assert gathered == [["a1", "a2"], "b"]


def _shapes() -> Plan[list[object]]:
    # A statement's rows, or None when it returns none: in a step of its own and pipelined.
    plain = []
    for text in _SHAPES:
        plain.append((yield Query(text)))
    pipelined = yield Pipelined(tuple(Query(text) for text in _SHAPES))
    return [*plain, *pipelined]


# rows; no columns, still a row set ("SELECT ;"); none; an empty row set
_SHAPES = ["SELECT 1 AS n", "SELECT", "SET LOCAL application_name = 'x'", "SELECT 1 WHERE false"]
_SHAPED = [[{"n": 1}], [{}], None, []]


def test_statements_without_rows_give_none(pg_uri: str) -> None:
    with open_pool(pg_uri, max_size=1) as pool:
        assert Database(pool).run(_shapes()) == _SHAPED * 2
        assert Database(pool).run_direct(_shapes) == _SHAPED * 2


async def test_statements_without_rows_give_none_async(pg_uri: str) -> None:
    async with await aopen_pool(pg_uri, max_size=1) as pool:
        assert await AsyncDatabase(pool).run(_shapes()) == _SHAPED * 2
        assert await AsyncDatabase(pool).run_direct(_shapes) == _SHAPED * 2
