"""A page of one user's memory list at 10k memories for that user: the SQL page (issue 28,
service/_listing.py on the store's PageOp) beside the old path (read the user's memories,
sort, cut: ``MemoriesMixin._records_plan``), in the same run on one embedded server.

    python bench/list_pages_bench.py [--memories 10000] [--others 10] [--runs 200]

The user's memories arrive interleaved with ``--others`` other users' (as many each), so the
user's rows are spread over the table. Prints p50/p95 per request shape and, for the SQL page,
the buffers its statement touched (EXPLAIN ANALYZE, a count that does not depend on load).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.common import percentile, print_table, temp_server_uri


def _fill(store: Any, user: str, memories: int, others: int) -> None:
    from langgraph.store.base import PutOp

    from langmem_vault.memory._models import SemanticFact

    start = datetime(2025, 1, 1, tzinfo=UTC)
    batch: list[PutOp] = []
    for n in range(memories):
        when = start + timedelta(minutes=n)
        for u in [user, *(f"other{o}" for o in range(others))]:
            fact = SemanticFact(text=f"{u} fact {n}", created_at=when, updated_at=when)
            ns = ("memories", u, "semantic")
            batch.append(PutOp(ns, f"{u}-{n}", fact.to_store(), index=False))
        if len(batch) >= 2000:
            store.batch(batch)
            batch = []
    if batch:
        store.batch(batch)


def _timed(call: Callable[[], Any], runs: int) -> tuple[float, float]:
    call()  # warm: plans cached, pages in shared buffers
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), percentile(times, 95)


def _buffers(uri: str, schema: str, op: Any) -> tuple[int, int]:
    """(shared buffers touched, rows the page's index walks returned) of the page statement."""
    import psycopg

    from langmem_vault.store._page_plan import page_plan

    query = next(page_plan(op, schema))
    sql_text = getattr(query, "sql", None) or query.queries[0].sql  # type: ignore[attr-defined]
    params = getattr(query, "params", None) or query.queries[0].params  # type: ignore[attr-defined]
    with psycopg.connect(uri) as conn:
        (plan,) = conn.execute(
            f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql_text}", params
        ).fetchone()  # type: ignore[misc]
    top = plan[0]["Plan"]
    hits = top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)

    def rows(node: dict[str, Any]) -> int:
        own = node["Actual Rows"] if node.get("Relation Name") == "store_items" else 0
        return own + sum(rows(c) for c in node.get("Plans", []))

    return hits, rows(top)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--others", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()

    from langmem_vault.db._steps import run_steps
    from langmem_vault.service import MemoryService
    from langmem_vault.store import VaultStore
    from langmem_vault.store._pages import PageOp

    uri, schema, user = temp_server_uri(), "bench_pages", "u0"
    with VaultStore.from_conn_string(uri, schema=schema) as store:
        store.setup()
        t0 = time.perf_counter()
        _fill(store, user, args.memories, args.others)
        filled = time.perf_counter() - t0
        import psycopg

        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f"VACUUM ANALYZE {schema}.store_items")
        service = MemoryService(store)
        whole = MemoryService(store, max_rows=10 * args.memories)  # the old path, uncapped
        second = service.list_memories(user, limit=10).next
        deep = service.list_memories(user, limit=10, offset=5000).items[-1]
        assert deep is not None

        def old(svc: MemoryService) -> Callable[[], Any]:
            def call() -> Any:
                records, _ = run_steps(svc._records_plan(user), store)
                return records[:10]

            return call

        shapes: list[tuple[str, Callable[[], Any]]] = [
            ("SQL: first page + total", lambda: service.list_memories(user, limit=10)),
            (
                "SQL: next page by cursor",
                lambda: service.list_memories(user, limit=10, after=second),
            ),
            (
                "SQL: page at offset 5000 + total",
                lambda: service.list_memories(user, limit=10, offset=5000),
            ),
            (
                "SQL: status=active, by cursor",
                lambda: service.list_memories(user, limit=10, status=["active"], after=second),
            ),
            ("SQL: MemoryVault.list (oldest first)", lambda: service._vault(user).list(limit=10)),
            ("old: read 5,000 (max_rows), sort, cut", old(service)),
            (f"old: read all {args.memories:,}, sort, cut", old(whole)),
        ]
        rows = []
        for name, call in shapes:
            runs = args.runs if name.startswith("SQL") else max(5, args.runs // 20)
            p50, p95 = _timed(call, runs)
            rows.append((name, runs, f"{p50:.2f}", f"{p95:.2f}"))
        ns = ("memories", user, "semantic")
        namespaces = (ns, ("memories", user, "instructions"), ("memories", user, "episodes"))
        counted = [
            ("first page", PageOp(namespaces, 10)),
            ("next page by cursor", PageOp(namespaces, 10, after=_cursor(store, namespaces))),
        ]
    print(
        f"{args.memories:,} memories for the user, {args.others} other users as many each, "
        f"interleaved; filled in {filled:.0f} s; load average {os.getloadavg()[0]:.1f}"
    )
    print_table(("request (limit 10)", "runs", "p50 ms", "p95 ms"), rows)
    with VaultStore.from_conn_string(uri, schema=schema) as store:
        counts = [(n, *_buffers(uri, schema, op)) for n, op in counted]
    print_table(("SQL page statement", "shared buffers", "index rows read"), counts)


def _cursor(store: Any, namespaces: Any) -> Any:
    from langmem_vault.store._pages import PageOp

    (page,) = store.batch([PageOp(namespaces, 10)])
    return page.next


if __name__ == "__main__":
    main()
