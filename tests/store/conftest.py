"""Store fixtures: the same scenario runs on InMemoryStore, VaultStore and AsyncVaultStore."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.embeddings import TrigramEmbeddings


class Driver:
    """Calls a store's sync methods, or the a-prefixed ones for AsyncVaultStore, as coroutines.

    ``await d.put(...)`` runs ``store.put`` or ``await store.aput``: one test body, three stores.
    """

    def __init__(self, store: BaseStore, *, is_async: bool, kind: str) -> None:
        self.store = store
        self.is_async = is_async
        self.kind = kind

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            if self.is_async:
                return await getattr(self.store, "a" + name)(*args, **kwargs)
            return getattr(self.store, name)(*args, **kwargs)

        return call


@pytest.fixture
def embeddings() -> TrigramEmbeddings:
    return TrigramEmbeddings()


@pytest.fixture(params=["memory", "vault", "avault"])
async def make_store(
    request: pytest.FixtureRequest, pg_uri: str, schema: str
) -> AsyncIterator[Callable[..., Awaitable[Driver]]]:
    """A factory: ``d = await make_store(index=...)`` gives a Driver over a fresh store."""
    kind: str = request.param
    opened: list[Any] = []

    async def make(**kwargs: Any) -> Driver:
        if kind == "memory":
            return Driver(InMemoryStore(**kwargs), is_async=False, kind=kind)
        name = f"{schema}_{len(opened)}"
        if kind == "vault":
            cm: Any = VaultStore.from_conn_string(pg_uri, schema=name, **kwargs)
            store = cm.__enter__()
            opened.append((cm, False, name))
            store.setup()
            return Driver(store, is_async=False, kind=kind)
        acm: Any = AsyncVaultStore.from_conn_string(pg_uri, schema=name, **kwargs)
        astore = await acm.__aenter__()
        opened.append((acm, True, name))
        await astore.setup()
        return Driver(astore, is_async=True, kind=kind)

    yield make
    import psycopg

    for cm, is_async, name in opened:
        if is_async:
            await cm.__aexit__(None, None, None)
        else:
            cm.__exit__(None, None, None)
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
