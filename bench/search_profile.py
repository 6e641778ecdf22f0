"""Where a search at 100k spends its time, database side, and how much of the exact answer it
finds: the statements of VaultStore's and PostgresStore's searches under EXPLAIN (ANALYZE,
BUFFERS), and VaultStore's top 10 against an exact scan of the same ranking.

Runs on the databases ``store_speed.py --data-dir DIR`` loaded (run that first; VaultStore's is
upgraded by its migrations). For each case (query, query + filter, query + namespace) it runs
``--samples`` searches per store (warm: each search once untimed first), captures every
statement each one sends and explains it on a second connection (with the same HNSW settings),
then prints the median and p95 execution time and shared-buffer hits per store, and one plan
of each. ``--recall`` also compares VaultStore's top 10 with the same store forced onto its
exact path (``exact_scan_rows`` past the store's size: every vector scored), per case.

    python bench/search_profile.py --data-dir /work/cache/psearch-speed-pg --samples 40
    python bench/search_profile.py --data-dir DIR --recall --cases query --show-plan slowest
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import store_speed

from langmem_vault.db._embedded import embedded_uri


def _walk(node: dict[str, Any], depth: int = 0) -> list[str]:
    line = (
        f"{'  ' * depth}{node['Node Type']}"
        + (f" on {node['Relation Name']}" if "Relation Name" in node else "")
        + (f" using {node['Index Name']}" if "Index Name" in node else "")
        + f"  rows={node.get('Actual Rows')} loops={node.get('Actual Loops')}"
        + f" time={node.get('Actual Total Time')} ms hit={node.get('Shared Hit Blocks')}"
        + f" read={node.get('Shared Read Blocks')}"
    )
    lines = [line]
    for child in node.get("Plans", []):
        lines += _walk(child, depth + 1)
    return lines


def explain(
    conn: psycopg.Connection[Any], statements: list[tuple[Any, Any]]
) -> tuple[float, int, list[str]]:
    """Total execution time (ms) and buffer hits of the SELECTs, and their plans as lines."""
    total, hits, lines = 0.0, 0, []
    settings: list[tuple[Any, Any]] = []
    for query, params in statements:
        text = query if isinstance(query, str) else query.as_string(conn)
        stripped = text.lstrip()
        if "set_config" in stripped[:80] or stripped.upper().startswith("SET "):
            settings.append((text, params))
            continue
        if not stripped.upper().startswith(("SELECT", "WITH")):
            continue
        with conn.transaction():
            for s_text, s_params in settings:
                conn.execute(s_text, s_params)
            row = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {text}", params).fetchone()
        assert row is not None
        plan = row[0][0] if isinstance(row[0], list) else json.loads(row[0])[0]
        total += plan["Execution Time"]
        hits += plan["Plan"].get("Shared Hit Blocks", 0)
        lines.append(
            f"execution {plan['Execution Time']:.2f} ms, planning {plan['Planning Time']:.2f} ms"
        )
        lines += _walk(plan["Plan"])
        settings = []
    return total, hits, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--cases", default=",".join(store_speed.CASES))
    parser.add_argument("--systems", default="vault,postgres")
    parser.add_argument("--recall", action="store_true")
    parser.add_argument(
        "--show-plan", choices=["median", "slowest"], help="print one plan per case and store"
    )
    args, leftover = parser.parse_known_args()
    vault_kw = common.extra_options(leftover)
    data = common.load_dataset()
    queries = [q["question"] for q in data["questions"]]
    q_vectors = common.cached_vectors(queries, "quality-questions")
    texts = store_speed.synthetic_texts(data, args.size)
    emb = common.LookupEmbeddings(texts, common.cached_vectors(texts, f"speed-{args.size}"))
    emb.add(queries, q_vectors)
    index = {"dims": common.DIMS, "embed": emb, "fields": ["text"]}
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:8]
    server = embedded_uri(Path(args.data_dir).resolve())
    systems = args.systems.split(",")
    uris = {s: make_conninfo(server, dbname=f"speed_{s}_{args.size}_{digest}") for s in systems}
    with ExitStack() as stack:
        stores = {s: common.open_store(s, stack, uris[s], index, vault_kw) for s in systems}
        exact = None
        if args.recall:
            exact = common.open_store(
                "vault", stack, uris["vault"], index, {**vault_kw, "exact_scan_rows": 10**7}
            )
        conns = {s: stack.enter_context(psycopg.connect(uris[s], autocommit=True)) for s in systems}
        for case in args.cases.split(","):
            calls = store_speed.search_calls(queries, case)[: args.samples]
            print(f"\n=== {case} ({len(calls)} searches)")
            for system, store in stores.items():
                times, hits, plans = [], [], []
                for prefix, flt, q in calls:
                    store.search(prefix, query=q, filter=flt, limit=10)  # warm
                    with common.captured_statements() as captured:
                        store.search(prefix, query=q, filter=flt, limit=10)
                    total, hit, lines = explain(conns[system], captured)
                    times.append(total)
                    hits.append(hit)
                    plans.append(lines)
                print(
                    f"{store_speed.LABELS[system]}: execution p50 "
                    f"{common.percentile(times, 50):.2f}"
                    f" / p95 {common.percentile(times, 95):.2f} ms, buffers hit p50 "
                    f"{common.percentile(hits, 50):.0f}"
                )
                if args.show_plan:
                    order = sorted(range(len(times)), key=times.__getitem__)
                    pick = order[-1] if args.show_plan == "slowest" else order[len(order) // 2]
                    print(f"    ({calls[pick][2]!r})")
                    print("\n".join("    " + line for line in plans[pick]))
            if exact is not None:
                found = total_n = 0
                for prefix, flt, q in calls:
                    got, ref = (
                        {i.key for i in s.search(prefix, query=q, filter=flt, limit=10)}
                        for s in (stores["vault"], exact)
                    )
                    found += len(got & ref)
                    total_n += len(ref)
                print(f"VaultStore recall@10 against its exact path: {found / total_n:.3f}")


if __name__ == "__main__":
    main()
