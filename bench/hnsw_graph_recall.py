"""What an HNSW graph's build settings buy a search: on a database bench/search_cost_bench.py
loaded (``--data-dir D --reuse``), VaultStore's graph is made again with ``--graph`` (index
storage parameters; "" keeps the graph there), then for each ``--walks`` entry ``ef:rows``
(hnsw.ef_search, and the rows the vector branch takes from the walk) the plain search's
recall@10 against the exact path (every vector scored) per query class, and the shared
buffers (hit + read) per search of its first 10 queries, median (issue 26).

The walk's settings are patched into the store's statement templates (a bench-only change;
the store always walks with ef_search = candidates for as many rows).

    python bench/search_cost_bench.py --sizes 20000 --vocabularies closed,zipf --passes "" \\
        --explain 0 --data-dir D                                   # load once
    python bench/hnsw_graph_recall.py --data-dir D --vocabulary zipf \\
        --graph "m = 16, ef_construction = 200" --walks 50:50,45:45,40:35
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import plans_explained
import search_cost_bench as cost

from langmem_vault.db._embedded import embedded_uri
from langmem_vault.store import SearchRanking, VaultStore
from langmem_vault.store import _plan_settings as ps
from langmem_vault.store import _vector_sql as vs

SCHEMA = "bench"


def rebuild(uri: str, graph: str) -> None:
    with psycopg.connect(uri, autocommit=True) as conn:
        if graph:
            start = time.perf_counter()
            conn.execute(f"DROP INDEX {SCHEMA}.store_vectors_embedding_idx")
            conn.execute(
                f"CREATE INDEX store_vectors_embedding_idx ON {SCHEMA}.store_vectors"
                f" USING hnsw (embedding vector_cosine_ops) WITH ({graph})"
            )
            print(f"graph ({graph}) built in {time.perf_counter() - start:.1f} s")
        (pages,) = conn.execute(
            f"SELECT pg_relation_size('{SCHEMA}.store_vectors_embedding_idx') / 8192"
        ).fetchone() or (0,)
        print(f"graph pages: {pages}")


def walk_with(ef: int, rows: int) -> None:
    """The store's statements walk with ``ef`` and take ``rows`` rows from the walk."""
    settings, ann = ps.hnsw_settings, vs.vectors_ann
    ps.hnsw_settings = lambda _ef: settings(ef)  # type: ignore[assignment]
    vs.vectors_ann = lambda s, columns, where: ann(s, columns, where).replace(
        "LIMIT %(k)s", f"LIMIT {rows}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--vocabulary", default="zipf")
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--graph", default="", help='e.g. "m = 16, ef_construction = 200"')
    parser.add_argument("--walks", default="50:50", help="ef_search:rows, comma-separated")
    parser.add_argument("--queries", type=int, default=60, help="queries per word class")
    args = parser.parse_args()
    server = embedded_uri(Path(args.data_dir).resolve())
    uri = make_conninfo(server, dbname=f"cost_vault_{args.vocabulary}_{args.size}")
    queries = cost.query_sets(cost.texts_for(args.vocabulary, args.size), args.queries)
    emb = cost.HashedWords()
    emb.remember([q for qs in queries.values() for q in qs])
    index: Any = {"dims": cost.DIMS, "embed": emb, "fields": ["text"]}
    rebuild(uri, args.graph)
    with psycopg.connect(uri, autocommit=True) as conn:
        exact = VaultStore(
            conn, index=index, schema=SCHEMA, ranking=SearchRanking(exact_scan_rows=10**9)
        )
        want = {
            c: [{h.key for h in exact.search(("mem",), query=q, limit=10)} for q in qs]
            for c, qs in queries.items()
        }
    originals = ps.hnsw_settings, vs.vectors_ann
    for walk in args.walks.split(","):
        ef, rows = map(int, walk.split(":"))
        walk_with(ef, rows)
        with psycopg.connect(uri, autocommit=True) as conn:
            store = VaultStore(conn, index=index, schema=SCHEMA)
            found = {
                c: sum(
                    len({h.key for h in store.search(("mem",), query=q, limit=10)} & want[c][i])
                    for i, q in enumerate(qs)
                )
                for c, qs in queries.items()
            }
            plans = plans_explained.auto_explain(conn)
            out = []
            for c, qs in queries.items():
                counts = []
                for q in qs[:10]:
                    plans.clear()
                    store.search(("mem",), query=q, limit=10)
                    counts.append(plans_explained.buffers(plans))
                total = sum(len(w) for w in want[c])
                out.append(
                    f"{c} {found[c] / total:.3f} ({sorted(counts)[len(counts) // 2]} buffers)"
                )
        ps.hnsw_settings, vs.vectors_ann = originals
        print(f"ef_search {ef}, {rows} rows: " + "; ".join(out), flush=True)


if __name__ == "__main__":
    main()
