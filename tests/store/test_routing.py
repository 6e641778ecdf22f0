"""Every hot statement of the store names one tenant (issue 28): with the tables hash-partitioned
by tenant (``setup(partitions=N)``), ``EXPLAIN ANALYZE`` of each statement a user's operation
sends scans one partition of each table, that user's. This is the local stand-in for Citus's
router planner, which sends a statement to one shard only when it filters on the tenant.

The statements are the ones the store really sends (recorded at the cursor), replayed inside a
transaction that is rolled back: put, get, search (in a namespace, under a prefix, filtered,
without a query, the private read and the usage mirror inject makes), a page, the status counts,
an entity walk, an export and an erase of the user. Not routed, so not here: a filtered search
whose filter matches more than ``exact_scan_rows`` of the user's items walks the HNSW index of every
partition (sql._vectors_ann_filtered says why). The statements that read only the shared tenant (the
erase marker) or none of these tables are not about the user and are not checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp

from langmem_vault._tenants import SHARED_TENANT
from langmem_vault.memory._recall.usage import USAGE_ROOT
from langmem_vault.privacy import erase_user, export_user
from langmem_vault.service._records import STATUS_RULES
from langmem_vault.store import PageOp, VaultStore
from langmem_vault.store._entities import EntityLink, ExpandOp, LinkOp
from langmem_vault.store._mirrors import MirrorSearchOp
from langmem_vault.store._pages import CountOp
from langmem_vault.store._ranking import SearchRanking
from tests.support.embeddings import TrigramEmbeddings
from tests.support.routing import assert_reads_within, partition_of, partitions_read, recorded

PARTITIONS = 4
USERS = [f"u{n}" for n in range(6)]
_PARTITION = re.compile(r"^(store_items|store_vectors)_p(\d+)$")


def _partitions_read(
    uri: str, schema: str, sent: list[tuple[Any, Any]], *, analyze: bool = True
) -> list[set[Any]]:
    return partitions_read(uri, schema, sent, "store_", _PARTITION, analyze=analyze)


def _partition_of(uri: str, schema: str, user: str) -> int:
    match = _PARTITION.match(partition_of(uri, schema, "store_items", user))
    assert match
    return int(match.group(2))


FACTS = ("memories", "u3", "semantic")
USAGE = (*USAGE_ROOT, *FACTS)
OPS: dict[str, Callable[[VaultStore, VaultStore], Any]] = {
    "put": lambda s, w: s.batch(
        [PutOp(FACTS, "new", {"text": "I moved to Lisbon"}), PutOp(USAGE, "k1", {"n": 2})]
    ),
    "get": lambda s, w: s.batch([GetOp(FACTS, "k1"), GetOp(USAGE, "k1")]),
    "search in a namespace": lambda s, w: s.search(FACTS, query="tea in the garden"),
    "search under a prefix": lambda s, w: s.search(("memories", "u3"), query="tea"),
    "search filtered": lambda s, w: s.search(FACTS, query="tea", filter={"kind": "a"}),
    # scopes past exact_scan_rows: candidates from the HNSW index, not scored exactly
    "search, HNSW walk": lambda s, w: w.search(FACTS, query="tea in the garden"),
    "newest first": lambda s, w: s.search(FACTS, limit=5),
    "private facts": lambda s, w: s.search(FACTS, filter={"private": True}, limit=5),
    "usage mirror": lambda s, w: s.batch(
        [MirrorSearchOp(SearchOp(FACTS, query="tea"), mirror=USAGE_ROOT)]
    ),
    "page": lambda s, w: s.batch([PageOp((FACTS,), limit=5, with_total=True)]),
    "page with its usage mirror": lambda s, w: s.batch(
        [PageOp((FACTS,), limit=5, mirror=USAGE_ROOT)]
    ),
    "status counts": lambda s, w: s.batch(
        [CountOp((FACTS,), (STATUS_RULES["semantic"],), limit=1001)]
    ),
    "entity walk": lambda s, w: s.batch([ExpandOp((FACTS,), terms=("priya",), limit=5)]),
    "export": lambda s, w: export_user(s, "u3"),
    "erase": lambda s, w: erase_user(s, "u3"),
}


@pytest.fixture(scope="module")
def routed_store(pg_uri: str) -> Iterator[tuple[VaultStore, VaultStore, str]]:
    """A partitioned hybrid store holding facts, usage records and entities of six users,
    and a second one on the same tables that searches scopes of more than 10 items (each
    user's 20) through the HNSW index instead of scoring them exactly."""
    schema = "routing_" + str(abs(hash(pg_uri)) % 10**8)
    index = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}
    walking = SearchRanking(exact_scan_rows=10)
    with (
        VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store,
        VaultStore.from_conn_string(pg_uri, schema=schema, index=index, ranking=walking) as w,
    ):
        store.setup(partitions=PARTITIONS)
        for user in USERS:
            ns = ("memories", user, "semantic")
            store.batch(
                [
                    *(
                        PutOp(ns, f"k{n}", {"text": f"{user} drinks tea {n}", "kind": "ab"[n % 2]})
                        for n in range(20)
                    ),
                    PutOp(ns, "p", {"text": "sealed", "private": True}, index=False),
                    PutOp((*USAGE_ROOT, *ns), "k1", {"n": 1}, index=False),
                    LinkOp(ns, "k1", (EntityLink("Priya", "person"),)),
                ]
            )
        store.put(("langmem_vault", "watermarks", "extract"), "thread-1", {"n": 1})  # shared
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"ANALYZE {schema}.store_items, {schema}.store_vectors")
        yield store, w, schema
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.parametrize(
    ("name", "table"),
    [
        ("usage mirror", "store_items"),
        ("page with its usage mirror", "store_items"),
        ("search in a namespace", "store_vectors"),
        ("search under a prefix", "store_vectors"),
    ],
)
def test_statements_plan_one_partition(
    routed_store: tuple[VaultStore, VaultStore, str], pg_uri: str, name: str, table: str
) -> None:
    """The mirrors' probe names the user's tenant as a constant, so the planner prunes the
    items' other partitions: a tenant computed row by row kept them all in the plan (pruned
    only at run time), and planning a page grew with the partition count (41 ms at 64).
    Likewise a namespace search's cosine probe of the vectors: with the tenant only through
    the item's row it planned every vectors partition (10.9 ms at 64, against 4.1)."""
    store, walking, schema = routed_store
    mine = _partition_of(pg_uri, schema, "u3")
    with recorded() as sent:
        OPS[name](store, walking)
    plans = _partitions_read(pg_uri, schema, sent, analyze=False)
    plans = [planned for planned in plans if any(t == table for t, _ in planned)]
    assert plans, f"{name}: no statement planned {table}"
    for planned in plans:
        held = {p for t, p in planned if t == table}
        assert held == {mine}, f"{name}: planned {sorted(planned)}"


@pytest.mark.parametrize("name", list(OPS))
def test_each_hot_statement_reads_one_partition(
    routed_store: tuple[VaultStore, VaultStore, str], pg_uri: str, name: str
) -> None:
    store, walking, schema = routed_store
    mine = _partition_of(pg_uri, schema, "u3")
    shared = _partition_of(pg_uri, schema, SHARED_TENANT)
    assert {_partition_of(pg_uri, schema, u) for u in USERS} != {mine}  # others elsewhere
    # An erase also deletes the user's erase marker, kept (keyed by user id) in a shared
    # namespace: it records the erase, so it must not go with the user's data.
    allowed = {mine, shared} if name == "erase" else {mine}
    with recorded() as sent:
        OPS[name](store, walking)
    reads = _partitions_read(pg_uri, schema, sent)
    assert_reads_within(reads, allowed, name, "items")
    for scanned in reads:
        if name != "erase":  # its batch deletes the marker beside the user's items
            assert len({p for _, p in scanned}) <= 1, f"{name}: read {sorted(scanned)}"
