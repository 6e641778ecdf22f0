"""Tenant isolation of the privacy operations: erase, export and import of one user never
read or change another's data, even for ids that are prefixes of each other or look like
SQL or LIKE patterns (a hypothesis property test against a model)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import IndexConfig

from langmem_vault.memory._vault import MemoryVault
from langmem_vault.privacy._subject_rights.erase import erase_user
from langmem_vault.privacy._subject_rights.portability import export_user, import_user
from langmem_vault.store import VaultStore

USERS = ["alice", "al", "alice_", "a%", "x' OR '1'='1"]


@pytest.fixture(scope="module")
def shared_store(pg_uri: str, index_cfg: IndexConfig) -> Iterator[VaultStore]:
    schema = f"piso_{uuid.uuid4().hex[:10]}"
    with VaultStore.from_conn_string(pg_uri, schema=schema, index=index_cfg) as store:
        store.setup()
        yield store
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


user_st = st.sampled_from(USERS)
op_st = st.one_of(
    st.tuples(st.just("remember"), user_st, st.sampled_from(["tea", "jazz", "50%", "'; --"])),
    st.tuples(st.just("erase"), user_st, st.just("")),
    st.tuples(st.just("roundtrip"), user_st, st.just("")),
    st.tuples(st.just("move"), user_st, user_st),
)


def _texts(store: VaultStore, user: str) -> list[str]:
    return sorted(r["value"]["text"] for r in export_user(store, user)["memories"])


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(op_st, min_size=1, max_size=12))
def test_privacy_operations_never_cross_users(
    shared_store: VaultStore, ops: list[tuple[str, str, str]]
) -> None:
    store = shared_store
    for user in USERS:
        erase_user(store, user)
    model: dict[str, list[str]] = {u: [] for u in USERS}
    for kind, user, arg in ops:
        if kind == "remember":
            MemoryVault(store, user_id=user).remember(arg)
            model[user].append(arg)
        elif kind == "erase":
            assert erase_user(store, user).store_items == len(model[user])
            model[user] = []
        elif kind == "roundtrip":
            doc = export_user(store, user)
            erase_user(store, user)
            import_user(store, doc)
        elif kind == "move" and arg != user:
            # a user's data moved to another id (e.g. an account merge): copy, then erase
            import_user(store, export_user(store, user), user_id=arg)
            erase_user(store, user)
            model[arg] = model[arg] + model[user]
            model[user] = []
        for other in USERS:
            assert _texts(store, other) == sorted(model[other]), (kind, user, other)
