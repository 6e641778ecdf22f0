"""One user's warm namespace search (or, ``--plain``, a search of every user's memories) on two
source trees of this package, in lockstep: before/after figures from one run, on
partitions_bench.py's databases.

Each tree runs in a worker process of its own (``PYTHONPATH`` = the tree's ``src``) with one
VaultStore per database (a pool of one connection), on the server of ``--data-dir``
(``partitions_bench.py load`` made it; take its lock: ``flock /tmp/c28s10/.lock``). Both trees
search the same users with the same questions (partitions_bench's seeded vectors), every
search first run twice untimed (its pages in shared buffers, its statements prepared, the
users' partitions learnt); then the driver asks each tree for one search in turn, the order
swapped every search, so a busy machine slows both alike. Per database and tree: wall p50 /
p95 ms, the calling thread's CPU p50 (the client's share), and whether both trees returned
the same keys in the same order with the same scores.

    git archive <commit> src | tar -x -C /tmp/before
    python bench/search_ab.py --before /tmp/before/src --data-dir /tmp/c28s10/data \\
        --databases pt100000_p64 pt100000_r0 --users 100
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def worker(uri: str, databases: list[str], users: int, searches: int, plain: bool) -> None:
    """Open the stores, warm them, then answer each "<database index> <search index>" line
    with "<ms> <client CPU ms> <hash of the keys and scores found>"."""
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE / "data"))
    from contextlib import ExitStack

    import common
    import partitions_bench as pb
    from psycopg.conninfo import make_conninfo

    from langmem_vault.store import VaultStore

    questions = [q["question"] for q in common.load_dataset()["questions"]]
    rng = random.Random(7)
    calls = [
        (("memories", pb.user_label(rng.randrange(users))), rng.choice(questions))
        for _ in range(searches)
    ]
    if plain:  # the same questions across every user's memories
        calls = [(("memories",), query) for _, query in calls]
    with ExitStack() as stack:
        stores = [
            stack.enter_context(
                VaultStore.from_conn_string(
                    make_conninfo(uri, dbname=db), schema=pb.SCHEMA, index=pb.INDEX, pool_size=1
                )
            )
            for db in databases
        ]
        for store in stores:
            for _ in range(2):
                for prefix, query in calls:
                    store.search(prefix, query=query, limit=10)
        print("ready", flush=True)
        for line in sys.stdin:
            d, i = (int(x) for x in line.split())
            prefix, query = calls[i]
            start, cpu = time.perf_counter(), time.thread_time()
            found = stores[d].search(prefix, query=query, limit=10)
            elapsed = (time.perf_counter() - start) * 1000
            cpu = (time.thread_time() - cpu) * 1000
            answer = repr([(f.key, f.score) for f in found]).encode()
            keys = hashlib.blake2b(answer, digest_size=6).hexdigest()
            print(f"{elapsed:.3f} {cpu:.3f} {keys}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the src folder of the reference tree")
    parser.add_argument("--after", default=str(HERE.parent / "src"))
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--databases", nargs="+", required=True)
    parser.add_argument("--users", type=int, default=100, help="users in the databases")
    parser.add_argument("--searches", type=int, default=100, help="distinct searches")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over them")
    parser.add_argument("--plain", action="store_true", help="search every user's memories")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.databases, args.users, args.searches, args.plain)
        return
    sys.path.insert(0, str(HERE))
    import common

    from langmem_vault.db._embedded import embedded_uri

    uri = embedded_uri(Path(args.data_dir).resolve())
    trees = {name: getattr(args, name) for name in ("before", "after")}
    arguments = ["--worker", uri, "--before", "-", "--data-dir", args.data_dir]
    arguments += ["--databases", *args.databases]
    arguments += ["--users", str(args.users), "--searches", str(args.searches)]
    arguments += ["--plain"] if args.plain else []
    procs = common.start_workers(__file__, trees, arguments)
    load = os.getloadavg()[0]
    rows = []
    for d, db in enumerate(args.databases):
        times: dict[str, list[float]] = {n: [] for n in procs}
        cpu: dict[str, list[float]] = {n: [] for n in procs}
        differ = 0
        order = list(procs)
        for n in range(args.rounds * args.searches):
            order.reverse()
            keys = {}
            for name in order:
                ms, used, keys[name] = common.ask(procs[name], f"{d} {n % args.searches}").split()
                times[name].append(float(ms))
                cpu[name].append(float(used))
            differ += keys["before"] != keys["after"]
        for name in procs:
            p50, p95 = (common.percentile(times[name], q) for q in (50, 95))
            c50 = common.percentile(cpu[name], 50)
            rows.append([db, name, f"{p50:.2f}", f"{p95:.2f}", f"{c50:.2f}", ""])
        ratio = [
            common.ratio(
                common.percentile(times["after"], q), common.percentile(times["before"], q)
            )
            for q in (50, 95)
        ]
        used = common.ratio(*(common.percentile(cpu[n], 50) for n in ("after", "before")))
        rows.append([db, "after / before", *ratio, used, str(differ)])
    common.stop_workers(procs)
    print(
        f"\n{'plain' if args.plain else 'namespace'} search, top 10, warm; "
        f"{args.rounds} x {args.searches} searches per tree "
        f"and database; load {load:.1f}-{os.getloadavg()[0]:.1f}"
    )
    common.print_table(
        ["database", "tree", "p50 ms", "p95 ms", "client CPU p50", "answers differing"], rows
    )


if __name__ == "__main__":
    main()
