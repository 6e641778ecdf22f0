"""A new pooled connection's first namespace search, with the store's connection warm-up
(store/_warm.py) and without it (``VaultStore._warm`` replaced by a no-op: the searches then
plan their statements themselves, as before session 12), in lockstep on the databases
``partitions_bench.py load`` made.

Each round opens a store (its own pool: a new server process), timed, then times two
namespace searches of users whose pages a first pass put in shared buffers: so the first
search's extra time is the connection's (plans, catalog entries), not disk reads. The two arms
alternate round by round, so a busy machine slows both alike.

    python bench/connection_warmup.py --data-dir /tmp/c28s10/data \\
        --databases pt1000000_p64 pt1000000_r0 --rounds 15
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import partitions_bench as pb
from psycopg.conninfo import make_conninfo

from langmem_vault.db._embedded import embedded_uri
from langmem_vault.store import VaultStore

QUERY = "what did I say about hiking"


def _open(uri: str) -> Any:
    return VaultStore.from_conn_string(uri, schema=pb.SCHEMA, index=pb.INDEX, pool_size=1)


def _round(uri: str, users: list[str]) -> tuple[float, float, float]:
    """Open ms, first and second search ms on the new connection."""
    t0 = time.perf_counter()
    with _open(uri) as store:
        t1 = time.perf_counter()
        store.search(("memories", users[0]), query=QUERY, limit=10)
        t2 = time.perf_counter()
        store.search(("memories", users[1]), query=QUERY, limit=10)
        t3 = time.perf_counter()
    return (t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", required=True)
    p.add_argument("--databases", nargs="+", required=True)
    p.add_argument("--rounds", type=int, default=15)
    a = p.parse_args()
    server = embedded_uri(Path(a.data_dir).resolve())
    warm = VaultStore._warm
    print(f"load average {os.getloadavg()}")
    rows = []
    for db in a.databases:
        uri = make_conninfo(server, dbname=db)
        users = [pb.user_label(n) for n in range(2 * a.rounds)]
        with _open(uri) as store:  # every user's pages into shared buffers
            for user in users:
                store.search(("memories", user), query=QUERY, limit=10)
        times: dict[str, list[tuple[float, float, float]]] = {"warm-up": [], "none": []}
        for r in range(a.rounds):
            pair = users[2 * r : 2 * r + 2]
            for arm in ("warm-up", "none") if r % 2 else ("none", "warm-up"):
                VaultStore._warm = warm if arm == "warm-up" else (lambda self, conn: None)  # type: ignore[method-assign]
                times[arm].append(_round(uri, pair))
        VaultStore._warm = warm  # type: ignore[method-assign]
        for arm, runs in times.items():
            cols = [
                f"{common.percentile(list(c), 50):.1f} / {common.percentile(list(c), 95):.1f}"
                for c in zip(*runs, strict=True)
            ]
            rows.append((db, arm, *cols))
    print(f"load average {os.getloadavg()}; {a.rounds} rounds; ms p50 / p95")
    common.print_table(("database", "connection", "open", "first search", "second search"), rows)


if __name__ == "__main__":
    main()
