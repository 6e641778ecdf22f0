"""A statement's named placeholders are converted once per text (db/_placeholders.py), not by
psycopg at every run: psycopg caches only statements up to 4 KiB, and the store's search
statements are longer (issue 26). Runs on a real Postgres, sync and async, alone and
pipelined; the values and errors are psycopg's own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import _queries

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.db._connection import AsyncDatabase, Database
from langmem_vault.db._placeholders import raw
from langmem_vault.db._runner import Pipelined, Plan, Query

# Longer than psycopg caches (4 KiB): a name used twice, a literal %, a NULL value.
PADDING = "-- " + "x" * 5000 + "\n"
LONG = (
    PADDING + "SELECT %(a)s::int + %(b)s::int AS s, %(a)s::int AS a, 7 %% 4 AS m, %(n)s::text AS n"
)
PARAMS = {"a": 2, "b": 3, "n": None, "unused": "x"}
EXPECTED = {"s": 5, "a": 2, "m": 3, "n": None}


@pytest.fixture
def parsed_by_psycopg() -> Iterator[list[bytes]]:
    """Every statement psycopg itself parses for placeholders without caching it."""
    seen: list[bytes] = []
    original = _queries._query2pg_nocache

    def spy(query: bytes, encoding: str) -> Any:
        seen.append(query)
        return original(query, encoding)

    _queries._query2pg_nocache = spy
    try:
        yield seen
    finally:
        _queries._query2pg_nocache = original


def _twice() -> Plan[list[Any]]:
    alone = yield Query(LONG, PARAMS)
    first, second = yield Pipelined((Query(LONG, PARAMS), Query(LONG, PARAMS, prepare=True)))
    return [alone, first, second]


def _check(answers: list[Any], parsed: list[bytes]) -> None:
    assert answers == [[EXPECTED]] * 3
    assert not [q for q in parsed if q.startswith(PADDING.encode())], "psycopg parsed it again"


def test_a_long_statement_is_converted_once_and_runs_as_psycopg_would(
    pg_uri: str, parsed_by_psycopg: list[bytes]
) -> None:
    raw.cache_clear()
    with open_pool(pg_uri, max_size=1) as pool:
        db = Database(pool)
        _check(db.run(_twice()), parsed_by_psycopg)
        _check(db.run_direct(_twice), parsed_by_psycopg)
    # converted the first time only
    assert raw.cache_info().misses == 1 and raw.cache_info().hits >= 5


async def test_async_a_long_statement_is_converted_once(
    pg_uri: str, parsed_by_psycopg: list[bytes]
) -> None:
    async with await aopen_pool(pg_uri, max_size=1) as pool:
        db = AsyncDatabase(pool)
        _check(await db.run(_twice()), parsed_by_psycopg)
        _check(await db.run_direct(_twice), parsed_by_psycopg)


def _one(query: Query) -> Plan[Any]:
    return (yield query)


def test_forms_it_does_not_convert_are_psycopgs(pg_uri: str) -> None:
    with open_pool(pg_uri, max_size=1) as pool:
        db = Database(pool)
        # a missing parameter: psycopg's own error names it
        with pytest.raises(psycopg.ProgrammingError, match="missing: b"):
            db.run(_one(Query(LONG, {"a": 1, "n": None})))
        # a binary placeholder: left to psycopg, which takes it
        rows = db.run(_one(Query(PADDING + "SELECT %(a)b::int AS a", {"a": 4})))
        assert rows == [{"a": 4}]
        # positional parameters: unchanged
        assert db.run(_one(Query("SELECT %s::int AS a", (5,)))) == [{"a": 5}]
