"""Tenant isolation and hostile input on VaultStore.

A property test runs random sequences of puts, updates, deletes, searches and listings for
several users, each in their own namespaces, and checks against a model that nothing done
for one user ever returns or changes another's data. Hostile strings (SQL fragments, LIKE and
regex wildcards, quotes) in labels, keys, filter keys and queries are plain data.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langmem_vault.store import VaultStore
from tests.support.embeddings import TrigramEmbeddings, index_config

USERS = ["alice", "bob", "carol_%", "dave.evil"[:4]]
HOSTILE = [
    "'; DROP TABLE store_items; --",
    "a' OR '1'='1",
    "%",
    "_",
    ".*",
    "\\",
    '"quoted"',
    "$1",
    "robert'); DELETE FROM store_items;--",
]


@pytest.fixture(scope="module")
def shared_store(pg_uri: str) -> Iterator[VaultStore]:
    schema = f"iso_{uuid.uuid4().hex[:10]}"
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(TrigramEmbeddings())
    ) as store:
        store.setup()
        yield store
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


key_st = st.sampled_from(["k1", "k2", "k3", *HOSTILE])
text_st = st.sampled_from(["green tea", "black coffee", "zebra", *HOSTILE])
op_st = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(USERS), key_st, text_st),
    st.tuples(st.just("delete"), st.sampled_from(USERS), key_st, st.just("")),
    st.tuples(st.just("search"), st.sampled_from(USERS), st.just(""), text_st),
    st.tuples(st.just("list"), st.sampled_from(USERS), st.just(""), st.just("")),
    st.tuples(st.just("filter"), st.sampled_from(USERS), st.just(""), text_st),
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(op_st, min_size=1, max_size=25))
def test_no_operation_crosses_users(shared_store: VaultStore, ops: list[tuple[str, ...]]) -> None:
    run = uuid.uuid4().hex[:8]  # a fresh root per example: examples do not see each other

    def ns(user: str) -> tuple[str, ...]:
        return (run, user, "memories")

    model: dict[str, dict[str, str]] = {u: {} for u in USERS}
    for op, user, key, text in ops:
        if op == "put":
            shared_store.put(ns(user), key, {"text": text, "owner": user})
            model[user][key] = text
        elif op == "delete":
            shared_store.delete(ns(user), key)
            model[user].pop(key, None)
        elif op == "search":
            hits = shared_store.search(ns(user), query=text, limit=100)
            assert {h.key: h.value["text"] for h in hits} == model[user]
            assert all(h.namespace == ns(user) and h.value["owner"] == user for h in hits)
        elif op == "filter":
            hits = shared_store.search(ns(user), filter={"text": text}, limit=100)
            assert {h.key for h in hits} == {k for k, v in model[user].items() if v == text}
        else:
            listed = shared_store.list_namespaces(prefix=(run, user))
            assert listed == ([ns(user)] if model[user] else [])
        # After every step, every user's data is exactly the model's.
        for other in USERS:
            stored = {h.key: h.value["text"] for h in shared_store.search(ns(other), limit=100)}
            assert stored == model[other]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_strings_are_data(shared_store: VaultStore, hostile: str) -> None:
    root = uuid.uuid4().hex[:8]
    label = hostile.replace(".", "·")  # '.' is refused in labels by design
    shared_store.put((root, label), hostile, {hostile: hostile, "text": hostile})
    shared_store.put((root, "other"), "k", {"text": "innocent"})
    item = shared_store.get((root, label), hostile)
    assert item is not None and item.value[hostile] == hostile
    assert [h.key for h in shared_store.search((root, label), query=hostile)] == [hostile]
    assert [h.key for h in shared_store.search((root,), filter={hostile: hostile})] == [hostile]
    assert [h.key for h in shared_store.search((root,), filter={hostile: {"$gte": hostile}})] == [
        hostile
    ]
    assert shared_store.list_namespaces(prefix=(root, label)) == [(root, label)]
    assert shared_store.list_namespaces(suffix=(label,)) == [(root, label)]
    assert len(shared_store.search((root,))) == 2  # nothing dropped, nothing leaked
