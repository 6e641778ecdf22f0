"""Run sans-IO query plans with a sync or an async cursor.

A plan is a generator that yields :class:`Query` objects and receives each one's rows
(a list of dicts, or ``None`` for statements that return nothing). All SQL and all row
parsing live in plans; the two drivers below are the only code that touches a cursor, so
the sync and async paths cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from psycopg import AsyncCursor, Cursor, sql
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


Plan = Generator[Query, Rows, T]


def run_plan(cur: Cursor[DictRow], plan: Plan[T]) -> T:
    """Drive ``plan`` to completion on a sync cursor and return its value."""
    rows: Rows = None
    try:
        while True:
            query = plan.send(rows)
            if query.many:
                cur.executemany(query.sql, query.params)
                rows = None
            else:
                cur.execute(query.sql, query.params, prepare=query.prepare)
                rows = cur.fetchall() if cur.description is not None else None
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun_plan(cur: AsyncCursor[DictRow], plan: Plan[T]) -> T:
    """Drive ``plan`` to completion on an async cursor and return its value."""
    rows: Rows = None
    try:
        while True:
            query = plan.send(rows)
            if query.many:
                await cur.executemany(query.sql, query.params)
                rows = None
            else:
                await cur.execute(query.sql, query.params, prepare=query.prepare)
                rows = await cur.fetchall() if cur.description is not None else None
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
