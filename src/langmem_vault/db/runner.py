"""Run sans-IO query plans with a sync or an async cursor.

A plan is a generator that yields :class:`Query` objects and receives each one's rows
(a list of dicts, or ``None`` for statements that return nothing). All SQL and all row
parsing live in plans; the two drivers below are the only code that touches a cursor, so
the sync and async paths cannot drift apart.

A plan may also yield :class:`Pipelined` statements that do not need each other's results:
the driver sends them in psycopg's pipeline mode and waits once, so they cost one network
round trip instead of one each, and the plan receives a list of their rows, in order.
:func:`gather` runs independent plans side by side that way: a store batch's searches and
gets travel together. On a loaded machine every wait for the server costs a scheduling
delay as well as the network, so round trips, not statements, set the latency of small reads.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncCursor, Cursor, sql
from psycopg.pq import ExecStatus
from psycopg.rows import DictRow

T = TypeVar("T")
Rows = list[dict[str, Any]] | None


@dataclass(frozen=True, slots=True)
class Query:
    """One statement of a plan; ``many`` runs ``executemany`` over ``params``.

    ``prepare=False`` never prepares it server-side (a text of several statements cannot be
    prepared, even on a connection with ``prepare_threshold=0``); None leaves it to psycopg.
    """

    sql: str | sql.SQL | sql.Composed
    params: Any = None
    many: bool = False
    prepare: bool | None = None


@dataclass(frozen=True, slots=True)
class Pipelined:
    """Statements sent together and answered together: their results, a list of each one's
    rows in order, come back after a single wait. Later statements run after earlier ones
    (in the same transaction), so a ``set_config`` may precede the query it is for."""

    queries: tuple[Query, ...]


Step = Query | Pipelined
# Sent values are a Query's rows (``Rows``) or a Pipelined's list of them; a plan knows which.
Plan = Generator[Step, Any, T]


def gather(plans: Sequence[Plan[Any]]) -> Plan[list[Any]]:
    """Run independent plans side by side: each round sends the next step of every plan still
    running as one :class:`Pipelined`, so N plans of k steps cost k round trips, not N * k.
    Returns their results in order."""
    results: list[Any] = [None] * len(plans)
    steps: dict[int, Step] = {}
    for i, plan in enumerate(plans):
        try:
            steps[i] = next(plan)
        except StopIteration as done:
            results[i] = done.value
    while steps:
        spans: dict[int, tuple[int, int]] = {}
        group: list[Query] = []
        for i, step in steps.items():
            queries = step.queries if isinstance(step, Pipelined) else (step,)
            spans[i] = (len(group), len(queries))
            group.extend(queries)
        if len(group) == 1:
            answers: list[Rows] = [(yield group[0])]
        else:
            answers = yield Pipelined(tuple(group))
        following: dict[int, Step] = {}
        for i, (start, count) in spans.items():
            answer = answers[start : start + count]
            try:
                following[i] = plans[i].send(
                    answer if isinstance(steps[i], Pipelined) else answer[0]
                )
            except StopIteration as done:
                results[i] = done.value
        steps = following
    return results


# What ``cursor.description is not None`` tests, without building a Column per field on every
# statement (about 3% of a small pipelined read's client time).
_ROW_STATUSES = frozenset({ExecStatus.TUPLES_OK, ExecStatus.SINGLE_TUPLE})


def _returns_rows(cur: Cursor[DictRow] | AsyncCursor[DictRow]) -> bool:
    """Whether the cursor's current result has rows to fetch (a SELECT, not a SET)."""
    res = cur.pgresult
    return res is not None and (res.nfields > 0 or res.status in _ROW_STATUSES)


def _rows(cur: Cursor[DictRow]) -> Rows:
    return cur.fetchall() if _returns_rows(cur) else None


def _run_pipelined(
    cur: Cursor[DictRow], step: Pipelined, pipe: psycopg.Pipeline | None = None
) -> list[Rows]:
    conn = cur.connection
    cursors = [conn.cursor(row_factory=cur.row_factory) for _ in step.queries]
    try:
        if pipe is not None:  # the whole plan runs in pipeline mode: one Sync for the step
            for each, query in zip(cursors, step.queries, strict=True):
                each.format = cur.format
                each.execute(query.sql, query.params, prepare=query.prepare)
            pipe.sync()
            return [_rows(each) for each in cursors]
        # Leaving the block sends one Sync and reads every result.
        with conn.pipeline():
            for each, query in zip(cursors, step.queries, strict=True):
                each.format = cur.format
                each.execute(query.sql, query.params, prepare=query.prepare)
        return [_rows(each) for each in cursors]
    finally:
        for each in cursors:
            each.close()


async def _arun_pipelined(
    cur: AsyncCursor[DictRow], step: Pipelined, pipe: psycopg.AsyncPipeline | None = None
) -> list[Rows]:
    conn = cur.connection
    cursors = [conn.cursor(row_factory=cur.row_factory) for _ in step.queries]
    try:
        if pipe is not None:
            for each, query in zip(cursors, step.queries, strict=True):
                each.format = cur.format
                await each.execute(query.sql, query.params, prepare=query.prepare)
            await pipe.sync()
            return [await each.fetchall() if _returns_rows(each) else None for each in cursors]
        async with conn.pipeline():
            for each, query in zip(cursors, step.queries, strict=True):
                each.format = cur.format
                await each.execute(query.sql, query.params, prepare=query.prepare)
        return [await each.fetchall() if _returns_rows(each) else None for each in cursors]
    finally:
        for each in cursors:
            await each.close()


def run_plan(cur: Cursor[DictRow], plan: Plan[T], pipe: psycopg.Pipeline | None = None) -> T:
    """Drive ``plan`` to completion on a sync cursor and return its value.

    ``pipe``: the connection is in pipeline mode (see ``Database.run(pipeline=True)``); each
    step then ends with one Sync, and the BEGIN before the first step and the COMMIT after
    the last travel with a step instead of taking round trips of their own."""
    rows: Any = None
    try:
        while True:
            query = plan.send(rows)
            if isinstance(query, Pipelined):
                rows = _run_pipelined(cur, query, pipe)
            elif pipe is not None and not query.many:
                (rows,) = _run_pipelined(cur, Pipelined((query,)), pipe)
            elif query.many:
                cur.executemany(query.sql, query.params)
                rows = None
            else:
                cur.execute(query.sql, query.params, prepare=query.prepare)
                rows = cur.fetchall() if _returns_rows(cur) else None
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun_plan(
    cur: AsyncCursor[DictRow], plan: Plan[T], pipe: psycopg.AsyncPipeline | None = None
) -> T:
    """Drive ``plan`` to completion on an async cursor and return its value."""
    rows: Any = None
    try:
        while True:
            query = plan.send(rows)
            if isinstance(query, Pipelined):
                rows = await _arun_pipelined(cur, query, pipe)
            elif pipe is not None and not query.many:
                (rows,) = await _arun_pipelined(cur, Pipelined((query,)), pipe)
            elif query.many:
                await cur.executemany(query.sql, query.params)
                rows = None
            else:
                await cur.execute(query.sql, query.params, prepare=query.prepare)
                rows = await cur.fetchall() if _returns_rows(cur) else None
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
