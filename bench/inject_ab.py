"""inject on two source trees of this package, in lockstep: before/after figures from one run.

Each tree runs in a worker process of its own (``PYTHONPATH`` = the tree's ``src``), on its
own embedded server, with the setting of ``nodes_bench.py``: a user with ``--facts`` facts,
10 instructions and 20 episodes (optionally ``--others`` facts of another user written after
them), the default local model embedding each query, access stamps flushed outside the
timing. The driver asks the workers for one inject each in turn, so a busy machine slows
both alike: first ``--samples`` turns with a user message, then as many without.
``--statements`` loads pg_stat_statements (planning tracked) into both servers and prints,
per path and tree, each statement's planning and execution time per call and how often it
was planned: the database's share of a warm turn, statement by statement (after ``--settle``
turns of each path, not counted: the pooled connections' first runs plan each statement 11
times, bench/RESULTS.md "Session 14 (p25)").

    git archive <commit> src | tar -x -C /tmp/before
    python bench/inject_ab.py --before /tmp/before/src --after src [--facts 10000]

Archive ``src bench`` instead of ``src`` to drive an older tree through its own bench helpers
(a tree from before a module was renamed cannot run today's ``nodes_bench``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


_STATEMENTS = """
SELECT calls, plans, total_plan_time / calls, total_exec_time / calls,
       regexp_replace(left(query, 400), '\\s+', ' ', 'g')
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND query NOT LIKE '%%pg_stat_statements%%'
ORDER BY total_plan_time + total_exec_time DESC"""


def _statements_server() -> str:
    """A fresh embedded server with pg_stat_statements loaded (planning tracked)."""
    import common
    import psycopg

    from langmem_vault.db._embedded import embedded_uri

    data_dir = common.temp_server_dir()
    with psycopg.connect(embedded_uri(data_dir), autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
        conn.execute("ALTER SYSTEM SET pg_stat_statements.track_planning = on")
    return common.restart_cold(data_dir)


def _statement_rows(db: str, reset: bool) -> list[list[Any]]:
    """Each statement's calls, plans, planning and execution ms per call and text."""
    import psycopg

    with psycopg.connect(db, autocommit=True) as conn:
        rows = [list(r) for r in conn.execute(_STATEMENTS).fetchall()]
        if reset:
            conn.execute("SELECT pg_stat_statements_reset()")
    return rows


def _bench_dir() -> Path:
    """The bench helpers (``nodes_bench``, ``common``) that seed and ask this worker's tree:
    the tree's own when it was archived with ``bench`` beside ``src``, else this script's. A
    tree from before a refactor of the package needs the helpers of its day."""
    own = Path(os.environ["PYTHONPATH"]).parent / "bench"
    return own if (own / "nodes_bench.py").exists() else HERE


def worker(facts: int, others: int, statements: bool) -> None:
    """Seed, then answer each "msg"/"nomsg" line with "<ms> <embedding ms> <client CPU ms>"
    (the CPU time of the calling thread: what a busy machine does not inflate much); with
    ``statements``, a "stats" line with the statements' figures since the last one, as JSON."""
    bench = _bench_dir()
    sys.path.insert(0, str(bench))
    sys.path.insert(0, str(bench / "data"))
    from contextlib import ExitStack

    import common
    import nodes_bench
    import psycopg
    from langchain_core.messages import HumanMessage

    from langmem_vault.nodes import create_inject_node

    texts = nodes_bench.distractor_texts(max(facts, 1000))
    recall = nodes_bench.distractor_texts(1000, seed=11)
    all_texts = list(dict.fromkeys(texts + recall))  # the texts nodes_bench caches vectors of
    emb = nodes_bench.LiveQueryEmbeddings(
        all_texts, common.cached_vectors(all_texts, "nodes-facts")
    )
    index = {"dims": 384, "embed": emb, "fields": ["text"]}
    uri = _statements_server() if statements else common.temp_server_uri()
    with ExitStack() as stack:
        db = common.create_database(uri, "ab")
        if statements:
            with psycopg.connect(db, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION pg_stat_statements")
        store = common.open_store("vault", stack, db, index, {})
        nodes_bench.seed_user(store, "u", texts[:facts])
        if others:
            nodes_bench.seed_user(store, "other", texts[:others])
        nodes_bench.analyze(db)
        node: Any = create_inject_node(store=store, emit_events=False).node
        config = {"configurable": {"user_id": "u", "thread_id": "bench"}}
        print("ready", flush=True)
        turn = -1
        for line in sys.stdin:
            if line.strip() == "stats":
                print(json.dumps(_statement_rows(db, reset=True)), flush=True)
                continue
            turn += 1
            question = nodes_bench.QUESTIONS_LATENCY[turn % 8] + f" ({turn})"
            state = {"messages": [HumanMessage(question)] if line.strip() == "msg" else []}
            before = len(emb.query_ms)
            start, cpu = time.perf_counter(), time.thread_time()
            node.invoke(state, config)
            elapsed = (time.perf_counter() - start) * 1000
            cpu = (time.thread_time() - cpu) * 1000
            node.recorder.flush()
            print(f"{elapsed:.3f} {sum(emb.query_ms[before:]):.3f} {cpu:.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the src folder of the reference tree")
    parser.add_argument("--after", default=str(HERE.parent / "src"))
    parser.add_argument("--facts", type=int, default=10000)
    parser.add_argument("--others", type=int, default=0)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--statements", action="store_true", help="per-statement server time")
    parser.add_argument(
        "--settle",
        type=int,
        default=40,
        help="with --statements, turns of each path run before the counts start",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.facts, args.others, args.statements)
        return
    sys.path.insert(0, str(HERE))
    import common

    trees = {name: getattr(args, name) for name in ("before", "after")}
    arguments = ["--worker", "--before", "-", "--facts", str(args.facts)]
    arguments += ["--others", str(args.others)] + (["--statements"] if args.statements else [])
    procs = common.start_workers(__file__, trees, arguments)
    load = os.getloadavg()[0]
    rows = []
    stats: dict[str, dict[str, list[list[Any]]]] = {}
    for mode in ("msg", "nomsg"):
        if args.statements:
            # Not counted: the other path's turns, and each pooled connection's first runs of
            # a statement (psycopg prepares it at its 6th, Postgres custom-plans its first 5
            # prepared runs: 11 plans a connection before the generic one is kept).
            for _ in range(args.settle):
                for proc in procs.values():
                    common.ask(proc, mode)
            for proc in procs.values():
                common.ask(proc, "stats")
        times: dict[str, list[float]] = {n: [] for n in procs}
        net: dict[str, list[float]] = {n: [] for n in procs}
        cpu: dict[str, list[float]] = {n: [] for n in procs}
        for i in range(args.samples + 5):
            for name, proc in procs.items():
                ms, embed, used = (float(x) for x in common.ask(proc, mode).split())
                if i >= 5:  # warm-up
                    times[name].append(ms)
                    net[name].append(ms - embed)
                    cpu[name].append(used)
        if args.statements:
            stats[mode] = {
                name: json.loads(common.ask(proc, "stats")) for name, proc in procs.items()
            }
        for name in procs:
            p50, p95 = common.percentile(times[name], 50), common.percentile(times[name], 95)
            n50, n95 = common.percentile(net[name], 50), common.percentile(net[name], 95)
            c50 = common.percentile(cpu[name], 50)
            rows.append(
                [mode, name, f"{p50:.2f}", f"{p95:.2f}", f"{n50:.2f}", f"{n95:.2f}", f"{c50:.2f}"]
            )
        b, a = times["before"], times["after"]
        ratio = [common.ratio(common.percentile(a, q), common.percentile(b, q)) for q in (50, 95)]
        c_after, c_before = (common.percentile(cpu[n], 50) for n in ("after", "before"))
        used = common.ratio(c_after, c_before)
        rows.append([mode, "after / before", *ratio, "", "", used])
    common.stop_workers(procs)
    print(
        f"\ninject, {args.facts:,} facts, {args.others:,} of another user; load {load:.1f}"
        f"-{os.getloadavg()[0]:.1f}"
    )
    common.print_table(
        [
            "path",
            "tree",
            "p50 ms",
            "p95 ms",
            "excl. embedding p50",
            "excl. embedding p95",
            "client CPU p50",
        ],
        rows,
    )

    for mode, by_tree in stats.items():
        _print_statements(mode, by_tree, args.samples + 5)


def _print_statements(mode: str, by_tree: dict[str, list[list[Any]]], turns: int) -> None:
    import common

    for name, found in by_tree.items():
        reads = [r for r in found if r[4].lstrip().startswith(("SELECT", "WITH"))]
        total = sum(calls * (plan + run) for calls, _, plan, run, _ in reads) / turns
        print(f"\n{mode}, {name}: the reads' database time per turn {total:.3f} ms (planning and")
        print("execution; the writes are the access stamps, flushed between turns)")
        common.print_table(
            ["calls / turn", "planned", "plan ms", "execute ms", "statement"],
            [
                [f"{calls / turns:.1f}", plans, f"{plan:.3f}", f"{run:.3f}", text[:150]]
                for calls, plans, plan, run, text in found
                if calls >= turns // 2
            ],
        )


if __name__ == "__main__":
    main()
