"""What an HNSW graph's build settings would cost writes: VaultStore loading the same items
into two schemas of one server, batch by batch in turns, one with the graph as ``setup()``
builds it (pgvector's defaults: m 16, ef_construction 64), the other with the graph made
again with ``--graph`` (index storage parameters). Prints the put time per item (wall, and
the server's CPU clock of each store's connection, which other jobs on the machine barely
move) and the ratio (issue 26; the search side: bench/hnsw_graph_recall.py).

    python bench/hnsw_put_bench.py                        # 20,000 items, zipf words, 64 dims
    python bench/hnsw_put_bench.py --items 5000 --graph "m = 12, ef_construction = 200"
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from langgraph.store.base import PutOp

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import plans_explained
import search_cost_bench as cost

from langmem_vault.db._embedded import embedded_uri
from langmem_vault.store import VaultStore


def _store(uri: str, schema: str, index: dict[str, Any], graph: str | None) -> Any:
    conn = psycopg.connect(uri, autocommit=True)
    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    store = VaultStore(conn, schema=schema, index=index)  # type: ignore[arg-type]
    store.setup()
    if graph:
        conn.execute(f"DROP INDEX {schema}.store_vectors_embedding_idx")
        conn.execute(
            f"CREATE INDEX store_vectors_embedding_idx ON {schema}.store_vectors"
            f" USING hnsw (embedding vector_cosine_ops) WITH ({graph})"
        )
    return conn, store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--vocabulary", default="zipf")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--graph", default="m = 16, ef_construction = 200")
    parser.add_argument("--data-dir", help="the embedded server's data dir (default: a temp dir)")
    args = parser.parse_args()
    data_dir = Path(args.data_dir).resolve() if args.data_dir else common.temp_server_dir()
    uri = common.create_database(embedded_uri(data_dir), "hnsw_puts")
    texts = cost.texts_for(args.vocabulary, args.items)
    emb = cost.HashedWords()
    emb.remember(texts)  # vectors computed before timing: database side only
    index = {"dims": cost.DIMS, "embed": emb, "fields": ["text"]}
    sides = {"setup()'s graph": None, args.graph: args.graph}
    stores = {n: _store(uri, f"puts{i}", index, d) for i, (n, d) in enumerate(sides.items())}
    wall = dict.fromkeys(sides, 0.0)
    cpu = dict.fromkeys(sides, 0.0)
    for start in range(0, len(texts), args.batch):
        ops = [
            PutOp(("mem", f"user{i % 100}"), f"k{i}", {"text": texts[i]})
            for i in range(start, min(len(texts), start + args.batch))
        ]
        order = list(sides) if (start // args.batch) % 2 == 0 else list(reversed(sides))
        for name in order:
            conn, store = stores[name]
            before_cpu, t0 = plans_explained.backend_cpu(conn), time.perf_counter()
            store.batch(ops)
            wall[name] += time.perf_counter() - t0
            cpu[name] += plans_explained.backend_cpu(conn) - before_cpu
    rows = [
        [n, f"{wall[n] / args.items * 1000:.3f}", f"{cpu[n] / args.items * 1000:.3f}"]
        for n in sides
    ]
    a, b = sides
    rows.append(
        ["ratio, --graph / setup()", common.ratio(wall[b], wall[a]), common.ratio(cpu[b], cpu[a])]
    )
    print(f"\n### {args.items:,} puts ({args.vocabulary} words), batches of {args.batch}\n")
    common.print_table(["graph", "wall ms per put", "server CPU ms per put"], rows)
    for conn, _ in stores.values():
        conn.close()


if __name__ == "__main__":
    main()
