"""A partitioned store's searches run as their plan settings say, on the store's own connection
(issue 28, session 12): the prepared statement's cached generic plan, run again under
``EXPLAIN ANALYZE EXECUTE`` after the settings the store sent (tests/support/plan_mode.py).

The connections here make parallel workers free (``parallel_setup_cost = 0`` and the like), so
the planner puts them wherever it can: the store's plan settings must keep them out. A generic
plan on 1M items in 64 partitions had put the large namespace's branch, gated off at run time,
under a Gather that started two workers at every search (20 of a 27 ms warm search). And the
plan runs one partition of each table: the tenant, a parameter of the generic plan, prunes the
others when the executor starts (a plan that pruned by the item's row instead read them all).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.plan_mode import (
    INDEX,
    aexplain_prepared,
    arecorded,
    explain_prepared,
    nodes,
    partitioned_schema,
    recorded,
)
from tests.support.routing import partition_of

FREE_WORKERS = {
    "kwargs": {
        "options": "-c parallel_setup_cost=0 -c parallel_tuple_cost=0"
        " -c min_parallel_table_scan_size=0 -c min_parallel_index_scan_size=0"
    }
}
_PARTITION = re.compile(r"^(store_items|store_vectors)_p(\d+)$")
# (what the user does, the statement's mark): a search in a namespace, the newest facts of one
# (inject's every-turn reads), each run on its generic plan
CASES = {
    "search in a namespace": ({"query": "tea in the garden"}, "WITH"),
    "newest first": ({}, "UNION ALL"),
}


def _check(plan: dict[str, Any], mine: int) -> None:
    ran = list(nodes(plan))
    gathers = [n["Node Type"] for n in ran if n["Node Type"].startswith("Gather")]
    assert not gathers, f"the store's plan starts parallel workers: {gathers}"
    read = {
        (m.group(1), int(m.group(2)))
        for n in ran
        if n.get("Actual Loops", 0) > 0 and (m := _PARTITION.match(n.get("Relation Name", "")))
    }
    assert read, "the plan read no partition"
    assert {p for _, p in read} == {mine}, f"read {sorted(read)}"
    # pruned when the executor starts, not row by row: a partition left in the plan is opened
    # and locked at every search, read or not (2 ms of a warm search at 64 partitions)
    named = {int(m.group(2)) for n in ran if (m := _PARTITION.match(n.get("Relation Name", "")))}
    assert named == {mine}, f"the plan keeps partitions {sorted(named)}"


def _mine(pg_uri: str, schema: str) -> int:
    match = _PARTITION.match(partition_of(pg_uri, schema, "store_items", "u3"))
    assert match
    return int(match.group(2))


@pytest.fixture(scope="module")
def partitioned(pg_uri: str) -> Iterator[str]:
    yield from partitioned_schema(pg_uri, "plan_mode_")


@pytest.mark.parametrize("case", list(CASES))
def test_search_runs_its_generic_plan_without_workers_on_one_partition(
    pg_uri: str, partitioned: str, case: str
) -> None:
    kwargs, marker = CASES[case]
    mine = _mine(pg_uri, partitioned)
    with VaultStore.from_conn_string(
        pg_uri, schema=partitioned, index=INDEX, pool_size=1, pool_config=FREE_WORKERS
    ) as store:
        with recorded() as sent:
            found = store.search(("memories", "u3"), limit=5, **kwargs)
        assert found and all(item.namespace[1] == "u3" for item in found)
        with store.conn.connection() as conn:
            _check(explain_prepared(conn, sent, marker), mine)


@pytest.mark.parametrize("case", list(CASES))
async def test_async_search_runs_its_generic_plan_without_workers_on_one_partition(
    pg_uri: str, partitioned: str, case: str
) -> None:
    kwargs, marker = CASES[case]
    mine = _mine(pg_uri, partitioned)
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=partitioned, index=INDEX, pool_size=1, pool_config=FREE_WORKERS
    ) as store:
        async with arecorded() as sent:
            found = await store.asearch(("memories", "u3"), limit=5, **kwargs)
        assert found and all(item.namespace[1] == "u3" for item in found)
        async with store.conn.connection() as conn:
            _check(await aexplain_prepared(conn, sent, marker), mine)
