"""Where one inject turn spends its time: every SQL statement it sends, with EXPLAIN (ANALYZE,
BUFFERS), and the node's Python side under cProfile.

A user with ``--facts`` facts (random unit vectors: the database side, as in
roundtrip_bench.py), 10 instructions and 20 episodes, optionally ``--others`` facts of a second
user written after them (a shared table where the user's own rows are not the newest). The
node runs a few times to warm up, then once with its statements captured; each captured
SELECT is explained on a separate connection. Without ``--no-message`` both paths run.

    python bench/inject_profile.py [--facts 10000] [--others 0] [--private 5] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import nodes_bench
import roundtrip_bench
from langchain_core.messages import HumanMessage

from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.store import VaultStore


def explain(db: str, captured: list[tuple[Any, Any]]) -> None:
    with psycopg.connect(db, autocommit=True) as conn:
        for query, params in captured:
            text = query if isinstance(query, str) else query.as_string(conn)
            print("-" * 80)
            print(text.strip()[:1200])
            if not text.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            for (line,) in conn.execute(f"EXPLAIN (ANALYZE, BUFFERS) {text}", params).fetchall():
                # the query vector makes the plan unreadable
                print("    ", line if len(line) < 300 else line[:300] + "...")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10000)
    parser.add_argument("--others", type=int, default=0)
    parser.add_argument("--private", type=int, default=5)
    parser.add_argument("--top", type=int, default=25, help="cProfile rows")
    parser.add_argument("--no-message", action="store_true")
    args = parser.parse_args()
    uri = common.temp_server_uri()
    db = common.create_database(uri, "inject_profile")
    index = {"dims": common.DIMS, "embed": roundtrip_bench.RandomEmbeddings(), "fields": ["text"]}
    with VaultStore.from_conn_string(db, index=index, schema="bench") as store:  # type: ignore[arg-type]
        store.setup()
        texts = nodes_bench.distractor_texts(args.facts + args.others)
        nodes_bench.seed_user(store, "u", texts[: args.facts], private=args.private)
        if args.others:
            nodes_bench.seed_user(store, "other", texts[args.facts :], private=args.others // 2)
        common.analyze(db)
        node = create_inject_node(store=store, emit_events=False).node
        config = {"configurable": {"user_id": "u", "thread_id": "bench"}}
        for with_message in (False,) if args.no_message else (True, False):
            state = {
                "messages": [HumanMessage("Where do I live these days?")] if with_message else []
            }
            for _ in range(10):
                node.invoke(state, config)  # type: ignore[arg-type]
                node.recorder.flush()
            print(f"\n=== inject {'with' if with_message else 'without'} a message")
            with common.captured_statements() as captured:
                node.invoke(state, config)  # type: ignore[arg-type]
                node.recorder.flush()
            explain(db, captured)
            profile = cProfile.Profile()
            start = time.perf_counter()
            profile.enable()
            for _ in range(40):
                node.invoke(state, config)  # type: ignore[arg-type]
                node.recorder.flush()
            profile.disable()
            print(f"\nmean {(time.perf_counter() - start) / 40 * 1000:.2f} ms (under cProfile)")
            pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
