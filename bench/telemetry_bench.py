"""The overhead of spans and token/latency accounting on inject, per turn, in one run.

Five ways to run the same inject node on the same store and messages, interleaved turn by
turn (so machine load hits all five alike):

- ``bare``: the node's guarded body only (``guard.run(_invoke)``), as before this feature;
- ``no otel``: ``invoke``, OpenTelemetry not installed (spans are the shared no-op; the
  stage is timed and its latency increment handed to the batched writer);
- ``api only``: ``invoke``, the OpenTelemetry API without a provider (non-recording spans);
- ``sdk, no-op exporter``: ``invoke``, the SDK's provider with a span processor whose
  exporter drops every span (spans built, attributes set, ended);
- ``sdk spans only``: the same spans, no accounting (the node's body observed with no store:
  spans and accounting measured apart).

Overhead = p50(mode) - p50(bare), in milliseconds, of wall time and of the turn thread's CPU
time (``time.thread_time``: steadier on a loaded machine; the batched writer's thread is
not the turn's). The store is InMemoryStore with 40 facts and no index (inject's own work:
no embedding, no database round trip to drown the difference in). A second table times the
wrapper alone (``observed`` around an empty body, 20,000 calls per mode).

    python bench/telemetry_bench.py [--turns 400]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from langmem_vault.memory._recall.accounting import METRICS
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._common import observed as observe_node
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.telemetry import _tracing as tracing


class DropAll(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=400)
    args = parser.parse_args()

    store = InMemoryStore()
    vault = MemoryVault(store, user_id="u1")
    for i in range(40):
        vault.remember(f"User fact number {i} about topic {i % 7}", source="manual")
    node = create_inject_node(store=store, record_access=False, timeout=None).node
    config: Any = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
    state = {"messages": [HumanMessage("What do you know about topic 3?")]}

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(DropAll()))
    tracers = {
        "no otel": False,  # as _get_tracer caches it when the import fails
        "api only": trace.NoOpTracer(),
        "sdk, no-op exporter": provider.get_tracer("langmem_vault"),
    }

    def bare() -> Any:
        stamps: list[Any] = []
        return node.guard.run(
            lambda: node._invoke(state, config, stamps), lambda: node._stamp(stamps)
        )

    def observed(tracer: Any) -> Callable[[], Any]:
        def run() -> Any:
            tracing._tracer = tracer
            return node.invoke(state, config)

        return run

    def spans_only() -> Any:
        tracing._tracer = tracers["sdk, no-op exporter"]
        return observe_node(node.guard, None, config, lambda: node._invoke(state, config))

    modes: dict[str, Callable[[], Any]] = {"bare": bare}
    modes |= {name: observed(tracer) for name, tracer in tracers.items()}
    modes["sdk spans only"] = spans_only
    wall: dict[str, list[float]] = {name: [] for name in modes}
    cpu: dict[str, list[float]] = {name: [] for name in modes}
    for run in modes.values():  # warm up: caches, the writer thread
        for _ in range(20):
            run()
    for _ in range(args.turns):
        for name, run in modes.items():
            start, start_cpu = time.perf_counter(), time.thread_time()
            run()
            cpu[name].append((time.thread_time() - start_cpu) * 1000.0)
            wall[name].append((time.perf_counter() - start) * 1000.0)
    METRICS.flush()
    print(f"inject on InMemoryStore, 40 facts, {args.turns} turns per mode (interleaved)")
    _table(wall, cpu)

    # The wrapper alone: what a turn pays per memory stage, whatever the stage does.
    empty: dict[str, Any] = {}
    wrapped: dict[str, Callable[[], Any]] = {"bare": lambda: node.guard.run(lambda: empty)}
    for name, tracer in tracers.items():

        def one(tracer: Any = tracer) -> Any:
            tracing._tracer = tracer
            return observe_node(node.guard, store, config, lambda: empty)

        wrapped[name] = one
    wall = {name: [] for name in wrapped}
    cpu = {name: [] for name in wrapped}
    for _ in range(20):  # 20 rounds of 1,000 calls per mode, interleaved
        for name, run in wrapped.items():
            start, start_cpu = time.perf_counter(), time.thread_time()
            for _ in range(1000):
                run()
            cpu[name].append(time.thread_time() - start_cpu)  # s per 1,000 = ms per call
            wall[name].append(time.perf_counter() - start)
    METRICS.flush()
    print("\nthe wrapper alone (one stage: span, ledger, timer, batched increment), per call")
    _table(wall, cpu)


def _table(wall: dict[str, list[float]], cpu: dict[str, list[float]]) -> None:
    base, base_cpu = statistics.median(wall["bare"]), statistics.median(cpu["bare"])
    head = ("mode", "p50 ms", "p95 ms", "overhead p50", "cpu p50", "cpu overhead")
    print(f"{head[0]:<22}" + "".join(f"{h:>14}" for h in head[1:]))
    for name, found in wall.items():
        ordered = sorted(found)
        p50, p95 = statistics.median(ordered), ordered[round(0.95 * (len(ordered) - 1))]
        c50 = statistics.median(cpu[name])
        cells = (p50, p95, p50 - base, c50, c50 - base_cpu)
        print(f"{name:<22}" + "".join(f"{c:>14.3f}" for c in cells))


if __name__ == "__main__":
    main()
