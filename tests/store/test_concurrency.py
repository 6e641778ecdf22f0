"""Concurrent multi-key batches: rows are locked in one order, so batches never deadlock."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langmem_vault.db import _connection as connection
from langmem_vault.store import AsyncVaultStore, VaultStore

KEYS = [f"k{i:02d}" for i in range(30)]
ROUNDS = 25


def _batch(keys: list[str], writer: int, round_: int) -> list[PutOp]:
    # Deletes mixed in: a delete locks its row in another statement than the upserts.
    return [
        PutOp(("shared",), key, None if (i + round_) % 7 == 0 else {"w": writer, "r": round_})
        for i, key in enumerate(keys)
    ]


@pytest.fixture
def no_conflict_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn the retry safety net off: only the lock order can keep these batches apart."""
    monkeypatch.setattr(connection, "CONFLICT_ATTEMPTS", 1)


@pytest.mark.usefixtures("no_conflict_retry")
def test_opposite_orders_do_not_deadlock(pg_uri: str, schema: str) -> None:
    errors: list[BaseException] = []
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        store.batch([PutOp(("shared",), k, {"w": -1}) for k in KEYS])
        start = threading.Barrier(2)

        def write(writer: int, keys: list[str]) -> None:
            start.wait()
            for round_ in range(ROUNDS):
                try:
                    store.batch(_batch(keys, writer, round_))
                except Exception as exc:
                    errors.append(exc)

        threads = [
            threading.Thread(target=write, args=(0, KEYS)),
            threading.Thread(target=write, args=(1, KEYS[::-1])),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [type(e).__name__ for e in errors] == []
        # Every batch was atomic: the last one written leaves every live key with one writer.
        writers = {item.value["w"] for item in store.search(("shared",), limit=100)}
        assert len(writers) == 1


@pytest.mark.usefixtures("no_conflict_retry")
async def test_async_opposite_orders_do_not_deadlock(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
        await store.abatch([PutOp(("shared",), k, {"w": -1}) for k in KEYS])

        async def write(writer: int, keys: list[str]) -> list[Any]:
            return [await store.abatch(_batch(keys, writer, r)) for r in range(ROUNDS)]

        done = await asyncio.gather(write(0, KEYS), write(1, KEYS[::-1]), return_exceptions=True)
        assert [type(d).__name__ for d in done] == ["list", "list"]
