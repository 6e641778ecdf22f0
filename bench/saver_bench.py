"""VaultSaver vs langgraph's PostgresSaver / AsyncPostgresSaver on one embedded Postgres.

Measures, on the same server (a fresh temporary data directory):

1. bytes on disk (pg_total_relation_size of each saver's tables) after a 200-turn
   add_messages conversation run through a real graph, checking both give identical
   get_state results;
2. throughput of put + get_tuple with 8 concurrent threads on a pool (async savers);
3. latency p50/p95 of put and get_tuple at turn 10 and turn 200 of a thread (sync savers);
4. reads at turn ``--turns`` of a graph conversation: get_tuple, graph.get_state and one
   graph turn, cold (VaultSaver's decoded-message cache emptied) and warm, read by read.

Run:  python bench/saver_bench.py [--turns 200] [--steps 40] [--rounds 3] [--samples 40]
      python bench/saver_bench.py --reads-only --samples 30   # section 4 alone
      python bench/saver_bench.py --reads-only --distribution  # and each cold get_tuple
      python bench/saver_bench.py --reads-only --first-use 10  # and a fresh saver's reads
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import common  # bench/common.py (the script's folder is on sys.path)
import psycopg
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver

SCHEMA = "langmem_vault"
OURS = [
    "saver_threads",
    "saver_checkpoints",
    "saver_blobs",
    "saver_elements",
    "saver_pages",
    "saver_writes",
]
THEIRS = ["checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"]
CONCURRENCY = 8


def human(i: int) -> HumanMessage:
    return HumanMessage(f"Question {i}: how should I plan step {i} of the project? " * 2)


def reply_text(i: int) -> str:
    return f"Answer {i}: " + "Here is a careful, detailed answer with several sentences. " * 6


def relation_bytes(uri: str, tables: list[str]) -> int:
    with psycopg.connect(uri, autocommit=True) as conn:
        total = 0
        for table in tables:
            row = conn.execute("SELECT pg_total_relation_size(%s)", (table,)).fetchone()
            total += int(row[0]) if row and row[0] else 0
        return total


def build_chat(saver: BaseCheckpointSaver[Any]) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(reply_text(len(state["messages"])))]}

    return StateGraph(MessagesState).add_node(reply).add_edge(START, "reply").compile(saver)


def storage(uri: str, turns: int) -> dict[str, Any]:
    """Run the same conversation through both savers; compare sizes and final states."""
    states = []
    with PostgresSaver.from_conn_string(uri) as theirs:
        theirs.setup()
        states.append(converse(build_chat(theirs), turns))
    with VaultSaver.from_conn_string(uri, schema=SCHEMA) as ours:
        ours.setup()
        states.append(converse(build_chat(ours), turns))
    same = [texts(s) for s in states[0]] == [texts(s) for s in states[1]]
    return {
        "theirs": relation_bytes(uri, THEIRS),
        "ours": relation_bytes(uri, [f"{SCHEMA}.{t}" for t in OURS]),
        "identical": same,
    }


def converse(graph: Any, turns: int) -> list[list[BaseMessage]]:
    config = {"configurable": {"thread_id": "bench-storage", "user_id": "bench"}}
    for i in range(turns):
        graph.invoke({"messages": [human(i)]}, config)
    state = graph.get_state(config)
    history = list(graph.get_state_history(config))
    return [state.values["messages"], *[h.values.get("messages", []) for h in history[:5]]]


def texts(messages: list[BaseMessage]) -> list[tuple[str, Any]]:
    return [(m.type, m.content) for m in messages]


def conversation(n: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(n):
        out += [human(i), AIMessage(reply_text(i), id=f"ai-{i}")]
    return out


class Steps:
    """Checkpoints of a growing conversation, as the graph loop would put them."""

    def __init__(self, saver: BaseCheckpointSaver[Any], thread_id: str) -> None:
        self.saver, self.thread_id = saver, thread_id
        self.parent: str | None = None
        self.version: Any = None
        self.messages: list[BaseMessage] = []

    def next(self, messages: list[BaseMessage]) -> tuple[Any, Checkpoint, Any, Any]:
        self.version = self.saver.get_next_version(self.version, None)
        checkpoint = Checkpoint(
            v=4,
            id=str(uuid6(clock_seq=-1)),
            ts="2026-01-01T00:00:00+00:00",
            channel_values={"messages": messages, "reply": "reply"},
            channel_versions={"messages": self.version, "reply": self.version},
            versions_seen={"reply": {"messages": self.version}},
            updated_channels=["messages"],
        )
        configurable = {"thread_id": self.thread_id, "checkpoint_ns": ""}
        if self.parent:
            configurable["checkpoint_id"] = self.parent
        meta = {"source": "loop", "step": len(messages), "parents": {}}
        return {"configurable": configurable}, checkpoint, meta, {"messages": self.version}

    def done(self, stored: Any) -> None:
        self.parent = stored["configurable"]["checkpoint_id"]


async def throughput(saver: BaseCheckpointSaver[Any], steps: int) -> float:
    """put + get_tuple pairs per second, CONCURRENCY threads at once."""
    history = conversation(steps)

    async def one_thread() -> None:
        s = Steps(saver, f"tp-{uuid.uuid4().hex}")
        for k in range(1, steps + 1):
            stored = await saver.aput(*s.next(history[: 2 * k]))
            s.done(stored)
            got = await saver.aget_tuple(stored)
            assert got is not None and len(got.checkpoint["channel_values"]["messages"]) == 2 * k

    start = time.perf_counter()
    await asyncio.gather(*(one_thread() for _ in range(CONCURRENCY)))
    return CONCURRENCY * steps / (time.perf_counter() - start)


async def throughput_both(uri: str, steps: int, rounds: int) -> tuple[float, float]:
    """Median rate of each saver over ``rounds`` alternating runs (fair on a busy machine)."""
    kwargs = {"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0}
    theirs_rates, ours_rates = [], []
    async with (
        AsyncConnectionPool(uri, max_size=CONCURRENCY, kwargs=kwargs, open=False) as pool,
        AsyncVaultSaver.from_conn_string(uri, schema=SCHEMA, pool_size=CONCURRENCY) as ours,
    ):
        theirs = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await theirs.setup()
        await ours.setup()
        await throughput(theirs, 3)  # warm up both
        await throughput(ours, 3)
        for _ in range(rounds):
            theirs_rates.append(await throughput(theirs, steps))
            ours_rates.append(await throughput(ours, steps))
    return statistics.median(theirs_rates), statistics.median(ours_rates)


def latency(
    savers: list[BaseCheckpointSaver[Any]], turn: int, samples: int
) -> list[dict[str, float]]:
    """p50/p95 in ms of put and get_tuple once a thread has reached ``turn``.

    The savers take turns sample by sample, so a busy machine slows them alike.
    """
    history = conversation(turn + samples)
    steps = [Steps(saver, f"lat-{uuid.uuid4().hex}") for saver in savers]
    for s in steps:
        for k in range(1, turn):
            s.done(s.saver.put(*s.next(history[: 2 * k])))
    puts: list[list[float]] = [[] for _ in savers]
    gets: list[list[float]] = [[] for _ in savers]
    for k in range(turn, turn + samples):
        for i, s in enumerate(steps):
            args = s.next(history[: 2 * k])
            t0 = time.perf_counter()
            stored = s.saver.put(*args)
            t1 = time.perf_counter()
            s.saver.get_tuple(stored)
            t2 = time.perf_counter()
            s.done(stored)
            puts[i].append((t1 - t0) * 1000)
            gets[i].append((t2 - t1) * 1000)
    return [
        {
            "put p50": statistics.median(p),
            "put p95": quantile(p, 0.95),
            "get p50": statistics.median(g),
            "get p95": quantile(g, 0.95),
        }
        for p, g in zip(puts, gets, strict=True)
    ]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency_both(uri: str, samples: int) -> dict[int, tuple[dict[str, float], dict[str, float]]]:
    out = {}
    with (
        PostgresSaver.from_conn_string(uri) as theirs,
        VaultSaver.from_conn_string(uri, schema=SCHEMA, pool_size=2) as ours,
    ):
        for turn in (10, 200):
            their_lat, our_lat = latency([theirs, ours], turn, samples)
            out[turn] = (their_lat, our_lat)
    return out


READ_OPS = ("graph turn (invoke)", "get_tuple", "graph.get_state")


def read_latency(
    uri: str, turns: int, samples: int, cpu: dict[tuple[str, str], list[list[float]]] | None = None
) -> dict[tuple[str, str], list[list[float]]]:
    """ms of each read path on a thread of ``turns`` graph turns, per saver, cold and warm;
    ``cpu`` (if given) gets the same keys with this thread's CPU ms of each call, which
    other jobs on the machine inflate far less than wall time.

    Both savers hold the same conversation (run through a real graph). Each sample times,
    saver by saver (alternating which goes first), one more graph turn, a get_tuple and a
    graph.get_state (the turn first: the reads then see the thread as a chat's next turn does);
    "warm" as a chat process meets them (this saver read the thread before),
    "cold" with VaultSaver's decoded-message cache emptied first. PostgresSaver has no cache,
    so its cold and warm runs are the same work, timed beside ours for the ratio.
    """
    config = {"configurable": {"thread_id": "bench-reads", "user_id": "bench"}}
    out: dict[tuple[str, str], list[list[float]]] = {
        (op, mode): [[], []] for op in READ_OPS for mode in ("cold", "warm")
    }
    if cpu is not None:
        cpu.update({key: [[], []] for key in out})
    with (
        PostgresSaver.from_conn_string(uri) as theirs,
        VaultSaver.from_conn_string(uri, schema=SCHEMA, pool_size=2) as ours,
    ):
        theirs.setup()
        ours.setup()
        graphs = [build_chat(theirs), build_chat(ours)]
        for graph in graphs:
            for i in range(turns):
                graph.invoke({"messages": [human(i)]}, config)
        turn = turns
        for k in range(samples):
            for i in (0, 1) if k % 2 == 0 else (1, 0):
                saver, graph = (theirs, ours)[i], graphs[i]
                # Untimed: leave the cache as a chat process has it after the previous cold
                # block emptied it (VaultSaver keeps a message from its second decode).
                for _ in range(2):
                    saver.get_tuple(config)
                for mode in ("warm", "cold"):
                    for op in READ_OPS:
                        if mode == "cold":
                            ours._decoded.clear()
                        t0, c0 = time.perf_counter(), time.thread_time()
                        if op == "get_tuple":
                            saver.get_tuple(config)
                        elif op == "graph.get_state":
                            graph.get_state(config)
                        else:
                            graph.invoke({"messages": [human(turn + k)]}, config)
                        out[(op, mode)][i].append((time.perf_counter() - t0) * 1000)
                        if cpu is not None:
                            cpu[(op, mode)][i].append((time.thread_time() - c0) * 1000)
        states = [g.get_state(config).values["messages"] for g in graphs]
        if texts(states[0]) != texts(states[1]):
            raise AssertionError("the two savers' threads differ after the read benchmark")
    return out


def first_use(uri: str, samples: int, reads: int = 8) -> list[list[list[tuple[float, float]]]]:
    """Wall and CPU ms of reads 1..``reads`` of the read benchmark's thread by a saver opened
    just before (its own new connection or pool), per saver, ``samples`` times, interleaved:
    what a process meets after a restart, beyond an emptied cache."""
    config = {"configurable": {"thread_id": "bench-reads", "user_id": "bench"}}
    out: list[list[list[tuple[float, float]]]] = [[], []]
    for k in range(samples):
        for i in (0, 1) if k % 2 == 0 else (1, 0):
            opened = (
                PostgresSaver.from_conn_string(uri)
                if i == 0
                else VaultSaver.from_conn_string(uri, schema=SCHEMA)
            )
            with opened as saver:
                times = []
                for _ in range(reads):
                    t0, c0 = time.perf_counter(), time.thread_time()
                    saver.get_tuple(config)
                    wall = (time.perf_counter() - t0) * 1000
                    times.append((wall, (time.thread_time() - c0) * 1000))
            out[i].append(times)
    return out


def row(name: str, theirs: float, ours: float, fmt: Callable[[float], str], target: str) -> str:
    ratio = ours / theirs if theirs else float("nan")
    return f"| {name} | {fmt(theirs)} | {fmt(ours)} | {ratio:.2f}x | {target} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200, help="conversation turns (storage)")
    parser.add_argument("--steps", type=int, default=40, help="put+get per thread (throughput)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating throughput runs")
    parser.add_argument("--samples", type=int, default=40, help="samples per latency figure")
    parser.add_argument(
        "--reads-only", action="store_true", help="only the turn-N read latencies, cold and warm"
    )
    parser.add_argument(
        "--distribution",
        action="store_true",
        help="also print every cold get_tuple sample (wall / CPU ms), sorted, per saver",
    )
    parser.add_argument(
        "--first-use",
        type=int,
        default=0,
        metavar="N",
        help="also time reads 1-8 of a freshly opened saver, N samples (after section 4)",
    )
    args = parser.parse_args()

    uri = common.temp_server_uri()  # removed at exit, once the server has stopped
    cpu: dict[tuple[str, str], list[list[float]]] = {}
    if args.reads_only:
        reads = read_latency(uri, args.turns, args.samples, cpu)
    else:
        size = storage(uri, args.turns)
        their_rate, our_rate = asyncio.run(throughput_both(uri, args.steps, args.rounds))
        lat = latency_both(uri, args.samples)
        reads = read_latency(uri, args.turns, args.samples, cpu)

    def kib(x: float) -> str:
        return f"{x / 1024:,.0f} KiB"

    def ms(x: float) -> str:
        return f"{x:.2f} ms"

    print("| metric | langgraph PostgresSaver | VaultSaver | ratio | target |")
    print("|---|---|---|---|---|")
    for (op, mode), (theirs, ours) in reads.items():
        for q, name in ((0.5, "p50"), (0.95, "p95")):
            print(
                row(
                    f"{op} {name} at turn {args.turns}, {mode} (sync, read by read)",
                    quantile(theirs, q),
                    quantile(ours, q),
                    ms,
                    "<= 1.0x",
                )
            )
        for q, name in ((0.5, "p50"), (0.95, "p95")):
            theirs_cpu, ours_cpu = cpu[(op, mode)]
            print(
                row(
                    f"{op} CPU {name} at turn {args.turns}, {mode} (this process's thread)",
                    quantile(theirs_cpu, q),
                    quantile(ours_cpu, q),
                    ms,
                    "-",
                )
            )
    if args.first_use:
        fresh = first_use(uri, args.first_use)
        print(f"\nreads of a freshly opened saver, median wall / CPU ms, {args.first_use} samples:")
        for i, name in enumerate(("PostgresSaver", "VaultSaver")):
            cells = [
                f"#{n + 1} {statistics.median(s[n][0] for s in fresh[i]):.1f}"
                f" / {statistics.median(s[n][1] for s in fresh[i]):.1f}"
                for n in range(len(fresh[i][0]))
            ]
            print(f"  {name}: " + "  ".join(cells))
    if args.distribution:
        for i, name in enumerate(("PostgresSaver", "VaultSaver")):
            walls, cpus = reads[("get_tuple", "cold")][i], cpu[("get_tuple", "cold")][i]
            pairs = sorted(zip(walls, cpus, strict=True))
            print(f"cold get_tuple, {name}, wall/CPU ms sorted by wall:")
            print("  " + " ".join(f"{w:.1f}/{c:.1f}" for w, c in pairs))
    if args.reads_only:
        return
    print(
        row(
            f"bytes on disk after {args.turns} turns (identical get_state: {size['identical']})",
            size["theirs"],
            size["ours"],
            kib,
            "<= 0.2x",
        )
    )
    print(
        row(
            f"put+get_tuple per s, {CONCURRENCY} threads on a pool (async)",
            their_rate,
            our_rate,
            lambda x: f"{x:,.0f}/s",
            ">= 1.5x",
        )
    )
    for turn, (theirs, ours) in lat.items():
        for key in theirs:
            print(row(f"{key} at turn {turn} (sync)", theirs[key], ours[key], ms, "-"))


if __name__ == "__main__":
    main()
