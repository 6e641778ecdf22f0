"""A warm namespace search's client side (issue 26, s26): wall p50 / p95, the server process's
CPU and this process's CPU per search, and the statements a search sends, on a pooled
VaultStore (one connection) over a database ``search_cost_bench.py --data-dir D`` loaded
(closed vocabulary). Every search after a warm-up of two passes (statements prepared, the
namespaces' sizes known). ``--profile`` adds cProfile's top functions.

    python bench/search_cost_bench.py --sizes 20000 --vocabularies closed --scopes namespace \\
        --systems vault --passes warm --data-dir D            # loads (under cpu test)
    PYTHONPATH=<tree>/src python bench/search_client.py --data-dir D --size 20000
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import psycopg
import search_cost_bench as cost
from psycopg.conninfo import make_conninfo

import langmem_vault
from langmem_vault.db._embedded import embedded_uri
from langmem_vault.store import VaultStore


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", required=True)
    p.add_argument("--size", type=int, default=20000)
    p.add_argument("--n", type=int, default=300, help="timed searches")
    p.add_argument("--profile", action="store_true")
    a = p.parse_args()
    print("src:", langmem_vault.__file__)
    server = embedded_uri(Path(a.data_dir).resolve())
    texts = cost.texts_for("closed", a.size)
    queries = cost.query_sets(texts, 20)["common"]
    emb = cost.HashedWords()
    emb.remember(queries)
    index = {"dims": cost.DIMS, "embed": emb, "fields": ["text"]}
    uri = make_conninfo(server, dbname=f"cost_vault_closed_{a.size}")
    calls = [(("mem", f"user{(7 * i) % 100}"), q) for i, q in enumerate(queries)]
    with VaultStore.from_conn_string(uri, index=index, schema="bench", pool_size=1) as store:  # type: ignore[arg-type]

        def searches(n: int) -> list[float]:
            walls = []
            for i in range(n):
                prefix, q = calls[i % len(calls)]
                start = time.perf_counter()
                store.search(prefix, query=q, limit=10)
                walls.append((time.perf_counter() - start) * 1000)
            return walls

        searches(2 * len(calls))
        with store.conn.connection() as conn:
            stat = Path(f"/proc/{conn.info.backend_pid}/stat")

        def server_cpu() -> float:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        sent: list[str] = []
        execute = psycopg.Cursor.execute

        def count(self: psycopg.Cursor[object], query: object, *args: object, **kw: object):  # type: ignore[no-untyped-def]
            sent.append(str(query).split(None, 2)[0])
            return execute(self, query, *args, **kw)  # type: ignore[arg-type]

        psycopg.Cursor.execute = count  # type: ignore[method-assign,assignment]
        searches(1)
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        print(f"statements per search: {len(sent)} ({', '.join(sent)})")
        cpu, client = server_cpu(), time.process_time()
        walls = sorted(searches(a.n))
        server_ms = (server_cpu() - cpu) * 1000 / a.n
        client_ms = (time.process_time() - client) * 1000 / a.n
        print(
            f"wall p50 {statistics.median(walls):.2f} / p95 {walls[int(0.95 * len(walls))]:.2f} "
            f"ms; server CPU {server_ms:.2f} ms, client CPU {client_ms:.2f} ms per search"
        )
        if a.profile:
            prof = cProfile.Profile()
            prof.enable()
            searches(a.n)
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
