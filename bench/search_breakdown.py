"""Where a VaultStore search's time goes, server and client (issue 26): for the plain and
namespace scopes, a namespace's first search (its size not yet known to the store: the
statement counts it) and later ones, on databases ``search_cost_bench.py --data-dir D`` left.

Per row, over ``--searches`` searches: wall time, the server process's CPU (``/proc``), so
the client and the wire are the difference; then one search's statement under
``EXPLAIN (ANALYZE, BUFFERS, TIMING, SUMMARY)`` as a custom plan (planning against execution:
what a prepared statement's generic plan saves; JIT, if the plan used it) and as the store
runs it (auto_explain: generic plan included); and cProfile of the client side of the later
searches, grouped (waiting on the server, psycopg's row decoding, JSON, the store's code).

    python bench/search_cost_bench.py --quick --data-dir /tmp/cost-pg   # loads, keeps the data
    python bench/search_breakdown.py --data-dir /tmp/cost-pg --vocabulary closed
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import plans_explained
import search_cost_bench as cost

from langmem_vault.db._embedded import embedded_uri

GROUPS = {
    "waiting on the server (psycopg wait)": ("psycopg/connection.py", "wait"),
    "row decoding (psycopg loaders)": ("psycopg", "load"),
    "JSON values (orjson / json)": ("json", ""),
    "vector parameter (pgvector dumper)": ("_vectors.py", ""),
}


def _explained(conn: psycopg.Connection[Any], captured: list[tuple[Any, Any]]) -> str:
    settings, out = [], []
    for sql, params in captured:
        text = sql if isinstance(sql, str) else sql.as_string(conn)
        head = text.lstrip()[:80]
        if "set_config" in head:
            settings.append((text, params))
            continue
        with conn.transaction():
            for s_text, s_params in settings:
                conn.execute(s_text, s_params)
            plan = conn.execute(
                f"EXPLAIN (ANALYZE, BUFFERS, TIMING, SUMMARY, FORMAT JSON) {text}", params
            ).fetchone()[0][0]  # type: ignore[index]
        top = plan["Plan"]
        out.append(
            f"custom plan: planning {plan['Planning Time']:.2f} ms, execution "
            f"{plan['Execution Time']:.2f} ms, buffers "
            f"{top.get('Shared Hit Blocks', 0) + top.get('Shared Read Blocks', 0)}"
            f"{', JIT' if 'JIT' in plan else ', no JIT'}"
        )
        break
    return "; ".join(out)


def _client_profile(run: Any) -> str:
    prof = cProfile.Profile()
    prof.enable()
    run()
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = max(t for (_, _, _), (_, _, _, t, _) in stats.items())  # the outermost call
    parts = []
    for label, (path, name) in GROUPS.items():
        own = sum(
            tt
            for (file, _, func), (_, _, tt, _, _) in stats.items()
            if path in file and name in func
        )
        parts.append(f"{label} {own / total:.0%}")
    return ", ".join(parts) + f" (of {total * 1000:.0f} ms)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--vocabulary", default="closed")
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--words", default="common")
    parser.add_argument("--searches", type=int, default=40)
    parser.add_argument("--users", type=int, default=100)
    args = parser.parse_args()
    server = embedded_uri(Path(args.data_dir).resolve())
    texts = cost.texts_for(args.vocabulary, args.size)
    queries = cost.query_sets(texts, args.searches)[args.words]
    emb = cost.HashedWords()
    emb.remember(queries)
    index = {"dims": cost.DIMS, "embed": emb, "fields": ["text"]}
    uri = make_conninfo(server, dbname=f"cost_vault_{args.vocabulary}_{args.size}")
    from langmem_vault.store import VaultStore

    print(f"## {args.vocabulary} vocabulary, {args.size:,} items, {args.words} words\n")
    for scope in ("plain", "namespace"):
        # A store of its own per scope: its namespaces are all unknown at first.
        with psycopg.connect(uri, autocommit=True) as conn, psycopg.connect(uri) as other:
            store = VaultStore(conn, index=index, schema="bench")  # type: ignore[arg-type]
            store.search(("mem",), query=queries[-1], limit=10)  # keyword statistics read
            calls = [(cost.scope_args(scope, i, args.users)[0], q) for i, q in enumerate(queries)]

            def searches(calls: list[Any] = calls, store: Any = store) -> None:
                for prefix, q in calls:
                    store.search(prefix, query=q, limit=10)

            for label in ("first", "later"):
                cpu, start = plans_explained.backend_cpu(conn), time.perf_counter()
                searches()
                wall = (time.perf_counter() - start) * 1000 / len(calls)
                server_ms = (plans_explained.backend_cpu(conn) - cpu) * 1000 / len(calls)
                print(
                    f"- {scope}, {label}: wall {wall:.2f} ms per search, server CPU "
                    f"{server_ms:.2f} ms, client and wire {wall - server_ms:.2f} ms"
                )
            # Each prepared search statement is planned once per connection, at its first run
            # (its generic plan): how many a connection made for this scope's searches.
            made = conn.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%%kw AS%%'"
            ).fetchone()
            print(f"  - search statements prepared (planned) on the connection: {made[0]}")  # type: ignore[index]
            with common.captured_statements() as captured:
                store.search(
                    ("mem", "user99") if scope == "namespace" else ("mem",),
                    query=queries[0],
                    limit=10,
                )
            print(f"  - a first search's statement: {_explained(other, captured)}")
            print(f"  - client side of the later searches: {_client_profile(searches)}")
            plans = plans_explained.auto_explain(conn)
            searches(calls[:10])
            print(
                f"  - as the store runs it (auto_explain): buffers per search "
                f"{plans_explained.buffers(plans) / 10:.0f}"
            )
        print()


if __name__ == "__main__":
    main()
