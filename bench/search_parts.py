"""A plain search's shared buffers split by part, VaultStore beside PostgresStore (issue 26):
the HNSW walk, the item probes of its rows, the keyword branch, the cosine probes of keyword
candidates the walk did not find, and PostgresStore's TTL refresh; warm, from the plans the
stores really ran (auto_explain), on databases a ``search_cost_bench.py`` run left in
``--data-dir`` (it never loads).

    python bench/search_parts.py --data-dir D --vocabulary zipf --size 20000
    python bench/search_parts.py --data-dir D --vocabulary zipf --size 20000 --df 50:100
        # 4-word queries of words each in more than 50 and at most 100 items
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import psycopg.rows
from langgraph.store.base import BaseStore
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).parent))

import common
import plans_explained
import search_cost_bench as cost

from langmem_vault.db._embedded import embedded_uri

SCANS = ("Index Scan", "Index Only Scan", "Bitmap Heap Scan")


def part_of(node: dict[str, Any], system: str) -> str | None:
    index, relation = node.get("Index Name") or "", node.get("Relation Name")
    if "embedding_idx" in index:
        return "walk"
    if node["Node Type"] == "ModifyTable":
        return "ttl"
    if index == ("store_pkey" if system == "postgres" else "store_items_pkey"):
        return "probes"
    if index == "store_vectors_pkey":
        return "cosines"
    if relation == "store_items" or "tsv" in index:
        return "keyword"
    return None


def split(node: dict[str, Any], system: str, out: Counter[str]) -> None:
    """Add each part's buffers (a scan's own, its bitmap index scan's included) to ``out``."""
    part = part_of(node, system)
    if part:
        out[part] += node.get("Shared Hit Blocks", 0) + node.get("Shared Read Blocks", 0)
        if part == "ttl" or node["Node Type"] in SCANS:
            return
    for child in node.get("Plans", []):
        split(child, system, out)


def _store(system: str, conn: psycopg.Connection[Any], index: dict[str, Any]) -> BaseStore:
    from langgraph.store.postgres import PostgresStore

    from langmem_vault.store import VaultStore

    if system == "postgres":
        return PostgresStore(conn, index=index)  # type: ignore[arg-type]
    return VaultStore(conn, index=index, **common.vault_options({}))  # type: ignore[arg-type]


def df_queries(texts: list[str], lo: int, hi: int, count: int) -> list[str]:
    df: Counter[str] = Counter()
    for t in texts:
        df.update(set(cost._WORD.findall(t.lower())))
    words = sorted(w for w, c in df.items() if lo < c <= hi)
    rng = random.Random(11)
    return [" ".join(rng.sample(words, cost.QUERY_WORDS)) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--vocabulary", default="zipf")
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=20, help="queries per class")
    parser.add_argument("--df", help="LO:HI: one class of words in LO < items <= HI instead")
    args = parser.parse_args()
    server = embedded_uri(Path(args.data_dir).resolve())
    texts = cost.texts_for(args.vocabulary, args.size)
    queries = cost.query_sets(texts, args.queries)
    if args.df:
        lo, hi = map(int, args.df.split(":"))
        queries = {f"df {lo}-{hi}": df_queries(texts, lo, hi, args.queries)}
    emb = cost.HashedWords()
    emb.remember([q for qs in queries.values() for q in qs])
    index = {"dims": cost.DIMS, "embed": emb, "fields": ["text"]}
    rows = []
    for system in ("postgres", "vault"):
        uri = make_conninfo(server, dbname=f"cost_{system}_{args.vocabulary}_{args.size}")
        kw: dict[str, Any] = {"autocommit": True}
        if system == "postgres":
            kw |= {"prepare_threshold": 0, "row_factory": psycopg.rows.dict_row}
        with psycopg.connect(uri, **kw) as conn:
            store = _store(system, conn, index)
            for qs in queries.values():
                for q in qs:  # warm: pages cached, statements prepared
                    store.search(("mem",), query=q, limit=10)
            plans = plans_explained.auto_explain(conn)
            for cls, qs in queries.items():
                parts: dict[str, list[int]] = {}
                totals = []
                for q in qs:
                    plans.clear()
                    store.search(("mem",), query=q, limit=10)
                    totals.append(plans_explained.buffers(plans))
                    out: Counter[str] = Counter()
                    for plan in plans:
                        split(plan["Plan"], system, out)
                    for part, n in out.items():
                        parts.setdefault(part, []).append(n)
                pct = common.percentile
                shown = [
                    f"{statistics.mean(parts[p]):.0f} (max {max(parts[p])})" if p in parts else "-"
                    for p in ("walk", "probes", "keyword", "cosines", "ttl")
                ]
                total = f"{pct(totals, 50):.0f} / {pct(totals, 95):.0f}"
                rows.append([cls, system, *shown, total])
    print(f"\n### {args.vocabulary} vocabulary, {args.size:,} items: buffers per search, warm\n")
    common.print_table(
        ["words", "store", "walk", "item probes", "keyword", "cosines", "TTL", "p50 / p95"], rows
    )


if __name__ == "__main__":
    main()
