"""Search latency and ingest throughput of VaultStore against langgraph's PostgresStore.

For each size (default 10k and 100k items), each system gets a database of its own on one
embedded server (same server, same settings), ingests the same synthetic turns through
``store.batch`` of PutOps (precomputed vectors, so ingest measures the store and not the
model), then answers the questions of bench/data/conversations.json in three cases:

- ``query``: the whole ("bench",) prefix, top 10;
- ``query + filter``: the same with ``filter={"topic": <one of 20>}`` (5% of the items);
- ``query + namespace``: prefix ("bench", "userNN"), one of 100 namespaces (1% of the items).

Each case starts COLD: the server is stopped, its files are evicted from the OS page cache
(``posix_fadvise``) and it is started again, so the first pass reads from disk with empty
shared buffers; a second, WARM pass repeats the same searches. The two stores are
interleaved search by search (in a random order each time), so load on this shared machine
hits both alike.

Query vectors are precomputed too; the stores' embed function returns them from a dict, so
latencies exclude the query embedding. Prints p50/p95 per case and pass, the ratios, and how
many searches returned fewer than 10 results (each case has hundreds of matching items, so a
short answer is a recall bug: an HNSW scan whose neighbours were all filtered out afterwards).

    python bench/store_speed.py                      # --sizes 10000,100000
    python bench/store_speed.py --sizes 100000 --data-dir /work/cache/speed-pg
    python bench/store_speed.py --sizes 2000 --systems vault,postgres --text-weight 0.3

``--data-dir`` keeps the server there and reuses databases already loaded with the same
texts (VaultStore's are upgraded by its migrations), so a rerun skips the ingest. Unknown
``--name VALUE`` options go to VaultStore as in store_quality.py. Vectors are cached in
bench/out/ or ``$LANGMEM_VAULT_BENCH_CACHE`` (the first 100k run embeds them: minutes).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import sys
import time
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from langmem_vault.db._embedded import embedded_uri

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import vocabulary as V
from common import restart_cold

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


def search_calls(
    queries: list[str], case: str, seed: int = 3
) -> list[tuple[tuple[str, ...], dict[str, Any] | None, str]]:
    """(namespace prefix, filter, query) of each search in ``case``."""
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
    return calls


def interleaved_pass(
    stores: dict[str, BaseStore],
    calls: list[tuple[tuple[str, ...], dict[str, Any] | None, str]],
    seed: int,
) -> dict[str, tuple[list[float], int]]:
    """Every search on every store, store after store for each search (in a random order), so
    a load spike or a cache fill hits both alike. Latencies (ms) and short answers per store."""
    rng = random.Random(seed)
    times: dict[str, list[float]] = {s: [] for s in stores}
    short = dict.fromkeys(stores, 0)
    names = list(stores)
    for prefix, flt, q in calls:
        rng.shuffle(names)
        for name in names:
            start = time.perf_counter()
            results = stores[name].search(prefix, query=q, filter=flt, limit=10)
            times[name].append((time.perf_counter() - start) * 1000)
            short[name] += len(results) < 10
    return {s: (times[s], short[s]) for s in stores}


def _loaded(uri: str, size: int) -> bool:
    """Whether this database holds a finished ingest of ``size`` items (see ``_mark_loaded``)."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        found = conn.execute("SELECT to_regclass('public.bench_loaded') IS NOT NULL").fetchone()
        if not found or not found[0]:
            return False
        row = conn.execute("SELECT items FROM bench_loaded").fetchone()
        return row is not None and row[0] == size


def _mark_loaded(uri: str, size: int) -> None:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE TABLE bench_loaded (items int)")
        conn.execute("INSERT INTO bench_loaded VALUES (%s)", (size,))
        # What autovacuum gives a database that has been up a while: planner statistics and
        # a visibility map (index-only scans). Not counted in any timing.
        conn.execute("VACUUM ANALYZE")


def _database(server: str, name: str, size: int, reuse: bool) -> tuple[str, bool]:
    """The URI of database ``name`` (created when missing or not reused) and whether it
    already holds the data."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    uri = make_conninfo(server, dbname=name)
    if reuse:
        with psycopg.connect(server, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if exists.fetchone() and _loaded(uri, size):
                return uri, True
    return common.create_database(server, name), False


def run_size(
    size: int,
    systems: list[str],
    data_dir: Path,
    reuse: bool,
    data: dict[str, Any],
    queries: list[str],
    q_vectors: Any,
    vault_kw: dict[str, Any],
) -> dict[str, dict[Any, Any]]:
    texts = synthetic_texts(data, size)
    vectors = common.cached_vectors(texts, f"speed-{size}")
    emb = common.LookupEmbeddings(texts, vectors)
    emb.add(queries, q_vectors)
    index = {"dims": common.DIMS, "embed": emb, "fields": ["text"]}
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:8]
    server = embedded_uri(data_dir)
    out: dict[str, dict[Any, Any]] = {s: {"ingest": None} for s in systems}
    uris = {}
    for system in systems:
        uri, loaded = _database(server, f"speed_{system}_{size}_{digest}", size, reuse)
        uris[system] = uri
        with ExitStack() as stack:
            store = common.open_store(system, stack, uri, index, vault_kw)  # runs setup()
            if loaded:
                print(f"[{size}] {LABELS[system]}: reusing the loaded database", flush=True)
                continue
            rate = ingest(store, item_ops(texts))
            out[system]["ingest"] = rate
            print(f"[{size}] {LABELS[system]}: ingested at {rate:.0f} items/s", flush=True)
        _mark_loaded(uri, size)
    for n, case in enumerate(CASES):
        calls = search_calls(queries, case)
        restart_cold(data_dir)  # every connection is closed here
        passes: dict[str, dict[str, tuple[list[float], int]]] = {}
        with ExitStack() as stack:
            stores = {s: common.open_store(s, stack, uris[s], index, vault_kw) for s in systems}
            load = os.getloadavg()[0]
            passes["cold"] = interleaved_pass(stores, calls, seed=n)
            passes["warm"] = interleaved_pass(stores, calls, seed=100 + n)
        for system in systems:
            for phase, by_store in passes.items():
                times, short = by_store[system]
                p50, p95 = common.percentile(times, 50), common.percentile(times, 95)
                out[system][(case, phase)] = (p50, p95, short)
                print(
                    f"[{size}] {LABELS[system]}: {case} ({phase}): p50 {p50:.2f} ms, "
                    f"p95 {p95:.2f} ms, {short} short, load {load:.2f}",
                    flush=True,
                )
    return out


def report(results: dict[int, dict[str, dict[Any, Any]]], n_queries: int) -> None:
    print(
        f"\nSearch latency (ms, top 10, {n_queries} queries per case and pass, query embedding "
        "excluded; cold = first pass after a server restart with the OS cache evicted, warm = "
        "the same searches again) and ingest throughput; short V/P = searches that returned "
        "fewer than 10 results (VaultStore/PostgresStore)\n"
    )
    rows = []
    for size, by_system in results.items():
        v, p = by_system.get("vault"), by_system.get("postgres")
        for case in CASES:
            for phase in ("cold", "warm"):
                key = (case, phase)
                row: list[Any] = [f"{size:,}", case, phase]
                for r in (v, p):
                    row += [f"{r[key][0]:.2f}", f"{r[key][1]:.2f}"] if r else ["-", "-"]
                row.append(common.ratio(v[key][1], p[key][1]) if v and p else "-")
                row.append("/".join(str(r[key][2]) if r else "-" for r in (v, p)))
                rows.append(row)
        ing = [f"{r['ingest']:.0f}" if r and r["ingest"] else "-" for r in (v, p)]
        ratio = (
            common.ratio(v["ingest"], p["ingest"])
            if v and p and v["ingest"] and p["ingest"]
            else "-"
        )
        rows.append([f"{size:,}", "ingest (items/s)", "", ing[0], "", ing[1], "", ratio, ""])
    common.print_table(
        [
            "items",
            "case",
            "pass",
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
    parser.add_argument("--data-dir", help="keep the server's data here and reuse loaded databases")
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
    data_dir = Path(args.data_dir).resolve() if args.data_dir else common.temp_server_dir()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    results = {
        size: run_size(
            size, systems, data_dir, bool(args.data_dir), data, queries, q_vectors, vault_kw
        )
        for size in sizes
    }
    report(results, len(queries))
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
