"""What a search or a newest-first read costs on first use (issues 26 and 28).

``search``: search_cost_bench's ``warm`` pass on databases it left (``--reuse``): the embedded
server of ``--data-dir`` restarted (shared buffers empty, files in the OS cache), a store just
opened (a pool of one connection), 60 namespace searches of common words, each its
namespace's first; then the same searches again. ``--variants`` each take one share out
before the timed pass: ``stats`` (the keyword statistics read first), ``verdicts`` (every
namespace's verdict told: no count), ``plan`` (a search of another namespace first: the
statement's first plan on the connection), ``prewarm`` (every relation of the store in
shared buffers, ``pg_prewarm``), ``all``; ``none`` takes nothing out.

``recent``: a turn's newest-first reads (instructions by filter, episodes, newest facts) of
one user among 100 (12,000 items), on a store in ``--partitions`` partitions: the first turn
on each of 8 fresh connections, and 40 turns after each. ``--load`` fills the database first
(run that under ``cpu test``).

    python bench/search_cost_bench.py --sizes 100000 --vocabularies closed --scopes namespace \\
        --systems vault --passes warm --data-dir D100           # load once
    python bench/first_use.py search --data-dir D100 --size 100000 --variants none,stats
    python bench/first_use.py recent --data-dir D --partitions 64 --load
    PYTHONPATH=<tree>/src python bench/first_use.py recent --data-dir D --partitions 64
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from langgraph.store.base import PutOp, SearchOp
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import search_cost_bench as cost

USER = ("memories", "u1")
TURN = [
    SearchOp((*USER, "instructions"), filter={"active": True}, limit=100),
    SearchOp((*USER, "episodes"), limit=500),
    SearchOp((*USER, "semantic"), limit=50),
]


def _p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * len(values))]


def _prewarm(uri: str) -> None:
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        relations = conn.execute(
            "SELECT c.oid::regclass::text FROM pg_class AS c"
            " JOIN pg_namespace AS n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'bench' AND c.relkind IN ('r', 'i', 't', 'm')"
        ).fetchall()
        for (name,) in relations:
            conn.execute("SELECT pg_prewarm(%s)", (name,))


def search(args: argparse.Namespace) -> None:
    from langmem_vault.db._embedded import embedded_uri, release
    from langmem_vault.store import VaultStore
    from langmem_vault.store._search_plan import _fresh_stats

    data_dir = Path(args.data_dir).resolve()
    queries = cost.query_sets(cost.texts_for("closed", args.size), 60)["common"]
    other_query = "an other query"
    emb = cost.HashedWords()
    emb.remember([*queries, other_query])
    index = {"dims": cost.DIMS, "embed": emb, "fields": ["text"]}
    calls = [(("mem", f"user{(7 * i) % 100}"), q) for i, q in enumerate(queries)]
    unused = next(f"user{u}" for u in range(100) if ("mem", f"user{u}") not in dict(calls))
    print("load average", os.getloadavg())
    for variant in args.variants.split(","):
        release(data_dir)
        uri = make_conninfo(embedded_uri(data_dir), dbname=f"cost_vault_closed_{args.size}")
        if variant in ("prewarm", "all"):
            _prewarm(uri)
        with VaultStore.from_conn_string(uri, index=index, schema="bench") as store:  # type: ignore[arg-type]
            store.setup()
            if variant in ("stats", "all"):
                common_rows = store.settings.ranking.common_rows
                store._stats.put(store._db.run(_fresh_stats("bench", common_rows)))
            if variant in ("verdicts", "all"):
                for prefix, _ in calls:
                    store._stats.scopes.put(("namespace", f"mem.{prefix[1]}", "null"), small=True)
            if variant in ("plan", "all"):
                store.search(("mem", unused), query=other_query, limit=10)
            passes: list[list[float]] = [[], []]
            for times in passes:
                for prefix, query in calls:
                    start = time.perf_counter()
                    store.search(prefix, query=query, limit=10)
                    times.append((time.perf_counter() - start) * 1000)
        first, again = passes
        slowest = sorted(range(len(first)), key=lambda i: -first[i])[:5]
        print(
            f"{variant:9s} first pass p50 {statistics.median(first):.2f} p95 {_p95(first):.2f}"
            f" sum {sum(first):.0f} ms; the first search {first[0]:.1f} ms;"
            f" slowest #{slowest}; again p50 {statistics.median(again):.2f}"
            f" p95 {_p95(again):.2f} ms",
            flush=True,
        )
    release(data_dir)


def _load_recent(server: str, name: str, partitions: int) -> None:
    from langmem_vault.store import VaultStore

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(make_conninfo(server, dbname=name), autocommit=True) as conn:
        store = VaultStore(conn)  # type: ignore[arg-type]
        store.setup(partitions=partitions)
        instructions = [
            PutOp((*USER, "instructions"), f"i{n}", {"active": n % 3 > 0, "text": f"do {n}"})
            for n in range(12)
        ]
        episodes = [
            PutOp((*USER, "episodes"), f"e{n}", {"summary": f"talk {n}"}) for n in range(30)
        ]
        store.batch([*instructions, *episodes])
        for u in range(1, 101):
            ns = ("memories", f"u{u}", "semantic")
            store.batch([PutOp(ns, f"f{n}", {"text": f"fact {n} of {u}"}) for n in range(120)])
        conn.execute("VACUUM ANALYZE")


def recent(args: argparse.Namespace) -> None:
    from langmem_vault.db._embedded import embedded_uri, release
    from langmem_vault.store import VaultStore

    data_dir = Path(args.data_dir).resolve()
    server = embedded_uri(data_dir)
    name = f"recent{args.partitions}"
    if args.load:
        _load_recent(server, name, args.partitions)
    print("load average", os.getloadavg())
    firsts: list[float] = []
    later: list[float] = []
    for _ in range(8):
        with psycopg.connect(make_conninfo(server, dbname=name), autocommit=True) as conn:
            store = VaultStore(conn)  # type: ignore[arg-type]
            store.setup()
            for times in [firsts] + [later] * 40:
                start = time.perf_counter()
                store.batch(TURN)
                times.append((time.perf_counter() - start) * 1000)
    print(
        f"{args.partitions} partitions: a connection's first turn, median"
        f" {statistics.median(firsts):.1f} ms (max {max(firsts):.1f}); later turns p50"
        f" {statistics.median(later):.2f} p95 {_p95(later):.2f} ms"
    )
    release(data_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["search", "recent"])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--variants", default="none")
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--load", action="store_true")
    args: Any = parser.parse_args()
    {"search": search, "recent": recent}[args.command](args)


if __name__ == "__main__":
    main()
