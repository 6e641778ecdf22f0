"""Where inject's time goes at 10k facts, part by part, on VaultStore (nodes_bench's setting:
real local query embeddings, 10,000 facts, 10 instructions, 20 episodes).

Each turn is split into the query embedding, the store batch (server work and the wire, minus
the embedding) and the rest (the client's own work and waits around them), with the
statements sent while the turn ran. Variants of the node run turn by turn in lockstep (a busy
machine slows them alike), each with a question of its own (the store's query cache never
answers): the node as built; after a turn whose accounting write is still pending (as
nodes_bench.py runs it); the body alone (no guard thread, no span or accounting); the body in
the guard's thread only; in the span and accounting only; without access stamps; without the
accounting write; without the entity branch; with 25 candidates instead of 50. Between turns
both background writers are flushed. Then cProfile splits the body's client work (ranking,
rendering, date labels...), cumulative per turn.

    python bench/inject_breakdown.py [--facts 10000] [--turns 60] [--top 40]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import nodes_bench
from langchain_core.messages import HumanMessage

from langmem_vault.memory._recall.accounting import METRICS, observe
from langmem_vault.nodes import _inject as inject_module
from langmem_vault.nodes._inject import create_inject_node

#: functions whose cumulative time is reported (name as cProfile prints it)
PARTS = [
    "observed",
    "_invoke",
    "run_steps",
    "batch",
    "embed_query",
    "rank_found",
    "fuse",
    "_lists",
    "score_memory",
    "with_usage",
    "balance_categories",
    "render",
    "_fact_line",
    "date_label",
    "score_parts",
    "fact_entry",
    "_default_counter",
    "record",
    "applicable_instructions",
    "newest_plan",
    "read_found",
    "observe",
    "__exit__",
    "_episode_score",
    "rank",
    "annotate",
]


class Counting:
    """Wraps a store's ``batch``: round trips and wall time in them."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.calls = 0
        self.ms = 0.0
        self.inner = store.batch

        def batch(ops: Any) -> Any:
            self.calls += 1
            start = time.perf_counter()
            try:
                return self.inner(ops)
            finally:
                self.ms += (time.perf_counter() - start) * 1000

        store.batch = batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10000)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--top", type=int, default=0, help="also print cProfile's top rows")
    args = parser.parse_args()
    texts = nodes_bench.distractor_texts(max(args.facts, 1000))
    recall = nodes_bench.distractor_texts(1000, seed=11)
    all_texts = list(dict.fromkeys(texts + recall))
    emb = nodes_bench.LiveQueryEmbeddings(
        all_texts, common.cached_vectors(all_texts, "nodes-facts")
    )
    index = {"dims": 384, "embed": emb, "fields": ["text"]}
    uri = common.temp_server_uri()
    with ExitStack() as stack:
        db = common.create_database(uri, "breakdown")
        store: Any = common.open_store("vault", stack, db, index, {})
        nodes_bench.seed_user(store, "u", texts[: args.facts])
        nodes_bench.analyze(db)
        node: Any = create_inject_node(store=store, emit_events=False).node
        config = {"configurable": {"user_id": "u", "thread_id": "bench"}}
        counting = Counting(store)
        print(f"load {os.getloadavg()[0]:.2f}")

        quiet: Any = create_inject_node(store=store, emit_events=False, record_access=False).node
        fewer: Any = create_inject_node(store=store, emit_events=False, candidates=25).node

        def plain(state: Any) -> None:
            node.invoke(state, config)

        def after_unflushed(state: Any) -> None:
            # nodes_bench's sequence: the previous turn's accounting write still pending
            node.invoke(state, config)

        def bare(state: Any) -> None:
            stamps: list[Any] = []
            node._invoke(state, config, stamps)
            node._stamp(stamps)

        def guard_only(state: Any) -> None:
            stamps: list[Any] = []
            node.guard.run(lambda: node._invoke(state, config, stamps), lambda: node._stamp(stamps))

        def observe_only(state: Any) -> None:
            stamps: list[Any] = []
            with observe("inject", store, "u"):
                node._invoke(state, config, stamps)
                node._stamp(stamps)

        def fewer_candidates(state: Any) -> None:
            fewer.invoke(state, config)

        def no_stamps(state: Any) -> None:
            quiet.invoke(state, config)

        def no_accounting(state: Any) -> None:
            METRICS.add = lambda *args, **kw: None  # type: ignore[method-assign]
            try:
                node.invoke(state, config)
            finally:
                del METRICS.add

        def no_entity(state: Any) -> None:
            real = inject_module.default_branches
            inject_module.default_branches = lambda store: ()
            try:
                node.invoke(state, config)
            finally:
                inject_module.default_branches = real

        variants = {
            "node.invoke (background writes of the last turn flushed)": plain,
            "node.invoke (the last turn's accounting write pending, as nodes_bench)": (
                after_unflushed
            ),
            "body only (no guard thread, no span/accounting)": bare,
            "body in the guard's thread, no span/accounting": guard_only,
            "body in the span/accounting, no guard thread": observe_only,
            "node.invoke without access stamps (record_access=False)": no_stamps,
            "node.invoke without the accounting write": no_accounting,
            "node.invoke without the entity branch": no_entity,
            "node.invoke with 25 candidates (default 50)": fewer_candidates,
        }
        for mode in ("msg", "nomsg"):
            samples: dict[str, dict[str, list[float]]] = {
                v: {"wall": [], "embed": [], "batch": [], "stmts": []} for v in variants
            }
            for turn in range(args.turns + 5):
                for v, (name, call) in enumerate(variants.items()):
                    # a question of its own per variant: the store's query cache never answers
                    question = nodes_bench.QUESTIONS_LATENCY[turn % 8] + f" ({turn}.{v})"
                    state = {"messages": [HumanMessage(question)] if mode == "msg" else []}
                    if call is after_unflushed:
                        node.invoke(state, config)
                        node.recorder.flush()
                    before_q, counting.calls, counting.ms = len(emb.query_ms), 0, 0.0
                    with common.captured_statements() as captured:
                        start = time.perf_counter()
                        call(state)
                        wall = (time.perf_counter() - start) * 1000
                    node.recorder.flush()
                    fewer.recorder.flush()
                    METRICS.flush()
                    if turn < 5:
                        continue
                    embed = sum(emb.query_ms[before_q:])
                    got = samples[name]
                    got["wall"].append(wall)
                    got["embed"].append(embed)
                    got["batch"].append(counting.ms - embed)
                    got["stmts"].append(len(captured))
            rows = []
            for name, got in samples.items():
                rest = [
                    w - b - e
                    for w, b, e in zip(got["wall"], got["batch"], got["embed"], strict=True)
                ]
                rows.append(
                    [
                        name,
                        *(f"{common.percentile(got['wall'], q):.2f}" for q in (50, 95)),
                        f"{common.median(got['embed']):.2f}",
                        f"{common.median(got['batch']):.2f}",
                        f"{common.median(rest):.2f}",
                        f"{common.median(got['stmts']):.0f}",
                    ]
                )
            print(
                f"\n=== inject {'with' if mode == 'msg' else 'without'} a message,"
                f" {args.facts:,} facts"
            )
            common.print_table(
                [
                    "variant",
                    "p50 ms",
                    "p95 ms",
                    "embedding p50",
                    "store batch p50 (excl. embedding)",
                    "rest p50",
                    "statements",
                ],
                rows,
            )
            profile = cProfile.Profile()
            profiled = args.turns // 2
            for turn in range(profiled):
                question = nodes_bench.QUESTIONS_LATENCY[turn % 8] + f" ({turn})"
                state = {"messages": [HumanMessage(question)] if mode == "msg" else []}
                profile.enable()
                node._invoke(state, config, [])
                profile.disable()
                node.recorder.flush()
                METRICS.flush()
            stats = pstats.Stats(profile)
            found = []
            for (path, _, func), (_, ncalls, _, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
                if (func in PARTS and "site-packages" not in path) or func in (
                    "batch",
                    "embed_query",
                ):
                    found.append(
                        (cum, f"{Path(path).parent.name}/{Path(path).name}:{func}", ncalls)
                    )
            found.sort(reverse=True)
            print(
                f"\ncProfile of the body, cumulative per turn ({profiled} turns,"
                " profiler overhead included)"
            )
            common.print_table(
                ["function", "calls/turn", "ms/turn"],
                [[n, f"{c / profiled:.1f}", f"{cum / profiled * 1000:.3f}"] for cum, n, c in found],
            )
            if args.top:
                stats.sort_stats("tottime").print_stats(args.top)
        print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
