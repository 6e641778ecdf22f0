"""What the routing tests share (tests/store/test_routing.py, tests/checkpointers/test_routing.py):
the statements a sync cursor sends, replayed under ``EXPLAIN ANALYZE`` on tables hash-partitioned
by tenant (``setup(partitions=N)``), and the partitions each one really read (the local stand-in
for Citus's router planner, which sends a statement to one shard only when it names one tenant).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from langmem_vault.db._placeholders import named


@contextmanager
def recorded() -> Iterator[list[tuple[Any, Any]]]:
    """The (statement, parameters) every sync cursor executes meanwhile, as psycopg's default
    cursor takes them (the store sends its named-parameter statements converted, on a raw
    cursor: db/_placeholders.py)."""
    sent: list[tuple[Any, Any]] = []
    original = psycopg.Cursor.execute

    def execute(self: psycopg.Cursor[Any], query: Any, params: Any = None, **kw: Any) -> Any:
        raw = isinstance(self, psycopg.RawCursor) and params is not None
        sent.append(named(query, params) if raw else (query, params))
        return original(self, query, params, **kw)

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        psycopg.Cursor.execute = original  # type: ignore[method-assign]


def scanned(plan: dict[str, Any], partition: re.Pattern[str]) -> set[tuple[str, int]]:
    """(table, partition) of every partition the executed plan read (``partition`` matches a
    partition's name: the table, then its number)."""
    found = set()
    if plan.get("Actual Loops", 0) > 0:
        match = partition.match(plan.get("Relation Name", ""))
        if match:
            found.add((match.group(1), int(match.group(2))))
    for child in plan.get("Plans", []):
        found |= scanned(child, partition)
    return found


def planned(plan: dict[str, Any], partition: re.Pattern[str]) -> set[tuple[str, int]]:
    """(table, partition) of every partition in the plan, read or pruned only at run time."""
    found = set()
    match = partition.match(plan.get("Relation Name", ""))
    if match:
        found.add((match.group(1), int(match.group(2))))
    for child in plan.get("Plans", []):
        found |= planned(child, partition)
    return found


def partitions_read(
    uri: str,
    schema: str,
    sent: list[tuple[Any, Any]],
    tables: str,
    partition: re.Pattern[str],
    *,
    analyze: bool = True,
) -> list[set[Any]]:
    """Replay ``sent`` in one transaction, rolled back; for each statement that reads the
    tables whose names start with ``tables``, the partitions its EXPLAIN ANALYZE shows it
    read (without ``analyze``: the partitions its plan holds)."""
    reads = []
    with psycopg.connect(uri) as conn:
        for query, params in sent:
            text = query if isinstance(query, str) else query.as_string(conn)
            names = (f"{schema}.{tables}", f'"{schema}".{tables}')  # in_schema quotes it
            if not any(n in text for n in names) or "pg_class" in text or "ANALYZE" in text:
                conn.execute(query, params, prepare=False)  # settings, catalog reads
                continue
            options = "ANALYZE, FORMAT JSON" if analyze else "FORMAT JSON"
            (plan,) = conn.execute(f"EXPLAIN ({options}) {text}", params, prepare=False).fetchone()  # type: ignore[misc]
            reads.append((scanned if analyze else planned)(plan[0]["Plan"], partition))
        conn.rollback()
    return reads


def assert_reads_within(reads: list[set[Any]], allowed: set[int], name: str, what: str) -> None:
    """Statement ``name`` read ``what`` (``reads``: :func:`partitions_read`), every statement
    only partitions in ``allowed``, and at least one a partition at all."""
    assert reads, f"{name}: no statement read the {what}"
    for scanned in reads:
        assert {p for _, p in scanned} <= allowed, f"{name}: read {sorted(scanned)}"
    assert any(scanned for scanned in reads), f"{name}: read no partition at all"


def partition_of(uri: str, schema: str, table: str, tenant: str) -> str:
    """The partition of ``table`` that holds ``tenant``'s rows."""
    with psycopg.connect(uri) as conn:
        (name,) = conn.execute(
            f"SELECT tableoid::regclass::text FROM {schema}.{table} WHERE tenant = %s LIMIT 1",
            (tenant,),
        ).fetchone()  # type: ignore[misc]
    return str(name).split(".")[-1]
