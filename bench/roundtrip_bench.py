"""Round trips on the chat path: inject's store reads and the background enqueue, with each
statement in a round trip of its own (as before pipelining) and pipelined, in one process,
sample by sample in turn, so a busy machine slows both alike.

"one per round trip" runs the very same SQL through :func:`sequential`, which sends the
statements of each pipelined step one at a time, inside a transaction block (as every batch
ran before); "pipelined" is what the package does now. langgraph's PostgresStore runs the
same inject node as the reference, and a pooled ``SELECT 1`` gives the machine's floor.

    python bench/roundtrip_bench.py [--facts 10000] [--samples 100]

Facts get random unit vectors and the queries are embedded by a lookup, so the timings are
the database side of inject (the query embedding is the model's cost: see embed_bench.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import Op, Result

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import nodes_bench

from langmem_vault.db import open_pool
from langmem_vault.db._runner import Pipelined, Plan
from langmem_vault.jobs import JobQueue
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.store import VaultStore
from langmem_vault.store._plans import batch_plan
from langmem_vault.store._prepare import prepare_batch


def sequential(plan: Plan[Any]) -> Plan[Any]:
    """The same plan with every statement in a round trip of its own."""
    answer: Any = None
    try:
        while True:
            step = plan.send(answer)
            if isinstance(step, Pipelined):
                answer = []
                for query in step.queries:
                    answer.append((yield query))
            else:
                answer = yield step
    except StopIteration as done:
        return done.value


class OnePerRoundTrip(VaultStore):
    """VaultStore as it ran before pipelining: each statement its own round trip, every
    batch in a transaction block."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        prepared = prepare_batch(ops, self.settings)
        assert self.embeddings is not None
        docs: dict[str, list[float]] = {}
        if texts := self._docs_to_embed(prepared):
            docs = self._check_docs(texts, self.embeddings.embed_documents(texts))
        queries, missing = self._cached_queries(prepared.queries)
        if missing:
            vectors = [self.embeddings.embed_query(text) for text in missing]
            self._remember_queries(missing, vectors, queries)
        return self._db.run(
            lambda: sequential(batch_plan(prepared, self.settings, docs, queries, self._stats))
        )


class RandomEmbeddings(Embeddings):
    """A fixed random unit vector per text (the store side is what is measured)."""

    def _one(self, text: str) -> list[float]:
        rng = np.random.default_rng(abs(hash(text)) % 2**32)
        v = rng.standard_normal(common.DIMS).astype("float32")
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def pct(values: list[float], q: float) -> float:
    return common.percentile(values, q)


def timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def inject_case(uri: str, facts: int, samples: int) -> dict[str, list[float]]:
    from contextlib import ExitStack

    from langgraph.store.postgres import PostgresStore

    index = {"dims": common.DIMS, "embed": RandomEmbeddings(), "fields": ["text"]}
    texts = nodes_bench.distractor_texts(facts)
    out: dict[str, list[float]] = {}
    with ExitStack() as stack:
        stores: dict[str, Any] = {}
        for name in ("pipelined", "one per round trip", "PostgresStore"):
            db = common.create_database(uri, f"rt_{name.replace(' ', '_').lower()}")
            if name == "PostgresStore":
                store: Any = stack.enter_context(PostgresStore.from_conn_string(db, index=index))  # type: ignore[arg-type]
            else:
                cls = VaultStore if name == "pipelined" else OnePerRoundTrip
                store = stack.enter_context(cls.from_conn_string(db, index=index, schema="bench"))  # type: ignore[arg-type]
            store.setup()
            nodes_bench.seed_user(store, "u", texts)
            common.analyze(db)
            stores[name] = store
        nodes = {
            name: create_inject_node(store=s, emit_events=False).node for name, s in stores.items()
        }
        config = {"configurable": {"user_id": "u", "thread_id": "bench"}}
        for with_message in (True, False):
            for i in range(samples + 5):
                question = nodes_bench.QUESTIONS_LATENCY[i % 8] + f" ({i})"
                state = {"messages": [HumanMessage(question)] if with_message else []}
                for name, node in nodes.items():
                    # The random "embedding" costs microseconds: this is the DB side.
                    ms = timed(lambda node=node, state=state: node.invoke(state, config))
                    node.recorder.flush()
                    if i >= 5:
                        key = f"inject {'with' if with_message else 'without'} a message, {name}"
                        out.setdefault(key, []).append(ms)
    return out


def enqueue_case(uri: str, samples: int) -> dict[str, list[float]]:
    from langmem_vault.jobs import _plans as plans

    out: dict[str, list[float]] = {}
    schema = f"rt_{uuid.uuid4().hex[:8]}"
    with open_pool(uri, max_size=4) as pool:
        queue = JobQueue(pool, schema=schema)
        queue.setup()

        def payload(ids: list[str]) -> dict[str, Any]:
            return {
                "messages": [AIMessage("x", id=i).model_dump() for i in ids],
                "message_ids": ids,
            }

        def enqueue(thread: str, ids: list[str], pipelined: bool) -> None:
            def plan() -> Plan[Any]:
                return plans.enqueue_span_plan(
                    schema,
                    kind="extract",
                    thread_id=thread,
                    present_ids=ids,
                    min_new=1,
                    payload_for=payload,
                )

            if pipelined:
                queue.db.run(plan(), pipeline=True)
            else:
                queue.db.run(sequential(plan()))

        def floor() -> None:
            with pool.connection() as conn:
                conn.execute("SELECT 1")

        ids: dict[bool, list[str]] = {True: [], False: []}
        for i in range(samples + 5):
            for pipelined in (True, False):
                thread = f"{'p' if pipelined else 's'}{i // 20}"
                if i % 20 == 0:
                    ids[pipelined] = []
                ids[pipelined] = [*ids[pipelined], uuid.uuid4().hex, uuid.uuid4().hex]
                ms = timed(lambda p=pipelined, t=thread: enqueue(t, ids[p], p))
                name = "pipelined" if pipelined else "one per round trip"
                if i >= 5:
                    out.setdefault(f"enqueue, {name}", []).append(ms)
            if i >= 5:
                out.setdefault("pooled SELECT 1 (floor)", []).append(timed(floor))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10000)
    parser.add_argument("--samples", type=int, default=100)
    args = parser.parse_args()
    uri = common.temp_server_uri()
    load = os.getloadavg()[0]
    results = enqueue_case(uri, args.samples)
    results |= inject_case(uri, args.facts, args.samples)
    print(
        f"\n{args.samples} samples each, {args.facts:,} facts; load average {load:.1f} at "
        f"start, {os.getloadavg()[0]:.1f} at the end\n"
    )
    print("| path | p50 ms | p95 ms |")
    print("|---|---|---|")
    for name, values in results.items():
        print(f"| {name} | {statistics.median(values):.2f} | {pct(values, 95):.2f} |")


if __name__ == "__main__":
    main()
