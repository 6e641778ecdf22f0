"""How a user's leaves of ``store_vectors_namespace_idx`` lie on disk, and how fast their
order decays as users keep writing (issue 28, session 11). Counts, not timings.

A cold namespace search reads the user's leaves in key order (the leaf chain); the kernel's
read-ahead serves the next block when it is the next in the file. So what a cold read costs
is the number of *runs*: stretches of the user's leaves that follow each other in the chain
and on disk (block b, then b + 1). Right after a build or ``REINDEX`` a user's leaves are one
run; every leaf that splits puts its new half at the end of the file.

    # the order of an index: leaves per user and runs per user (pageinspect, pgstattuple)
    python bench/index_order.py order --data-dir D --db pt100000_r0
    # decay: a copy of it (d0) receives new memories, every user's interleaved (uuid4 keys, as
    # MemoryVault writes them), in steps of a share of what it held; the order after each
    python bench/index_order.py decay --data-dir D --db pt100000_r0 --steps 1 2 5 10 20 50

``decay`` drops the copy's HNSW index first (its inserts are the slow part of a write and it
does not change the B-tree's layout).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

SCHEMA = "bench"
INDEX = f"{SCHEMA}.store_vectors_namespace_idx"

# Every leaf: its place in the chain, and the first and last tenant of its entries (the key's
# first column; a short varlena: one header byte, then the text).
_LEAVES = """
SELECT p.blkno, p.btpo_next, min(i.data) AS first, max(i.data) AS last
FROM bt_multi_page_stats(%(index)s, 1, -1) AS p
CROSS JOIN LATERAL bt_page_items(%(index)s, p.blkno) AS i
WHERE p.type = 'l' AND i.htid IS NOT NULL
GROUP BY p.blkno, p.btpo_next"""


def _tenant(data: str) -> str:
    raw = bytes.fromhex(data.replace(" ", ""))
    length = (raw[0] >> 1) - 1  # a short varlena's header
    return raw[1 : 1 + length].decode()


def order(conn: psycopg.Connection[Any], index: str = INDEX) -> dict[str, float]:
    """Leaves per user and runs per user (median, p95), and pgstatindex's figures."""
    conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
    leaves = conn.execute(_LEAVES, {"index": index}).fetchall()
    following = {blk: nxt for blk, nxt, _, _ in leaves}
    users = {blk: (_tenant(first), _tenant(last)) for blk, _, first, last in leaves}
    pointed = set(following.values())
    [start] = [blk for blk in following if blk not in pointed]
    chain = []
    blk = start
    while blk in following:
        chain.append(blk)
        blk = following[blk]
    per_user: dict[str, list[int]] = defaultdict(list)
    for blk in chain:
        first, last = users[blk]
        per_user[first].append(blk)
        if last != first:
            per_user[last].append(blk)  # users are long: a leaf holds at most two
    pages = [len(b) for b in per_user.values()]
    runs = [1 + sum(b != a + 1 for a, b in itertools.pairwise(bs)) for bs in per_user.values()]
    stats = conn.execute(
        "SELECT leaf_pages, avg_leaf_density, leaf_fragmentation FROM pgstatindex(%s)", [index]
    ).fetchone()
    assert stats is not None

    def p95(xs: list[int]) -> float:
        return sorted(xs)[int(0.95 * (len(xs) - 1))]

    return {
        "leaf pages": stats[0],
        "density %": stats[1],
        "fragmentation %": stats[2],
        "user leaves p50": statistics.median(pages),
        "user leaves p95": p95(pages),
        "user runs p50": statistics.median(runs),
        "user runs p95": p95(runs),
    }


_WRITE = """
INSERT INTO {s}.store_items (tenant, prefix, key, namespace, value, search_tsv, indexed)
SELECT u.tenant, u.prefix, gen_random_uuid()::text, u.namespace, u.value, u.search_tsv, u.indexed
FROM generate_series(0, %(n)s - 1) AS g(g)
JOIN (SELECT row_number() OVER (ORDER BY tenant) - 1 AS u, * FROM (
        SELECT DISTINCT ON (tenant) tenant, prefix, namespace, value, search_tsv, indexed
        FROM {s}.store_items WHERE tenant <> '' ORDER BY tenant) AS x) AS u
  ON u.u = g.g %% %(users)s
ORDER BY g.g
RETURNING tenant, prefix, key"""


def _write(conn: psycopg.Connection[Any], n: int, users: int) -> None:
    """``n`` new memories, user after user in turn, each with a vector (one of the user's)."""
    s = SCHEMA
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS fresh (tenant text, prefix text, key text)")
    conn.execute("TRUNCATE fresh")
    written = f"WITH w AS ({_WRITE.format(s=s)}) INSERT INTO fresh SELECT * FROM w"
    conn.execute(written, {"n": n, "users": users})
    conn.execute(
        f"""INSERT INTO {s}.store_vectors (tenant, prefix, key, field, embedding)
        SELECT f.tenant, f.prefix, f.key, 'text', v.embedding FROM fresh AS f
        CROSS JOIN LATERAL (SELECT embedding FROM {s}.store_vectors AS v
                            WHERE v.tenant = f.tenant LIMIT 1) AS v"""
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["order", "decay"])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--index", default=INDEX, help="order: another index (session 10's)")
    parser.add_argument("--steps", type=float, nargs="+", default=[1, 2, 5, 10, 20, 50])
    args = parser.parse_args()

    from langmem_vault.db._embedded import embedded_uri

    server = embedded_uri(Path(args.data_dir).resolve())
    uri = make_conninfo(server, dbname=args.db)
    if args.command == "order":
        with psycopg.connect(uri, autocommit=True) as conn:
            print(order(conn, args.index))
        return
    copy = args.db.rsplit("_", 1)[0] + "_d0"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{copy}"')
        conn.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{args.db}"')
    with psycopg.connect(make_conninfo(server, dbname=copy), autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {SCHEMA}.store_vectors_embedding_idx")
        row = conn.execute(f"SELECT count(*) FROM {SCHEMA}.store_vectors").fetchone()
        assert row is not None
        base = int(row[0])
        print(f"new share of vectors | {' | '.join(order(conn))}")
        print(f"0% | {' | '.join(f'{v:g}' for v in order(conn).values())}", flush=True)
        written = 0
        for step in args.steps:
            n = int(base * step / 100) - written
            _write(conn, n, args.users)
            written += n
            print(f"{step:g}% | {' | '.join(f'{v:g}' for v in order(conn).values())}", flush=True)
        t0 = time.perf_counter()
        conn.execute(f"REINDEX INDEX CONCURRENTLY {INDEX}")
        took = time.perf_counter() - t0
        values = " | ".join(f"{v:g}" for v in order(conn).values())
        print(f"after REINDEX CONCURRENTLY ({took:.1f} s) | {values}")


if __name__ == "__main__":
    main()
