"""The plan a store's connection really runs a statement with: the statement the store prepared
on that connection (its cached plan: a generic one when the store forces it), run once more
under ``EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE`` on the same connection, after the settings
statements the store sent before it. Replaying the text instead would plan it afresh (a custom
plan for the values), not show what the store executes.

The statements come from :func:`recorded` / :func:`arecorded` (named parameters, as
``tests.support.routing.recorded`` gives them)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from langgraph.store.base import PutOp

from langmem_vault.db._placeholders import named
from langmem_vault.store import VaultStore
from tests.support.embeddings import TrigramEmbeddings
from tests.support.routing import recorded

__all__ = [
    "INDEX",
    "PARTITIONS",
    "USERS",
    "aexplain_prepared",
    "arecorded",
    "explain_prepared",
    "facts",
    "nodes",
    "partitioned_schema",
    "recorded",
]

Sent = list[tuple[Any, Any]]


@asynccontextmanager
async def arecorded() -> AsyncIterator[Sent]:
    """:func:`recorded` for async cursors."""
    sent: Sent = []
    original = psycopg.AsyncCursor.execute

    async def execute(
        self: psycopg.AsyncCursor[Any], query: Any, params: Any = None, **kw: Any
    ) -> Any:
        raw = isinstance(self, psycopg.AsyncRawCursor) and params is not None
        sent.append(named(query, params) if raw else (query, params))
        return await original(self, query, params, **kw)

    psycopg.AsyncCursor.execute = execute  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        psycopg.AsyncCursor.execute = original  # type: ignore[method-assign]


def _steps(sent: Sent, marker: str) -> tuple[list[tuple[Any, Any]], str, dict[str, Any]]:
    """The settings statements sent before the last statement holding ``marker``, that
    statement's text as the server holds it (``$n`` placeholders) and its parameters."""
    at = max(i for i, (q, _) in enumerate(sent) if isinstance(q, str) and marker in q)
    text, params = sent[at]
    before = []
    for query, values in reversed(sent[:at]):
        stripped = str(query).lstrip()
        if not (stripped.startswith("SET LOCAL") or "set_config(" in stripped[:40]):
            break
        before.insert(0, (query, values))
    server_text = re.sub(r"%\(p(\d+)\)s", r"$\1", text).replace("%%", "%")
    return before, server_text, params


_PREPARED = "SELECT name FROM pg_prepared_statements WHERE statement = %s"


def _execute(name: str, params: dict[str, Any]) -> str:
    args = ", ".join(f"%(p{n})s" for n in range(1, len(params) + 1))
    return f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE {name}({args})"


def explain_prepared(conn: psycopg.Connection[Any], sent: Sent, marker: str) -> dict[str, Any]:
    """The executed plan of the last statement in ``sent`` holding ``marker``, run as the
    store ran it on ``conn`` (the store's own pooled connection): fails when the store did
    not prepare it there."""
    before, text, params = _steps(sent, marker)
    row = conn.execute(_PREPARED, (text,)).fetchone()
    assert row is not None, "the store did not prepare the statement on its connection"
    with conn.transaction():
        for query, values in before:
            conn.execute(query, values, prepare=False)
        (plan,) = psycopg.ClientCursor(conn).execute(_execute(row[0], params), params).fetchone()  # type: ignore[misc]
    return plan[0]["Plan"]  # type: ignore[no-any-return]


async def aexplain_prepared(
    conn: psycopg.AsyncConnection[Any], sent: Sent, marker: str
) -> dict[str, Any]:
    """Async twin of :func:`explain_prepared`."""
    before, text, params = _steps(sent, marker)
    row = await (await conn.execute(_PREPARED, (text,))).fetchone()
    assert row is not None, "the store did not prepare the statement on its connection"
    async with conn.transaction():
        for query, values in before:
            await conn.execute(query, values, prepare=False)
        cur = psycopg.AsyncClientCursor(conn)
        (plan,) = await (await cur.execute(_execute(row[0], params), params)).fetchone()  # type: ignore[misc]
    return plan[0]["Plan"]  # type: ignore[no-any-return]


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of an EXPLAIN (FORMAT JSON) plan, the subplans and init plans included."""
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


#: the partitioned store both plan tests read: six users' facts in four partitions
PARTITIONS = 4
USERS = [f"u{n}" for n in range(6)]
INDEX = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}


def facts() -> list[PutOp]:
    """Twenty facts of each of :data:`USERS`."""
    return [
        PutOp(("memories", user, "semantic"), f"k{n}", {"text": f"{user} drinks tea {n}"})
        for user in USERS
        for n in range(20)
    ]


def partitioned_schema(pg_uri: str, prefix: str) -> Iterator[str]:
    """A module fixture's body: a schema of :data:`PARTITIONS` partitions holding
    :func:`facts`, analyzed; dropped afterwards."""
    schema = prefix + str(abs(hash(pg_uri)) % 10**8)
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=INDEX) as store:  # type: ignore[arg-type]
        store.setup(partitions=PARTITIONS)
        store.batch(facts())
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"ANALYZE {schema}.store_items, {schema}.store_vectors")
    yield schema
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
