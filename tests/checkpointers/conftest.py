"""Fixtures: a VaultSaver and an AsyncVaultSaver on a fresh schema of the session's Postgres."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver


@pytest.fixture
def saver(pg_uri: str, schema: str) -> Iterator[VaultSaver]:
    with VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=4) as s:
        s.setup()
        yield s


@pytest.fixture
async def asaver(pg_uri: str, schema: str) -> AsyncIterator[AsyncVaultSaver]:
    async with AsyncVaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=4) as s:
        await s.setup()
        yield s


@pytest.fixture(params=["sync", "async"])
async def any_saver(
    request: pytest.FixtureRequest, pg_uri: str, schema: str
) -> AsyncIterator[VaultSaver | AsyncVaultSaver]:
    """Each test using this runs twice: on VaultSaver and on AsyncVaultSaver."""
    if request.param == "sync":
        with VaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=4) as s:
            s.setup()
            yield s
    else:
        async with AsyncVaultSaver.from_conn_string(pg_uri, schema=schema, pool_size=4) as a:
            await a.setup()
            yield a
