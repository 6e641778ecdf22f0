"""Counter records (inject's access stamps, ``store.increment``) go under the tenant the store's
rule gives their namespace, the one its reads route by: a user's usage record under the user
(label decoded), a shared namespace's under the shared tenant. The tenant travels from Python
as a parameter: the schema's ``tenant_of`` is not evaluated row by row (issue 28, session 10),
so replacing it with one that answers wrongly changes nothing."""

from __future__ import annotations

import psycopg

from langmem_vault._tenants import SHARED_TENANT, encode_label
from langmem_vault.memory._recall.usage import usage_namespace
from langmem_vault.store import AsyncVaultStore, VaultStore

USER = "ana.g@x.io"
MINE = usage_namespace(("memories", encode_label(USER), "semantic"))
SHARED = usage_namespace(("instructions",))  # a global instruction's usage record
INCREMENTS = [
    (MINE, "f1", {"access_count": 1, "last_accessed": "2026-11-27T10:00:00+00:00"}),
    (SHARED, "i1", {"access_count": 1}),
]


def _sabotage_tenant_of(uri: str, schema: str) -> None:
    """The schema's tenant_of answers a tenant no namespace has: a statement that still
    computed tenants with it would file the records there."""
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {schema}.tenant_of(namespace text[]) RETURNS text "
            "LANGUAGE sql IMMUTABLE AS $$ SELECT 'nobody' $$"
        )


def _tenants(uri: str, schema: str) -> dict[str, str]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute(f"SELECT key, tenant FROM {schema}.store_items").fetchall()
    return dict(rows)


def _check(uri: str, schema: str) -> None:
    assert _tenants(uri, schema) == {"f1": USER, "i1": SHARED_TENANT}


def test_counter_records_go_under_their_namespaces_tenant(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        _sabotage_tenant_of(pg_uri, schema)
        assert store.increment(INCREMENTS) == 2
        _check(pg_uri, schema)
        # ...where the store's reads find them, and a second increment adds to them
        assert store.increment(INCREMENTS[:1]) == 1
        item = store.get(MINE, "f1")
        assert item is not None and item.value["access_count"] == 2
        shared = store.get(SHARED, "i1")
        assert shared is not None and shared.value == {"access_count": 1}
    _check(pg_uri, schema)


async def test_counter_records_go_under_their_namespaces_tenant_async(
    pg_uri: str, schema: str
) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
        _sabotage_tenant_of(pg_uri, schema)
        assert await store.aincrement(INCREMENTS) == 2
        assert await store.aincrement(INCREMENTS[:1]) == 1
        item = await store.aget(MINE, "f1")
        assert item is not None and item.value["access_count"] == 2
    _check(pg_uri, schema)
