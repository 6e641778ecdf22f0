"""What this machine's disk alone costs a cold namespace search (issue 28's cold target).

An exact namespace search reads every vector of the user: with 1,000 memories of 384 float4
dimensions, about 250 leaves of the namespace index (store_vectors/0004, in key order, so one
user's leaves lie together). This script reads that many contiguous blocks straight from
the index's file, out of the OS cache, without Postgres, the way a B-tree scan asks for them
(one 8 kB read after the other), and also the two ways no B-tree scan in Postgres 18 can
(the kernel told first with ``POSIX_FADV_WILLNEED``, or one large read). Half as many blocks
is what a half-precision copy of the vectors would read. The result is a floor: a search
cold cannot cost less than its reads, whatever its SQL.

    python bench/disk_floor.py --data-dir /tmp/c28s10/data --database pt100000_r0 --rounds 60
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from langmem_vault.db._embedded import embedded_uri, release

BLOCK = 8192


def _index_file(data_dir: Path, database: str, schema: str) -> tuple[Path, int, int]:
    """The namespace index's first file segment, its blocks and one user's share of them."""
    uri = embedded_uri(str(data_dir))
    try:
        with psycopg.connect(make_conninfo(uri, dbname=database), autocommit=True) as conn:
            path, blocks = conn.execute(
                "SELECT pg_relation_filepath(c.oid), pg_relation_size(c.oid) / %s"
                " FROM pg_class c WHERE c.relname = 'store_vectors_namespace_idx'",
                (BLOCK,),
            ).fetchone() or (None, 0)
            users = conn.execute(
                sql.SQL("SELECT count(DISTINCT tenant) FROM {}.store_vectors").format(
                    sql.Identifier(schema)
                )
            ).fetchone()
    finally:
        release(str(data_dir))
    if path is None:
        raise SystemExit(f"{database}: no store_vectors_namespace_idx (not partitioned off?)")
    return data_dir / path, int(blocks), (users[0] if users else 1) or 1


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def _timed(fd: int, start: int, count: int, how: str) -> float:
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # out of the OS cache
    began = time.perf_counter()
    if how == "one large read":
        os.pread(fd, count * BLOCK, start * BLOCK)
    else:
        if how == "told first":
            os.posix_fadvise(fd, start * BLOCK, count * BLOCK, os.POSIX_FADV_WILLNEED)
        for block in range(start, start + count):
            os.pread(fd, BLOCK, block * BLOCK)
    return (time.perf_counter() - began) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--database", default="pt100000_r0")
    parser.add_argument("--schema", default="bench", help="the store's schema (partitions_bench's)")
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()

    path, blocks, users = _index_file(args.data_dir, args.database, args.schema)
    segment = min(blocks, os.path.getsize(path) // BLOCK)  # the first 1 GB file
    leaves = round(blocks / users)
    print(
        f"{args.database}: namespace index {blocks:,} blocks, {users:,} users: "
        f"{leaves} blocks per user (float4); rounds {args.rounds}; load {os.getloadavg()[0]:.2f}"
    )
    rng = random.Random(28)
    fd = os.open(path, os.O_RDONLY)
    ways: list[tuple[str, int, str]] = [
        (f"{n} blocks ({label}), {how}", n, how)
        for n, label in ((leaves, "float4"), (leaves // 2, "half"))
        for how in ("one after the other", "told first", "one large read")
    ]
    found: dict[str, list[float]] = {name: [] for name, _, _ in ways}
    try:
        for _ in range(args.rounds):
            for name, count, how in ways:  # interleaved, so drift hits every way alike
                start = rng.randrange(0, max(1, segment - count))
                found[name].append(_timed(fd, start, count, how))
    finally:
        os.close(fd)
    print(f"{'cold reads':<48} {'p50 ms':>8} {'p95 ms':>8}")
    for name, times in found.items():
        print(f"{name:<48} {_p(times, 50):8.2f} {_p(times, 95):8.2f}")


if __name__ == "__main__":
    main()
