"""Concurrent multi-key write batches: deadlocks and throughput (issue 13).

Several threads each write batches of puts (and some deletes) on a small set of shared keys,
each batch's keys in a random order, all on one pool per system. A batch whose transaction
Postgres aborts on a deadlock surfaces as an error; the count must be 0 for VaultStore.

Systems, on one throwaway embedded server, each in its own database:

- ``vault``: VaultStore as shipped (rows locked in (prefix, key) order, whole-transaction
  retry on a deadlock or serialization failure as a safety net; ``retries`` counts its uses);
- ``vault-noretry``: the same with the retry off, so the lock order alone is measured;
- ``postgres``: langgraph's PostgresStore on a pool of the same size (the reference).

    python bench/store_load.py                       # 8 threads x 100 batches of 3 puts, 8 keys
    python bench/store_load.py --threads 16 --batches 200 --batch-size 5 --keys 8
"""

from __future__ import annotations

import argparse
import logging
import random
import threading
import time
from collections import Counter
from typing import Any

from common import create_database, print_table, ratio, temp_server_uri
from langgraph.store.base import BaseStore, PutOp


class RetryCounter(logging.Handler):
    """Counts the transactions the db layer ran again after a conflict."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "running it again" in record.getMessage():
            self.count += 1


def batches(seed: int, n: int, size: int, keys: list[str]) -> list[list[PutOp]]:
    rng = random.Random(seed)
    out = []
    for b in range(n):
        chosen = rng.sample(keys, size)  # a random order every time
        ops = [
            PutOp(("load",), k, None if rng.random() < 0.15 else {"t": seed, "b": b})
            for k in chosen
        ]
        out.append(ops)
    return out


def run(store: BaseStore, args: argparse.Namespace) -> tuple[Counter[str], float]:
    keys = [f"key{i}" for i in range(args.keys)]
    store.batch([PutOp(("load",), k, {"t": -1}) for k in keys])
    work = [batches(t, args.batches, args.batch_size, keys) for t in range(args.threads)]
    errors: Counter[str] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(args.threads + 1)

    def worker(mine: list[list[PutOp]]) -> None:
        start.wait()
        for ops in mine:
            try:
                store.batch(ops)
            except Exception as exc:
                with lock:
                    errors[type(exc).__name__] += 1

    threads = [threading.Thread(target=worker, args=(w,)) for w in work]
    for t in threads:
        t.start()
    start.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    return errors, time.perf_counter() - began


def open_system(system: str, uri: str, pool_size: int) -> tuple[Any, BaseStore]:
    from langmem_vault.db import open_pool

    pool = open_pool(uri, max_size=pool_size)
    if system == "postgres":
        from langgraph.store.postgres import PostgresStore

        pg = PostgresStore(pool)
        pg.setup()
        return pool, pg
    from langmem_vault.store import VaultStore

    vault = VaultStore(pool, schema="bench")
    vault.setup()
    return pool, vault


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--batches", type=int, default=100, help="batches per thread")
    parser.add_argument("--batch-size", type=int, default=3)
    parser.add_argument("--keys", type=int, default=8, help="shared keys")
    parser.add_argument("--systems", default="vault,vault-noretry,postgres")
    args = parser.parse_args()

    from langmem_vault.db import _connection as connection

    counter = RetryCounter()
    db_log = logging.getLogger("langmem_vault.db._connection")
    db_log.addHandler(counter)
    db_log.setLevel(logging.DEBUG)

    uri = temp_server_uri()
    total = args.threads * args.batches
    rows = []
    speed: dict[str, float] = {}
    for system in args.systems.split(","):
        db_uri = create_database(uri, "load_" + system.replace("-", "_"))
        pool, store = open_system(system, db_uri, args.threads)
        connection.CONFLICT_ATTEMPTS = 1 if system == "vault-noretry" else 5
        counter.count = 0
        try:
            errors, seconds = run(store, args)
        finally:
            pool.close()
        speed[system] = total / seconds
        deadlocks = errors.pop("DeadlockDetected", 0)
        rows.append(
            [
                system,
                total,
                deadlocks,
                sum(errors.values()),
                counter.count if system.startswith("vault") else "-",
                f"{speed[system]:.0f}",
            ]
        )
    print(
        f"{args.threads} threads x {args.batches} batches of {args.batch_size} puts "
        f"(15% deletes) on {args.keys} shared keys, random order\n"
    )
    print_table(["system", "batches", "deadlocks", "other errors", "retries", "batches/s"], rows)
    if "vault" in speed and "postgres" in speed:
        print(f"\nthroughput vault / postgres: {ratio(speed['vault'], speed['postgres'])}")


if __name__ == "__main__":
    main()
