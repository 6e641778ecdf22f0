"""jsonb decoding on our pools: orjson where it gives the same value, json where it would not."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp

from langmem_vault.db import _jsonb as jsonb
from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.store import AsyncVaultStore, VaultStore

VALUES: list[Any] = [
    {"text": "User lives in Leeds", "confidence": 0.93, "tags": ["a", "b"], "n": None},
    {"big": 123456789012345678901234567890, "neg": -98765432109876543210},
    {"float": 0.30000000000000004, "tiny": 5e-324, "zero": -0.0, "exp": 1e300},
    {"text": "caf\u00e9 \u2603 \U0001f600", "nested": {"a": [1, {"b": [True, False]}]}},
    {"digits in text": "card 4111111111111111111 ends"},
]


def _same(a: Any, b: Any) -> bool:
    # jsonb orders keys its own way; the dump tells int from float and keeps every digit
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _as_json_reads(pg_uri: str, schema: str) -> dict[str, Any]:
    """The stored values as the standard library decodes Postgres's text of them (jsonb
    itself writes 1e300 as 301 digits and -0.0 as 0)."""
    with psycopg.connect(pg_uri) as conn:
        rows = conn.execute(f"SELECT key, value::text FROM {schema}.store_items").fetchall()
    assert any(len(text) > 300 for _, text in rows)  # the long number reached the loader
    return {key: json.loads(text) for key, text in rows}


@pytest.mark.parametrize("value", VALUES)
def test_loads_gives_what_json_gives(value: Any) -> None:
    text = json.dumps(value)
    assert jsonb.loads(text.encode()) == json.loads(text)
    assert repr(jsonb.loads(text.encode())) == repr(json.loads(text))  # types too (int vs float)


@pytest.mark.parametrize(
    "text",
    [
        "18446744073709551615",  # the largest unsigned 64-bit integer: orjson keeps it exact
        "18446744073709551616",  # one more: orjson would give a float
        "-9223372036854775809",  # one below the smallest signed 64-bit integer
        '{"a": [1, 99999999999999999999999, "x"]}',
        "1234567890.123456789012",  # 19 digits, but not in a row
        '"0123456789012345678"',  # 19 digits in a string
    ],
)
def test_integers_past_64_bits_stay_exact(text: str) -> None:
    assert repr(jsonb.loads(text.encode())) == repr(json.loads(text))


def test_lone_surrogate_goes_to_json() -> None:
    assert jsonb.loads(b'{"s": "\\ud800"}') == {"s": "\ud800"}


def test_store_round_trips_values_on_its_pool(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        store.batch([PutOp(("t",), f"k{i}", v, index=False) for i, v in enumerate(VALUES)])
        stored = _as_json_reads(pg_uri, schema)
        for i in range(len(VALUES)):
            item = store.get(("t",), f"k{i}")
            assert item is not None and _same(item.value, stored[f"k{i}"])
        assert sorted(i.key for i in store.search(("t",), limit=10)) == [
            f"k{i}" for i in range(len(VALUES))
        ]


async def test_store_round_trips_values_on_its_pool_async(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
        await store.abatch([PutOp(("t",), f"k{i}", v, index=False) for i, v in enumerate(VALUES)])
        stored = _as_json_reads(pg_uri, schema)
        for i in range(len(VALUES)):
            item = await store.aget(("t",), f"k{i}")
            assert item is not None and _same(item.value, stored[f"k{i}"])


def test_pools_decode_with_loads_and_keep_the_callers_configure(pg_uri: str) -> None:
    seen: list[Any] = []
    with open_pool(pg_uri, configure=seen.append) as pool, pool.connection() as conn:
        assert conn.adapters.get_loader(conn.adapters.types["jsonb"].oid, 0)._loads is jsonb.loads  # type: ignore[union-attr]
        assert conn.execute("SELECT '{\"n\": 12345678901234567890123}'::jsonb").fetchone() == (
            {"n": 12345678901234567890123},
        )
    assert len(seen) == 1  # the caller's callback still ran
    with psycopg.connect(pg_uri) as own:  # a connection of the caller's: as it was
        loader = own.adapters.get_loader(own.adapters.types["jsonb"].oid, 0)
        assert loader._loads is not jsonb.loads  # type: ignore[union-attr]


async def test_async_pools_decode_with_loads(pg_uri: str) -> None:
    seen: list[Any] = []

    async def remember(conn: Any) -> None:
        seen.append(conn)

    async with await aopen_pool(pg_uri, configure=remember) as pool, pool.connection() as conn:
        loader = conn.adapters.get_loader(conn.adapters.types["jsonb"].oid, 0)
        assert loader._loads is jsonb.loads  # type: ignore[union-attr]
        cur = await conn.execute("SELECT '[1, 2.5, \"x\"]'::jsonb")
        assert await cur.fetchone() == ([1, 2.5, "x"],)
    assert len(seen) == 1
