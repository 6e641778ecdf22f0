"""A probe sent on a store's own connection right after chosen statements, in the same
pipeline (so in the same transaction): what the statement ran under (settings, plan mode).

``label`` names the statements to probe after (None: not probed); each probe is recorded as
(label, its cursor), to fetch once the block is done."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg

Label = Callable[[str], str | None]


def _text(query: Any) -> str:
    return query if isinstance(query, str) else ""


@contextmanager
def probed(label: Label, probe: str) -> Iterator[list[tuple[str, Any]]]:
    """``probe`` after each statement a sync cursor sends that ``label`` names."""
    probes: list[tuple[str, Any]] = []
    original = psycopg.Cursor.execute

    def execute(self: psycopg.Cursor[Any], query: Any, params: Any = None, **kw: Any) -> Any:
        out = original(self, query, params, **kw)
        name = label(_text(query))
        if name is not None:
            probes.append((name, self.connection.execute(probe)))
        return out

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield probes
    finally:
        psycopg.Cursor.execute = original  # type: ignore[method-assign]


@asynccontextmanager
async def aprobed(label: Label, probe: str) -> AsyncIterator[list[tuple[str, Any]]]:
    """:func:`probed` for async cursors."""
    probes: list[tuple[str, Any]] = []
    original = psycopg.AsyncCursor.execute

    async def execute(
        self: psycopg.AsyncCursor[Any], query: Any, params: Any = None, **kw: Any
    ) -> Any:
        out = await original(self, query, params, **kw)
        name = label(_text(query))
        if name is not None:
            probes.append((name, await self.connection.execute(probe)))
        return out

    psycopg.AsyncCursor.execute = execute  # type: ignore[method-assign]
    try:
        yield probes
    finally:
        psycopg.AsyncCursor.execute = original  # type: ignore[method-assign]
