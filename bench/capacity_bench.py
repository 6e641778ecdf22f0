"""Rows, bytes and index sizes per memory, measured on this machine (docs/capacity.md).

    python bench/capacity_bench.py [--sizes 10000 100000] [--users 100] [--partitions 16]

Each size is a fresh schema on one embedded server, filled with ``size`` semantic facts
(``SemanticFact.to_store()``: text, category, tags, confidence, timestamps) from ``--users``
users arriving interleaved, each embedded (384 dimensions, as the local model gives; random
unit vectors, so the model's time is not measured: sizes do not depend on the values) and
indexed for full text. After ``VACUUM ANALYZE`` it prints each relation's size (heap, TOAST,
every index) and the bytes per memory, and the time a namespace's page, count and erase take
(EXPLAIN ANALYZE: server time and buffers, which do not depend on the machine's load).

The namespaces, ``("memories", "userNNNN", "semantic")``, fit the store's tenant template, so
each user's rows have their own tenant. ``--partitions N`` sets the store up with N hash
partitions by tenant (``setup(partitions=N)``); a partition's sizes count under its table's
or index's name.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.common import print_table, temp_server_uri

DIMS = 384


class RandomEmbeddings(Embeddings):
    """Random unit vectors: the size of a vector is all this bench measures."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(7)

    def _one(self) -> list[float]:
        v = self.rng.standard_normal(DIMS)
        return [float(x) for x in v / np.linalg.norm(v)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one() for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one()


WORDS = [
    "tea",
    "coffee",
    "hiking",
    "jazz",
    "bread",
    "Lyon",
    "Acme",
    "robots",
    "garden",
    "cycling",
    "piano",
    "sister",
]


def _fill(store: Any, size: int, users: int) -> float:
    from langgraph.store.base import PutOp

    from langmem_vault.memory._models import SemanticFact

    t0 = time.perf_counter()
    batch: list[PutOp] = []
    for n in range(size):
        user = f"user{n % users:04d}"
        words = " ".join(WORDS[(n + k) % len(WORDS)] for k in range(5))
        fact = SemanticFact(
            text=f"User mentioned {words} (fact {n})",
            category="preference",
            tags=[WORDS[n % len(WORDS)]],
        )
        batch.append(PutOp(("memories", user, "semantic"), f"f{n}", fact.to_store()))
        if len(batch) == 500:
            store.batch(batch)
            batch = []
    if batch:
        store.batch(batch)
    return time.perf_counter() - t0


# A partition's (and a partition's index's) sizes count under its root's name.
SIZES_SQL = """
SELECT r.relname, min(c.relkind::text) AS kind, sum(pg_relation_size(c.oid))::bigint AS bytes,
       sum(coalesce(pg_relation_size(c.reltoastrelid), 0))::bigint AS toast,
       sum(greatest(c.reltuples, 0))::bigint AS rows
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class r ON r.oid = coalesce(pg_partition_root(c.oid), c.oid)
WHERE n.nspname = %s AND c.relkind IN ('r', 'i')
GROUP BY r.relname
ORDER BY min(c.relkind::text) DESC, sum(pg_relation_size(c.oid)) DESC"""


def _explain(conn: Any, sql: str, params: Any = None) -> tuple[float, int]:
    (plan,) = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params).fetchone()
    top = plan[0]
    buffers = top["Plan"].get("Shared Hit Blocks", 0) + top["Plan"].get("Shared Read Blocks", 0)
    return float(top["Execution Time"]), int(buffers)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=0, help="setup(partitions=N)")
    args = parser.parse_args()

    import psycopg

    from langmem_vault.store import VaultStore

    uri = temp_server_uri()
    for size in args.sizes:
        schema = f"cap_{size}"
        index = {"dims": DIMS, "embed": RandomEmbeddings(), "fields": ["text"]}
        with VaultStore.from_conn_string(uri, schema=schema, index=index) as store:  # type: ignore[arg-type]
            store.setup(partitions=args.partitions)
            took = _fill(store, size, args.users)
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f"VACUUM ANALYZE {schema}.store_items")
            conn.execute(f"VACUUM ANALYZE {schema}.store_vectors")
            rels = conn.execute(SIZES_SQL, (schema,)).fetchall()
            rows = []
            total = 0
            for name, kind, size_b, toast, tuples in rels:
                total += size_b + toast
                per = (size_b + toast) / size
                kind_name = "index" if kind == "i" else "table"
                rows.append((name, kind_name, tuples, f"{size_b / 2**20:.1f}", f"{per:.0f}"))
            rows.append(("all", "", "", f"{total / 2**20:.1f}", f"{total / size:.0f}"))
            # each statement names the user's tenant, as the store's do
            user = ("user0007", "memories.user0007.semantic")
            mine = "tenant = %s AND prefix = %s"
            page = (
                f"SELECT key FROM {schema}.store_items AS i WHERE {mine} "
                f"ORDER BY {schema}.item_time(value, created_at) DESC, key DESC LIMIT 11"
            )
            count = f"SELECT count(*) FROM {schema}.store_items WHERE {mine}"
            timings = [
                ("page of 10 (newest first)", *_explain(conn, page, user)),
                ("count of the user's memories", *_explain(conn, count, user)),
            ]
            conn.execute("BEGIN")
            timings.append(
                (
                    "erase one user (DELETE, rolled back)",
                    *_explain(conn, f"DELETE FROM {schema}.store_items WHERE {mine}", user),
                )
            )
            conn.execute("ROLLBACK")
        load = os.getloadavg()[0]
        print(
            f"\n{size:,} memories from {args.users} users, interleaved, "
            f"{args.partitions} partitions; filled in {took:.0f} s"
        )
        print(f"(load average {load:.1f}; sizes after VACUUM ANALYZE)")
        print_table(("relation", "kind", "rows", "MiB", "bytes per memory"), rows)
        print_table(
            ("statement (one user)", "server ms", "buffers"),
            [(n, f"{ms:.2f}", b) for n, ms, b in timings],
        )


if __name__ == "__main__":
    main()
