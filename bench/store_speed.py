"""Search latency and ingest throughput of VaultStore against langgraph's PostgresStore.

For each size (default 10k and 100k items), each system gets a fresh database on one
throwaway embedded server, ingests the same synthetic turns through ``store.batch`` of
PutOps (precomputed vectors, so ingest measures the store and not the model), then answers
the questions of bench/data/conversations.json in three cases:

- ``query``: the whole ("bench",) prefix, top 10;
- ``query + filter``: the same with ``filter={"topic": <one of 20>}`` (5% of the items);
- ``query + namespace``: prefix ("bench", "userNN"), one of 100 namespaces (1% of the items).

Query vectors are precomputed too; the stores' embed function returns them from a dict, so
latencies exclude the query embedding. Prints p50/p95 per case, the ratios, and how many
searches returned fewer than 10 results (each case has hundreds of matching items, so a short
answer is a recall bug: an HNSW scan whose neighbours were all filtered out afterwards).

    python bench/store_speed.py                      # --sizes 10000,100000
    python bench/store_speed.py --sizes 2000 --systems vault,postgres --text-weight 0.3

Unknown ``--name VALUE`` options go to VaultStore as in store_quality.py. Texts and vectors
are cached in bench/out/ (the first 100k run embeds them: several minutes on a laptop CPU).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, PutOp

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import vocabulary as V

LABELS = {"vault": "VaultStore", "postgres": "PostgresStore"}
TOPICS = [
    "work",
    "travel",
    "family",
    "pets",
    "food",
    "health",
    "music",
    "books",
    "money",
    "home",
    "cars",
    "sport",
    "friends",
    "school",
    "weather",
    "shopping",
    "tv",
    "plans",
    "language",
    "misc",
]
N_NAMESPACES = 100
BATCH = 500
WARMUP = 20
CASES = ["query", "query + filter", "query + namespace"]


def _swap(rng: random.Random, words: list[str], _match: re.Match[str]) -> str:
    return rng.choice(words)


def synthetic_texts(data: dict[str, Any], n: int, seed: int = 7) -> list[str]:
    """``n`` chat-like texts: turns of the data set with their names, places and things
    swapped for others from the vocabulary, often two joined, so most texts are distinct."""
    rng = random.Random(seed)
    turns = [t["text"] for _, _, t in common.iter_turns(data)]
    swaps = [
        V.FEMALE_NAMES + V.MALE_NAMES,
        V.PET_NAMES,
        [c for c, _ in V.CITIES] + V.HOME_CITIES,
        V.PROJECT_CODENAMES,
        V.COMPANIES,
        V.NEIGHBOURHOODS,
        V.MONTHS,
        V.WEEKDAYS,
    ]
    patterns = [
        (re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b"), words) for words in swaps
    ]
    texts = []
    for _ in range(n):
        text = rng.choice(turns)
        if rng.random() < 0.5:
            text += " " + rng.choice(turns)
        for pattern, words in patterns:
            text = pattern.sub(partial(_swap, rng, words), text)
        texts.append(text)
    return texts


def item_ops(texts: list[str], seed: int = 11) -> list[PutOp]:
    """PutOps spreading ``texts`` over namespaces, sessions, speakers and topics."""
    rng = random.Random(seed)
    return [
        PutOp(
            ("bench", f"user{i % N_NAMESPACES:02d}"),
            f"item{i}",
            {
                "text": text,
                "speaker": rng.choice(["user", "assistant"]),
                "session": rng.randrange(500),
                "topic": rng.choice(TOPICS),
            },
            index=["text"],
        )
        for i, text in enumerate(texts)
    ]


def ingest(store: BaseStore, ops: list[PutOp]) -> float:
    """Items per second through batches of ``BATCH`` PutOps."""
    start = time.perf_counter()
    for i in range(0, len(ops), BATCH):
        store.batch(ops[i : i + BATCH])
    return len(ops) / (time.perf_counter() - start)


def search_case(
    store: BaseStore, case: str, queries: list[str], seed: int = 3
) -> tuple[list[float], int]:
    """Latency (ms) of each query in ``case``, after a warm-up, and how many queries got
    fewer than 10 results (every case has far more than 10 matching items)."""
    rng = random.Random(seed)
    calls = []
    for q in queries:
        prefix: tuple[str, ...] = ("bench",)
        flt = None
        if case == "query + filter":
            flt = {"topic": rng.choice(TOPICS)}
        elif case == "query + namespace":
            prefix = ("bench", f"user{rng.randrange(N_NAMESPACES):02d}")
        calls.append((prefix, flt, q))
    for prefix, flt, q in calls[:WARMUP]:
        store.search(prefix, query=q, filter=flt, limit=10)
    times, short = [], 0
    for prefix, flt, q in calls:
        start = time.perf_counter()
        results = store.search(prefix, query=q, filter=flt, limit=10)
        times.append((time.perf_counter() - start) * 1000)
        short += len(results) < 10
    return times, short


def run_size(
    size: int,
    systems: list[str],
    server: str,
    data: dict[str, Any],
    queries: list[str],
    q_vectors: Any,
    vault_kw: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    texts = synthetic_texts(data, size)
    print(f"[{size}] vectors for {size} texts (cached in bench/out/)...", flush=True)
    emb = common.LookupEmbeddings(texts, common.cached_vectors(texts, f"speed-{size}"))
    emb.add(queries, q_vectors)
    index = {"dims": common.DIMS, "embed": emb, "fields": ["text"]}
    ops = item_ops(texts)
    out: dict[str, dict[str, Any]] = {}
    for system in systems:
        uri = common.create_database(server, f"speed_{system}_{size}")
        with ExitStack() as stack:
            store = common.open_store(system, stack, uri, index, vault_kw)
            rate = ingest(store, ops)
            print(f"[{size}] {LABELS[system]}: ingested at {rate:.0f} items/s", flush=True)
            common.analyze(uri)
            out[system] = {"ingest": rate}
            for case in CASES:
                times, short = search_case(store, case, queries)
                p50, p95 = common.percentile(times, 50), common.percentile(times, 95)
                out[system][case] = (p50, p95, short)
                print(
                    f"[{size}] {LABELS[system]}: {case}: p50 {p50:.2f} ms, p95 {p95:.2f} ms, "
                    f"{short} searches with fewer than 10 results",
                    flush=True,
                )
    return out


def report(results: dict[int, dict[str, dict[str, Any]]], n_queries: int) -> None:
    print(
        f"\nSearch latency (ms, top 10, {n_queries} queries per case, query embedding "
        "excluded) and ingest throughput; short V/P = searches that returned fewer than 10 "
        "results (VaultStore/PostgresStore)\n"
    )
    rows = []
    for size, by_system in results.items():
        v, p = by_system.get("vault"), by_system.get("postgres")
        for case in CASES:
            row: list[Any] = [f"{size:,}", case]
            for r in (v, p):
                row += [f"{r[case][0]:.2f}", f"{r[case][1]:.2f}"] if r else ["-", "-"]
            row.append(common.ratio(v[case][1], p[case][1]) if v and p else "-")
            row.append("/".join(str(r[case][2]) if r else "-" for r in (v, p)))
            rows.append(row)
        ing = [f"{r['ingest']:.0f}" if r else "-" for r in (v, p)]
        rows.append(
            [
                f"{size:,}",
                "ingest (items/s)",
                ing[0],
                "",
                ing[1],
                "",
                common.ratio(v["ingest"], p["ingest"]) if v and p else "-",
                "",
            ]
        )
    common.print_table(
        [
            "items",
            "case",
            "Vault p50",
            "Vault p95",
            "Postgres p50",
            "Postgres p95",
            "Vault/Postgres (p95; ingest)",
            "short V/P",
        ],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated item counts")
    parser.add_argument("--systems", default="vault,postgres")
    args, leftover = parser.parse_known_args()
    vault_kw = common.extra_options(leftover)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    systems = [s for s in args.systems.split(",") if s]
    if set(systems) - set(LABELS):
        parser.error(f"unknown systems {sorted(set(systems) - set(LABELS))}")
    if "vault" in systems and not common.vault_available():
        print("VaultStore does not import yet; skipping it", file=sys.stderr)
        systems.remove("vault")
    if vault_kw:
        print(f"VaultStore options: {vault_kw}")
    data = common.load_dataset()
    queries = [q["question"] for q in data["questions"]]
    q_vectors = common.cached_vectors(queries, "quality-questions")
    server = common.temp_server_uri()
    results = {
        size: run_size(size, systems, server, data, queries, q_vectors, vault_kw) for size in sizes
    }
    report(results, len(queries))


if __name__ == "__main__":
    main()
