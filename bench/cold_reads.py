"""Pages one user's namespace search reads from disk, cold (issue 28): counts, not timings.

For each asked user, the server restarts with its files out of the OS cache; a search of a
sacrificial user (the same every time) records the statements a search sends and warms what
every search shares (catalog, index roots); the recorded statements then run again for the
asked user (its labels in place of the sacrificial user's) under EXPLAIN (ANALYZE, BUFFERS):
the blocks each scan read from disk are that user's own cold reads.

Run as a script, it times instead (``breakdown``): the store's own statements, as they run,
logged by auto_explain with the blocks each scan read and waited for, cold then warm:

    python bench/cold_reads.py --data-dir D --items 1000000 --users 1000 --searches 20
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg


def _for_user(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_for_user(v, old, new) for v in value]
    return value


def _scans(node: dict[str, Any]) -> list[dict[str, Any]]:
    # scans of a table or an index (a CTE or subquery scan counts its CTE's blocks again)
    own = [node] if "Relation Name" in node or "Index Name" in node else []
    return own + [n for child in node.get("Plans", []) for n in _scans(child)]


def reads(
    conn: psycopg.Connection[Any], statements: list[tuple[Any, Any]], old: str, new: str
) -> Counter[str]:
    """Blocks read from disk by each scan of ``statements`` for ``new`` (by index, or by
    table for its heap); the settings statements run first, in a transaction rolled back."""
    found: Counter[str] = Counter()
    settings: list[tuple[str, Any]] = []
    for query, params in statements:
        text = query if isinstance(query, str) else query.as_string(conn)
        stripped = text.lstrip()
        params = {k: _for_user(v, old, new) for k, v in (params or {}).items()}
        if "set_config" in stripped[:80] or stripped.upper().startswith("SET "):
            settings.append((text, params))
            continue
        if not stripped.upper().startswith(("SELECT", "WITH")) or "current_setting(" in text[:300]:
            continue
        with conn.transaction(force_rollback=True):
            for s_text, s_params in settings:
                conn.execute(s_text, s_params)
            row = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {text}", params).fetchone()
        assert row is not None
        plan = row[0][0] if isinstance(row[0], list) else json.loads(row[0])[0]
        for scan in _scans(plan["Plan"]):
            # a scan's blocks include its children's (a bitmap heap scan's index); leaves only
            own = scan.get("Shared Read Blocks", 0) - sum(
                c.get("Shared Read Blocks", 0) for c in scan.get("Plans", [])
            )
            if own:
                found[scan.get("Index Name") or scan["Relation Name"]] += own
        settings = []
    return found


# -- where a cold search's time goes: `python bench/cold_reads.py` ---------------------------

#: the store's connections log each statement's plan as it ran (generic plan, prepared), with
#: the blocks each node read and the time it waited for them (track_io_timing)
AUTO_EXPLAIN = (
    "-c track_io_timing=on -c session_preload_libraries=auto_explain"
    " -c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on"
    " -c auto_explain.log_buffers=on -c auto_explain.log_timing=off"
    " -c auto_explain.log_format=json"
)
#: every client backend's reads (and their wait) since the server started: catalogs too
_IO = """SELECT coalesce(sum(reads), 0)::int, coalesce(sum(read_time), 0)::float8 FROM pg_stat_io
         WHERE backend_type = 'client backend'"""
_CATALOG = """SELECT coalesce(sum(coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0)
                   + coalesce(toast_blks_read, 0) + coalesce(tidx_blks_read, 0)), 0)::int
              FROM pg_statio_all_tables WHERE schemaname IN ('pg_catalog', 'pg_toast')"""
#: a backend sends its I/O statistics at most once a second, when idle
_FLUSH_SECONDS = 1.2


def logged_plans(text: str) -> list[dict[str, Any]]:
    """The JSON plans auto_explain wrote into the server log ``text``."""
    plans = []
    decoder = json.JSONDecoder()
    for chunk in text.split(" plan:")[1:]:
        start = chunk.find("{")
        if start >= 0:
            plan, _ = decoder.raw_decode(chunk[start:])
            plans.append(plan)
    return plans


def scan_reads(plans: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """Blocks each scan of ``plans`` read from disk (its own, not its children's) and the
    milliseconds it waited for them, by index (or table, for its heap)."""
    blocks: Counter[str] = Counter()
    waited: Counter[str] = Counter()
    for plan in plans:
        for scan in _scans(plan["Plan"]):
            kids = scan.get("Plans", [])
            name = scan.get("Index Name") or scan["Relation Name"]
            own = scan.get("Shared Read Blocks", 0) - sum(
                c.get("Shared Read Blocks", 0) for c in kids
            )
            ms = scan.get("Shared I/O Read Time", 0.0) - sum(
                c.get("Shared I/O Read Time", 0.0) for c in kids
            )
            if own:
                blocks[name] += own
                waited[name] += ms
    return blocks, waited


def breakdown(args: Any) -> None:
    """Cold, then warm: each of ``--searches`` users' namespace search, with the blocks every
    scan read and waited for (auto_explain), the reads of catalogs and what the plans do not
    show (pg_stat_io, pg_statio: the server's, read after each search)."""
    import partitions_bench as pb
    from psycopg.conninfo import make_conninfo

    questions = [q["question"] for q in pb.common.load_dataset()["questions"]]
    rng = random.Random(3)
    users = [pb.user_label(u) for u in rng.sample(range(args.users), args.searches)]
    queries = [rng.choice(questions) for _ in users]
    data_dir = Path(args.data_dir).resolve()
    server = pb.cold_restart(data_dir)
    name = pb.db_name(args.items, args.system)
    log = data_dir / "log"
    rows = []
    with ExitStack() as stack, pb._connect(make_conninfo(server, dbname=name)) as mon:
        t0 = time.perf_counter()
        store = pb.open_system(
            stack, make_conninfo(server, dbname=name, options=AUTO_EXPLAIN), args.system
        )
        opened = (time.perf_counter() - t0) * 1000
        time.sleep(_FLUSH_SECONDS)
        io, catalog = mon.execute(_IO).fetchone(), mon.execute(_CATALOG).fetchone()
        print(f"store opened in {opened:.0f} ms; catalog blocks read so far {catalog[0]}")
        offset = log.stat().st_size
        for n, (user, query) in enumerate([*zip(users, queries, strict=True)] * 2):
            t0 = time.perf_counter()
            store.search(("memories", user), query=query, limit=10)
            ms = (time.perf_counter() - t0) * 1000
            time.sleep(_FLUSH_SECONDS)
            io2, catalog2 = mon.execute(_IO).fetchone(), mon.execute(_CATALOG).fetchone()
            with log.open("rb") as f:
                f.seek(offset)
                text = f.read()
            offset += len(text)
            plans = logged_plans(text.decode("utf-8", "replace"))
            blocks, waited = scan_reads([p for p in plans if "kw AS" in p["Query Text"]])
            executed = sum(float(p.get("Execution Time", 0.0) or 0.0) for p in plans)
            rows.append(
                {
                    "n": n,
                    "warm": n >= len(users),
                    "ms": ms,
                    "executed": executed,
                    "reads": io2[0] - io[0],
                    "read_ms": io2[1] - io[1],
                    "catalog": catalog2[0] - catalog[0],
                    "blocks": blocks,
                    "waited": waited,
                }
            )
            io, catalog = io2, catalog2
    for r in rows:
        scans = ", ".join(
            f"{k} {b} ({r['waited'][k]:.1f} ms)" for k, b in r["blocks"].most_common()
        )
        print(
            f"{'warm' if r['warm'] else 'cold'} #{r['n']}: {r['ms']:.1f} ms; server reads "
            f"{r['reads']} ({r['read_ms']:.1f} ms), catalogs {r['catalog']}; {scans}"
        )
    later = rows[1 : len(users)]
    names = sorted({k for r in later for k in r["blocks"]})
    print(f"\n{args.items:,} items, {name}: cold searches 2-{len(users)}, per search")
    print("| relation | blocks read p50 / max | waited ms p50 / max |")
    print("|---|---|---|")
    for k in names:
        b = sorted(r["blocks"][k] for r in later)
        w = sorted(r["waited"][k] for r in later)
        print(f"| {k} | {b[len(b) // 2]} / {b[-1]} | {w[len(w) // 2]:.1f} / {w[-1]:.1f} |")
    for label, group in (
        ("cold, first", rows[:1]),
        ("cold, rest", later),
        ("warm", rows[len(users) :]),
    ):
        ms = sorted(r["ms"] for r in group)
        reads = sorted(r["reads"] for r in group)
        print(
            f"{label}: {len(group)} searches, ms p50 {ms[len(ms) // 2]:.1f} max {ms[-1]:.1f}; "
            f"server reads p50 {reads[len(reads) // 2]}; "
            f"catalogs {sum(r['catalog'] for r in group)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="where a cold namespace search's time goes")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--system", default="r0", help="the layout's database suffix")
    parser.add_argument("--searches", type=int, default=10)
    breakdown(parser.parse_args())


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    sys.path.insert(0, str(Path(__file__).parent / "data"))
    main()
