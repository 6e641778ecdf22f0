"""langgraph-checkpoint-conformance against AsyncVaultSaver: every capability, every test."""

from __future__ import annotations

from collections.abc import AsyncIterator

from langgraph.checkpoint.conformance import checkpointer_test, validate

from langmem_vault.checkpointers import AsyncVaultSaver


async def test_conformance_suite_passes_in_full(pg_uri: str, schema: str) -> None:
    @checkpointer_test(name="AsyncVaultSaver")
    async def factory() -> AsyncIterator[AsyncVaultSaver]:
        async with AsyncVaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=2) as s:
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
    report.print_report()
