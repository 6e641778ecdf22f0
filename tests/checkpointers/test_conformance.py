"""langgraph-checkpoint-conformance against AsyncVaultSaver: every capability, every test.

Run twice: on the saver's own pool (statements run without transaction blocks) and on a
caller's plain pool (no autocommit, default rows: every call runs in a transaction).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from psycopg_pool import AsyncConnectionPool

from langmem_vault.checkpointers import AsyncVaultSaver


@pytest.mark.parametrize("own_pool", [True, False], ids=["own-pool", "callers-pool"])
async def test_conformance_suite_passes_in_full(pg_uri: str, schema: str, own_pool: bool) -> None:
    @checkpointer_test(name="AsyncVaultSaver")
    async def factory() -> AsyncIterator[AsyncVaultSaver]:
        if own_pool:
            async with AsyncVaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2) as s:
                await s.setup()
                yield s
        else:
            async with AsyncConnectionPool(pg_uri, min_size=1, max_size=2, open=False) as pool:
                s = AsyncVaultSaver(pool, schema=schema)
                await s.setup()
                yield s

    report = await validate(factory)
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert not failures, failures
    undetected = [name for name, result in report.results.items() if not result.detected]
    assert undetected == [], f"capabilities not detected: {undetected}"
    passed = sum(result.tests_passed for result in report.results.values())
    assert passed == 81, report.to_dict()
    assert report.passed_all()
