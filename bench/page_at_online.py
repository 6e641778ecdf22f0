"""store/0007-0008 online on a large table: how long the migration takes, and how long a
concurrent writer waits (issue 28). Each phase needs the shared cluster alone (``flock``):

    D=/tmp/c28s10/data
    # a copy of the 1M database as it was before store/0007 (under cpu test: a load)
    flock /tmp/c28s10/.lock python bench/page_at_online.py prepare --data-dir $D
    # the migration, a writer beside it (under cpu bench: timed)
    flock /tmp/c28s10/.lock python bench/page_at_online.py migrate --data-dir $D
    flock /tmp/c28s10/.lock python bench/page_at_online.py drop --data-dir $D

``prepare`` copies ``pt1000000_r0`` (CREATE DATABASE ... TEMPLATE) and undoes store/0007's
first form there (drops the generated column, builds store/0006's expression index again,
forgets version 7). ``migrate`` runs the store's ``setup()`` (the transactional 0007, then
0008 online, step by step so each phase is timed) while a writer thread puts into the store
without pause (new keys and updates of existing ones, in turn), and a monitor samples every
10 ms whether the writer's backend waits on a lock, and on which.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row

SOURCE, COPY, SCHEMA = "pt1000000_r0", "o28_page_at", "bench"
UNDO_0007 = """
ALTER TABLE {s}.store_items DROP COLUMN page_at;
CREATE INDEX store_items_prefix_created_idx ON {s}.store_items
    (tenant, prefix, {s}.item_time(value, created_at), key) INCLUDE (expires_at);
DELETE FROM {s}.vault_migrations WHERE track = 'store' AND version >= 7;
"""
_WAITS = """
SELECT a.wait_event_type, a.wait_event, l.locktype, l.mode, l.relation::regclass::text AS rel
FROM pg_stat_activity AS a
LEFT JOIN pg_locks AS l ON l.pid = a.pid AND NOT l.granted
WHERE a.pid = %s"""


def _server(data_dir: str) -> str:
    from langmem_vault.db._embedded import embedded_uri

    return embedded_uri(Path(data_dir).resolve())


def prepare(args: argparse.Namespace) -> None:
    server = _server(args.data_dir)
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{COPY}"')
        t0 = time.perf_counter()
        conn.execute(f'CREATE DATABASE "{COPY}" TEMPLATE "{args.source}"')
        print(f"copy of {args.source}: {time.perf_counter() - t0:.0f} s", flush=True)
    with psycopg.connect(make_conninfo(server, dbname=COPY), autocommit=True) as conn:
        t0 = time.perf_counter()
        conn.execute(UNDO_0007.format(s=SCHEMA))  # type: ignore[arg-type]
        conn.execute(f"VACUUM ANALYZE {SCHEMA}.store_items")
        print(f"store/0007 undone: {time.perf_counter() - t0:.0f} s", flush=True)


class Writer(threading.Thread):
    """Puts without pause: a new key of a random user, then an update of an existing item."""

    def __init__(self, uri: str, keys: list[tuple[tuple[str, ...], str]]) -> None:
        super().__init__(daemon=True)
        self.uri, self.keys = uri, keys
        self.stop = threading.Event()
        self.pid: int | None = None
        self.times: list[tuple[float, float]] = []  # (when, seconds)

    def run(self) -> None:
        from langmem_vault.store import VaultStore

        rng = random.Random(7)
        conn = psycopg.connect(self.uri, autocommit=True)
        self.pid = conn.info.backend_pid
        store = VaultStore(conn, schema=SCHEMA)  # type: ignore[arg-type]
        n = 0
        while not self.stop.is_set():
            if n % 2:
                ns, key = rng.choice(self.keys)
            else:
                ns, key = ("memories", f"user{rng.randrange(1000):04d}", "semantic"), f"w{n}"
            t0 = time.perf_counter()
            store.put(ns, key, {"text": f"written during the migration {n}"}, index=False)
            self.times.append((t0, time.perf_counter() - t0))
            n += 1
        conn.close()


def _kind(sql: str) -> str:
    for word, kind in [
        ("UPDATE", "fill"),
        ("CREATE INDEX", "index"),
        ("ATTACH", "index"),
        ("RENAME", "swap"),
        ("DROP INDEX", "drop old index"),
    ]:
        if word in sql:
            return kind
    return "other"


def migrate(args: argparse.Namespace) -> None:
    from langmem_vault.db._online import online_plan
    from langmem_vault.db._runner import Statements
    from langmem_vault.store import VaultStore
    from langmem_vault.store._plans import setup_plan

    uri = make_conninfo(_server(args.data_dir), dbname=COPY)
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            f"SELECT namespace, key FROM {SCHEMA}.store_items TABLESAMPLE SYSTEM (0.1)"
        ).fetchall()
    writer = Writer(uri, [(tuple(ns), key) for ns, key in rows])
    writer.start()
    while writer.pid is None:
        time.sleep(0.01)
    waits: Counter[tuple[Any, ...]] = Counter()
    samples = 0
    done = threading.Event()

    def monitor() -> None:
        nonlocal samples
        with psycopg.connect(uri, autocommit=True) as conn:
            while not done.is_set():
                for row in conn.execute(_WAITS, (writer.pid,)).fetchall():
                    samples += 1
                    if row[0] == "Lock":
                        waits[row] += 1
                time.sleep(0.01)

    watcher = threading.Thread(target=monitor, daemon=True)
    watcher.start()
    began = time.perf_counter()
    time.sleep(2)  # the writer's pace before the migration
    phases: dict[str, list[float]] = {}
    size = f"SELECT pg_total_relation_size('{SCHEMA}.store_items') / 1048576"
    with psycopg.connect(uri) as conn:
        before = conn.execute(size).fetchone()
    marks = [("before", began)]
    with VaultStore.from_conn_string(uri, schema=SCHEMA) as store:
        marks.append(("0007", time.perf_counter()))
        store._db.run(setup_plan(store.settings, online=False))
        phases["0007 (one transaction)"] = [time.perf_counter() - marks[-1][1]]
    plan = online_plan(SCHEMA, "store", concurrently=True)
    with psycopg.connect(uri, autocommit=True) as conn, conn.cursor(row_factory=dict_row) as cur:
        ctx, sent = Statements(cur), None
        try:
            while True:
                step = plan.send(sent)
                kind = _kind(str(getattr(step, "sql", "")))
                if kind != marks[-1][0]:
                    marks.append((kind, time.perf_counter()))
                t0 = time.perf_counter()
                sent = step.run(ctx)
                phases.setdefault(kind, []).append(time.perf_counter() - t0)
        except StopIteration as finished:
            marks.append(("after", time.perf_counter()))
            print(f"applied {finished.value}", flush=True)
    time.sleep(2)  # and after it
    writer.stop.set()
    writer.join()
    done.set()
    watcher.join()
    for kind, spent in phases.items():
        print(
            f"{kind:>24}: {sum(spent):8.1f} s in {len(spent):5d} statements,"
            f" longest {max(spent) * 1000:8.1f} ms",
            flush=True,
        )
    start = marks[0][1]
    print("put latency by phase (ms): n, p50, p99, max")
    marks.append(("end", time.perf_counter()))
    for (name, begin), (_, end) in itertools.pairwise(marks):
        took = [s * 1000 for when, s in writer.times if begin <= when < end]
        if took:
            q = statistics.quantiles(took, n=100) if len(took) > 1 else [took[0]] * 99
            print(
                f"  {name:>16} ({begin - start:6.1f}-{end - start:6.1f} s): {len(took):6d}"
                f" {statistics.median(took):7.2f} {q[98]:7.2f} {max(took):8.1f}"
            )
    took = sorted(s * 1000 for _, s in writer.times)
    print(
        f"all puts: {len(took)}, max {took[-1]:.1f} ms, over 100 ms: {sum(t > 100 for t in took)}"
    )
    print(f"the writer waited on a lock in {sum(waits.values())} of {samples} samples:")
    for row, count in waits.most_common():
        print(f"  {count:5d} {row}")
    with psycopg.connect(uri) as conn:
        nulls = conn.execute(
            f"SELECT count(*) FROM {SCHEMA}.store_items WHERE page_at IS NULL"
        ).fetchone()
        index = conn.execute(
            "SELECT pg_get_indexdef(%s::regclass)", (f"{SCHEMA}.store_items_prefix_created_idx",)
        ).fetchone()
        after = conn.execute(size).fetchone()
    print(f"rows without page_at: {nulls}; index: {index}")
    print(f"store_items with its indexes: {before} MB before, {after} MB after")


def drop(args: argparse.Namespace) -> None:
    with psycopg.connect(_server(args.data_dir), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{COPY}"')
    print(f"dropped {COPY}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", choices=["prepare", "migrate", "drop"])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--source", default=SOURCE, help="the database prepare copies")
    args = parser.parse_args()
    {"prepare": prepare, "migrate": migrate, "drop": drop}[args.phase](args)


if __name__ == "__main__":
    main()
