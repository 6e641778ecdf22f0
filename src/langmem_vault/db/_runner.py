"""SQL steps of the runtime (:mod:`langmem_vault.db._steps`): statements run on a cursor.

A plan is a generator of steps that yields :class:`Query` objects and receives each one's
rows (a list of dicts, or ``None`` for statements that return nothing); the runtime's
drivers run it with a :class:`Statements` context (the transaction's cursor). All SQL and
all row parsing live in plans; :meth:`Query.run` and :meth:`Query.arun` are the only code
that touches a cursor, so the sync and async paths cannot drift apart.

A plan may also yield :class:`Pipelined` statements that do not need each other's results:
the driver sends them in psycopg's pipeline mode and waits once, so they cost one network
round trip instead of one each, and the plan receives a list of their rows, in order.
:func:`gather` runs independent plans side by side that way: a store batch's searches and
gets travel together. On a loaded machine every wait for the server costs a scheduling
delay as well as the network, so round trips, not statements, set the latency of small reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from psycopg import AsyncCursor, AsyncRawCursor, Cursor, RawCursor, sql
from psycopg.pq import ExecStatus
from psycopg.rows import DictRow

from langmem_vault.db._placeholders import raw
from langmem_vault.db._steps import Step, Steps

T = TypeVar("T")
Rows = list[dict[str, Any]] | None


# What ``cursor.description is not None`` tests, without building a Column per field on every
# statement (about 3% of a small pipelined read's client time).
_ROW_STATUSES = frozenset({ExecStatus.TUPLES_OK, ExecStatus.SINGLE_TUPLE})


def _returns_rows(cur: Cursor[DictRow] | AsyncCursor[DictRow]) -> bool:
    """Whether the cursor's current result has rows to fetch (a SELECT, not a SET)."""
    res = cur.pgresult
    return res is not None and (res.nfields > 0 or res.status in _ROW_STATUSES)


# psycopg's default cursors and their twins that send a statement's text as it is.
_RAW_TWIN: dict[type, type] = {Cursor: RawCursor, AsyncCursor: AsyncRawCursor}


def _converted(cur: Any, query: Query) -> tuple[type, str, list[Any]] | None:
    """For a statement with named parameters on one of psycopg's default cursors: the raw
    cursor class, the text converted once (``_placeholders.raw``) and the values in order;
    None leaves the statement to psycopg (another cursor class, %-forms or parameters it
    does not convert, a missing parameter: psycopg then says which)."""
    twin = _RAW_TWIN.get(type(cur))
    if twin is None or not isinstance(query.sql, str) or not isinstance(query.params, Mapping):
        return None
    found = raw(query.sql)
    if found is None:
        return None
    text, names = found
    params = query.params
    if not all(name in params for name in names):
        return None
    return twin, text, [params[name] for name in names]


def _cursor_for(cur: Any, query: Query) -> tuple[Any, Any, Any]:
    """A new cursor of ``cur``'s connection, row factory and format for ``query``, and the
    statement and parameters to execute on it."""
    conn = cur.connection
    converted = _converted(cur, query)
    if converted is None:
        each, text, params = conn.cursor(row_factory=cur.row_factory), query.sql, query.params
    else:
        twin, text, params = converted
        each = twin(conn, row_factory=cur.row_factory)
    each.format = cur.format
    return each, text, params


@dataclass(slots=True)
class Statements:
    """The context SQL steps run in: a dict-row cursor, and the connection's pipeline when
    the whole plan runs in pipeline mode (see ``Database.run(pipeline=True)``); each step
    then ends with one Sync, and the BEGIN before the first step and the COMMIT after the
    last travel with a step instead of taking round trips of their own."""

    cur: Any  # Cursor[DictRow] for run_steps, AsyncCursor[DictRow] for arun_steps
    pipe: Any = None  # psycopg.Pipeline / AsyncPipeline


def _pipelined(ctx: Statements, queries: tuple[Query, ...]) -> list[Rows]:
    bound = [_cursor_for(ctx.cur, query) for query in queries]
    cursors = [each for each, _, _ in bound]
    try:
        if ctx.pipe is not None:  # the whole plan runs in pipeline mode: one Sync for the step
            for (each, text, params), query in zip(bound, queries, strict=True):
                each.execute(text, params, prepare=query.prepare)
            ctx.pipe.sync()
            return [each.fetchall() if _returns_rows(each) else None for each in cursors]
        # Leaving the block sends one Sync and reads every result.
        with ctx.cur.connection.pipeline():
            for (each, text, params), query in zip(bound, queries, strict=True):
                each.execute(text, params, prepare=query.prepare)
        return [each.fetchall() if _returns_rows(each) else None for each in cursors]
    finally:
        for each in cursors:
            each.close()


async def _apipelined(ctx: Statements, queries: tuple[Query, ...]) -> list[Rows]:
    bound = [_cursor_for(ctx.cur, query) for query in queries]
    cursors = [each for each, _, _ in bound]
    try:
        if ctx.pipe is not None:
            for (each, text, params), query in zip(bound, queries, strict=True):
                await each.execute(text, params, prepare=query.prepare)
            await ctx.pipe.sync()
            return [await each.fetchall() if _returns_rows(each) else None for each in cursors]
        async with ctx.cur.connection.pipeline():
            for (each, text, params), query in zip(bound, queries, strict=True):
                await each.execute(text, params, prepare=query.prepare)
        return [await each.fetchall() if _returns_rows(each) else None for each in cursors]
    finally:
        for each in cursors:
            await each.close()


@dataclass(frozen=True, slots=True)
class Query(Step):
    """One statement of a plan; ``many`` runs ``executemany`` over ``params``.

    ``prepare=False`` never prepares it server-side (a text of several statements cannot be
    prepared, even on a connection with ``prepare_threshold=0``); None leaves it to psycopg.
    Runs on a :class:`Statements` context; sends back its rows.
    """

    sql: str | sql.SQL | sql.Composed
    params: Any = None
    many: bool = False
    prepare: bool | None = None

    def run(self, ctx: Statements) -> Rows:
        if self.many:
            ctx.cur.executemany(self.sql, self.params)
            return None
        if ctx.pipe is not None:
            return _pipelined(ctx, (self,))[0]
        each, text, params = _cursor_for(ctx.cur, self)
        with each:
            each.execute(text, params, prepare=self.prepare)
            return each.fetchall() if _returns_rows(each) else None

    async def arun(self, ctx: Statements) -> Rows:
        if self.many:
            await ctx.cur.executemany(self.sql, self.params)
            return None
        if ctx.pipe is not None:
            return (await _apipelined(ctx, (self,)))[0]
        each, text, params = _cursor_for(ctx.cur, self)
        async with each:
            await each.execute(text, params, prepare=self.prepare)
            return await each.fetchall() if _returns_rows(each) else None


@dataclass(frozen=True, slots=True)
class Pipelined(Step):
    """Statements sent together and answered together: their results, a list of each one's
    rows in order, come back after a single wait. Later statements run after earlier ones
    (in the same transaction), so a ``set_config`` may precede the query it is for."""

    queries: tuple[Query, ...]

    def run(self, ctx: Statements) -> list[Rows]:
        return _pipelined(ctx, self.queries)

    async def arun(self, ctx: Statements) -> list[Rows]:
        return await _apipelined(ctx, self.queries)


Statement = Query | Pipelined
# A plan of SQL steps, run with a Statements context. Sent values are a Query's rows
# (``Rows``) or a Pipelined's list of them; a plan knows which.
Plan = Steps[T]


def gather(plans: Sequence[Plan[Any]]) -> Plan[list[Any]]:
    """Run independent plans side by side: each round sends the next step of every plan still
    running as one :class:`Pipelined`, so N plans of k steps cost k round trips, not N * k.
    Returns their results in order."""
    results: list[Any] = [None] * len(plans)
    steps: dict[int, Any] = {}  # gather's plans yield statements only
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
        following: dict[int, Any] = {}
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
