"""Hostile input gets a clear error naming the field, and nothing of its batch is written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from langmem_vault.store import AsyncVaultStore, InvalidValueError, VaultStore
from langmem_vault.store._validation import (
    MAX_KEY_BYTES,
    MAX_LABEL_BYTES,
    MAX_NAMESPACE_BYTES,
    MAX_VALUE_DEPTH,
)
from tests.store.conftest import Driver
from tests.support.embeddings import TrigramEmbeddings, index_config


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth):
        value = {"n": value}
    return value


def nested_list(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return {"list": value}


def cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"text": "loop"}
    value["self"] = value
    return value


CJK_KEY = "語" * 1024  # 1,024 characters, 3,072 bytes
A = ("a",)

HOSTILE: list[tuple[str, Any, type[Exception], str]] = [
    # lone surrogates: UTF-8 cannot encode them
    ("key surrogate", PutOp(A, "k\ud800", {"v": 1}), InvalidValueError, "key contains a lone"),
    ("get key surrogate", GetOp(A, "k\udfff"), InvalidValueError, "key contains a lone"),
    ("label surrogate", PutOp(("a\ud800",), "k", {"v": 1}), InvalidNamespaceError, "label"),
    (
        "value surrogate",
        PutOp(A, "k", {"text": "x\ud800"}),
        InvalidValueError,
        r"value at \$\.text",
    ),
    ("dict key surrogate", PutOp(A, "k", {"a\udc00": 1}), InvalidValueError, "key 'a.*of value"),
    (
        "nested surrogate",
        PutOp(A, "k", {"l": [{"t": "\ud800"}]}),
        InvalidValueError,
        r"\$\.l\[0\]\.t",
    ),
    ("query surrogate", SearchOp(A, query="q\udfff"), InvalidValueError, "query contains a lone"),
    # deep JSON: Python's encoder would raise RecursionError
    ("deep dict", PutOp(A, "k", nested(2000)), InvalidValueError, f"more than {MAX_VALUE_DEPTH}"),
    ("deep list", PutOp(A, "k", nested_list(5000)), InvalidValueError, "nested more than"),
    ("cycle", PutOp(A, "k", cyclic()), InvalidValueError, "nested more than"),
    ("deep filter", SearchOp(A, filter=nested(2000)), InvalidValueError, "filter is nested"),
    # byte lengths, not characters: a btree row holds 2,704 bytes
    ("CJK key", PutOp(A, CJK_KEY, {"v": 1}), InvalidValueError, "key is 3072 bytes"),
    ("CJK label", PutOp(("語" * 256,), "k", {"v": 1}), InvalidNamespaceError, "768 bytes"),
    (
        "11 labels",
        PutOp(tuple(f"{i:x}" * 256 for i in range(11)), "k", {"v": 1}),
        InvalidNamespaceError,
        "namespace is 2826 bytes",
    ),
    (
        "1000 labels",
        PutOp(tuple("l" * 1000), "k", {"v": 1}),
        InvalidNamespaceError,
        "namespace is 1999 bytes",
    ),
    ("index path NUL", PutOp(A, "k", {"t": "x"}, index=["t\x00"]), InvalidValueError, "index path"),
    # ttl
    (
        "ttl NaN",
        PutOp(A, "k", {"v": 1}, ttl=float("nan")),
        InvalidValueError,
        "ttl must be a finite",
    ),
    ("ttl 1e300", PutOp(A, "k", {"v": 1}, ttl=1e300), InvalidValueError, "ttl must be a finite"),
    (
        "ttl inf",
        PutOp(A, "k", {"v": 1}, ttl=float("inf")),
        InvalidValueError,
        "ttl must be a finite",
    ),
    ("ttl str", PutOp(A, "k", {"v": 1}, ttl="5"), InvalidValueError, "ttl must be a number"),  # type: ignore[arg-type]
    # filter values, not just keys
    (
        "filter NUL",
        SearchOp(A, filter={"t": "a\x00b"}),
        InvalidValueError,
        r"filter at \$\.t cannot contain NUL",
    ),
    (
        "filter surrogate",
        SearchOp(A, filter={"t": "\ud800"}),
        InvalidValueError,
        r"filter at \$\.t contains a lone",
    ),
    (
        "filter op surrogate",
        SearchOp(A, filter={"t": {"$gt": "\ud800"}}),
        InvalidValueError,
        r"\$\.t\.\$gt",
    ),
    (
        "filter key surrogate",
        SearchOp(A, filter={"\ud800": 1}),
        InvalidValueError,
        "key '.*of filter",
    ),
    # pages
    (
        "offset 10**19",
        SearchOp(A, offset=10**19),
        InvalidValueError,
        "offset must be between 0 and",
    ),
    ("limit str", SearchOp(A, limit="10"), InvalidValueError, "limit must be an int, got str"),  # type: ignore[arg-type]
    ("limit float", SearchOp(A, limit=2.5), InvalidValueError, "limit must be an int"),  # type: ignore[arg-type]
    ("limit bool", SearchOp(A, limit=True), InvalidValueError, "limit must be an int"),
    ("ns offset", ListNamespacesOp(offset=10**19), InvalidValueError, "offset must be between"),
    (
        "ns depth str",
        ListNamespacesOp(max_depth="2"),
        InvalidValueError,
        "max_depth must be an int",
    ),  # type: ignore[arg-type]
    (
        "ns match surrogate",
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("\ud800",)),)),
        InvalidNamespaceError,
        "lone surrogate",
    ),
]


@pytest.fixture(params=["vault", "avault"])
async def driver(request: pytest.FixtureRequest, pg_uri: str, schema: str) -> AsyncIterator[Driver]:
    index = index_config(TrigramEmbeddings(), ["t", "text"])
    if request.param == "vault":
        with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:
            store.setup()
            yield Driver(store, is_async=False, kind="vault")
    else:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index) as astore:
            await astore.setup()
            yield Driver(astore, is_async=True, kind="avault")


def snapshot(pg_uri: str, schema: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(pg_uri) as conn:
        items = conn.execute(
            f"SELECT prefix, key, value, updated_at FROM {schema}.store_items ORDER BY 1, 2"
        ).fetchall()
        vectors = conn.execute(
            f"SELECT prefix, key, field FROM {schema}.store_vectors ORDER BY 1, 2, 3"
        ).fetchall()
    return items + vectors


@pytest.mark.parametrize(("case", "op", "error", "message"), HOSTILE, ids=[h[0] for h in HOSTILE])
async def test_hostile_input_is_refused_and_nothing_is_written(
    driver: Driver,
    pg_uri: str,
    schema: str,
    case: str,
    op: Any,
    error: type[Exception],
    message: str,
) -> None:
    await driver.put(A, "before", {"text": "unchanged"})
    before = snapshot(pg_uri, schema)
    with pytest.raises(error, match=message):
        await driver.batch([PutOp(A, "good", {"text": "fine"}), PutOp(A, "before", None), op])
    assert snapshot(pg_uri, schema) == before


async def test_the_documented_limits_fit_in_postgres(driver: Driver) -> None:
    """A key, a namespace and an index path each at its byte limit are stored and found."""
    label = "ü" * (MAX_LABEL_BYTES // 2)  # 2 bytes each
    labels = MAX_NAMESPACE_BYTES // (MAX_LABEL_BYTES + 1)
    rest = "x" * (MAX_NAMESPACE_BYTES - labels * (MAX_LABEL_BYTES + 1))
    namespace = (*[label] * labels, rest)
    assert len(".".join(namespace).encode()) == MAX_NAMESPACE_BYTES
    key = "語" * (MAX_KEY_BYTES // 3) + "k"
    assert len(key.encode()) == MAX_KEY_BYTES
    path = "f" * 256
    await driver.put(namespace, key, {path: "text at the limits", "t": "x"}, index=[path])
    got = await driver.get(namespace, key)
    assert got is not None and got.value[path] == "text at the limits"
    hits = await driver.search(namespace[:1], query="text at the limits")
    assert [h.key for h in hits] == [key]


async def test_a_refused_namespace_is_refused_every_time(driver: Driver) -> None:
    """Valid namespaces are remembered between checks; a refused one never is, nor one that
    joins to the same prefix as a valid one."""
    await driver.put(("a", "b"), "k", {"text": "fine"})
    for _ in range(3):
        with pytest.raises(InvalidNamespaceError, match="periods"):
            await driver.batch([PutOp(("a.b",), "k", {"v": 1})])
        with pytest.raises(InvalidNamespaceError, match="lone surrogate"):
            await driver.search(("\ud800",))
        assert [i.key for i in await driver.search(("a", "b"))] == ["k"]
