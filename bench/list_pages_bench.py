"""A page of one user's memory list at 10k memories for that user: the SQL page (issue 28,
service/_listing.py on the store's PageOp) beside the old path (read the user's memories,
sort, cut: ``MemoriesMixin._records_plan``), in the same run on one embedded server.

    python bench/list_pages_bench.py [--memories 10000] [--others 10] [--runs 200]
    python bench/list_pages_bench.py --partitions 0 16 64 --data-dir D --load-only  # fill
    python bench/list_pages_bench.py --partitions 0 16 64 --data-dir D --sql-only   # time
    python bench/list_pages_bench.py ... --offsets 250 500  # offset pages this deep
    python bench/list_pages_bench.py --partitions 0 64 --data-dir D --migrate  # setup() again
    python bench/list_pages_bench.py ... --closed-every 10  # every 10th of the user's closed
    python bench/list_pages_bench.py ... --dashboard  # the dashboard's memory page, and its parts

``--partitions`` fills one schema per count (``setup(partitions=N)``, 0: none) and times each
request shape on them in lockstep. The user's namespaces, ``("memories", "u0", ...)``, fit the
store's tenant template, so each user's rows have their own tenant (partition).

The user's memories arrive interleaved with ``--others`` other users' (as many each), so the
user's rows are spread over the table. Prints p50/p95 per request shape and, for the SQL page,
the buffers its statement touched (EXPLAIN ANALYZE, a count that does not depend on load).

The status counts (the dashboard's four tabs) are timed as the service runs them and, in one
lockstep beside each other, as statements: A, one walk labelling every row (how
``count_plan`` counted before issue 28's session 13, still its fallback), B, the rows whose
status may not be active judged and the rest counted in the index (store/0010), and C, the
statuses no time changes counted index-only, only the rows whose status depends on the time
judged (store/0011). ``--status-indexes`` builds store/0011's indexes beside store/0010's on
filled schemas (a plain CREATE INDEX each; setup() would drop store/0010's), so B and C run
on the same data.
``--dashboard`` times the dashboard's memory page end to end (``GET /`` through the app, on
AsyncVaultStore) and each service call it makes, alone.
``--closed-every K`` makes every K-th of the user's facts pending, superseded, forgotten,
ended or ending later, in turn (rows B reads), in schemas of their own.
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
from langmem_vault.service._records import MAX_OFFSET

#: what every ``--closed-every``-th of the user's facts becomes, in turn
CLOSED: tuple[dict[str, Any], ...] = (
    {"status": "pending_confirmation"},
    {"status": "superseded", "superseded_by": "x"},
    {"status": "superseded"},
    {"valid_to": "2020-01-01T00:00:00+00:00"},
    {"valid_to": "2999-01-01T00:00:00+00:00"},
)


def _fill(store: Any, user: str, memories: int, others: int, closed_every: int = 0) -> None:
    from langgraph.store.base import PutOp

    from langmem_vault.memory._models import SemanticFact

    start = datetime(2025, 1, 1, tzinfo=UTC)
    batch: list[PutOp] = []
    for n in range(memories):
        when = start + timedelta(minutes=n)
        for u in [user, *(f"other{o}" for o in range(others))]:
            fact = SemanticFact(text=f"{u} fact {n}", created_at=when, updated_at=when)
            ns = ("memories", u, "semantic")
            value = fact.to_store()
            if u == user and closed_every and n % closed_every == 0:
                value.update(CLOSED[(n // closed_every) % len(CLOSED)])
            batch.append(PutOp(ns, f"{u}-{n}", value, index=False))
        if len(batch) >= 2000:
            store.batch(batch)
            batch = []
    if batch:
        store.batch(batch)


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
        own = node["Actual Rows"] if node.get("Relation Name", "").startswith("store_items") else 0
        return own + sum(rows(c) for c in node.get("Plans", []))

    return hits, rows(top)


def _loaded(uri: str, schema: str, rows: int) -> bool:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{schema}.store_items",))
        if not found.fetchone()[0]:  # type: ignore[index]
            return False
        (n,) = conn.execute(f"SELECT count(*) FROM {schema}.store_items").fetchone()  # type: ignore[misc]
        return bool(n == rows)


def _shapes(
    service: Any, store: Any, user: str, memories: int, sql_only: bool, offsets: list[int]
) -> Any:
    from langmem_vault.db._steps import run_steps
    from langmem_vault.service import MemoryService

    whole = MemoryService(store, max_rows=10 * memories)  # the old path, uncapped
    second = service.list_memories(user, limit=10).next
    deep = None  # the cursor after the first half of the list: where offsets are not offered
    for _ in range(memories // 2000):
        deep = service.list_memories(user, limit=1000, after=deep).next
    for offset in offsets:
        assert service.list_memories(user, limit=10, offset=offset).items

    def old(svc: MemoryService) -> Callable[[], Any]:
        def call() -> Any:
            records, _ = run_steps(svc._records_plan(user), store)
            return records[:10]

        return call

    def at(offset: int, **filters: Any) -> Callable[[], Any]:
        return lambda: service.list_memories(user, limit=10, offset=offset, **filters)

    exact = exact_total_supported()
    shapes: list[tuple[str, Callable[[], Any]]] = [
        ("SQL: first page + total", lambda: service.list_memories(user, limit=10)),
        ("SQL: next page by cursor", lambda: service.list_memories(user, limit=10, after=second)),
        (
            f"SQL: page by cursor after {memories // 2}",
            lambda: service.list_memories(user, limit=10, after=deep),
        ),
        *((f"SQL: page at offset {n} + total", at(n)) for n in offsets),
        (
            "SQL: status=active, first page",
            lambda: service.list_memories(user, limit=10, status=["active"]),
        ),
        (
            "SQL: status=active, by cursor",
            lambda: service.list_memories(user, limit=10, status=["active"], after=second),
        ),
        *((f"SQL: status=active, page at offset {n}", at(n, status=["active"])) for n in offsets),
        ("SQL: MemoryVault.list (oldest first)", lambda: service._vault(user).list(limit=10)),
        ("SQL: the dashboard's 4 status-tab counts", _tab_counts(service, user)),
    ]
    if exact:  # the count every page paid before issue 28's session 10, in the same run
        shapes.insert(
            1,
            (
                "SQL: first page + exact total",
                lambda: service.list_memories(user, limit=10, exact_total=True),
            ),
        )
    if not sql_only:
        shapes += [
            ("old: read 5,000 (max_rows), sort, cut", old(service)),
            (f"old: read all {memories:,}, sort, cut", old(whole)),
        ]
    return shapes


def _tab_counts(service: Any, user: str) -> Callable[[], Any]:
    """The dashboard's tab counts (api/_dashboard.TABS) as this package counts them: one
    statement (``count_memories``), or before issue 28's session 11 one exact count each."""
    tabs = (["active"], ["pending"], ["superseded", "forgotten"], ["expired"])
    if hasattr(service, "count_memories"):
        return lambda: service.count_memories(user, kind="semantic")
    return lambda: [
        service.list_memories(user, kind="semantic", status=s, limit=1, exact_total=True)
        for s in tabs
    ]


def exact_total_supported() -> bool:
    """Whether this package's listing takes ``exact_total`` (a bounded total by default)."""
    from langmem_vault.service._records import MemoryQuery

    return "exact_total" in MemoryQuery.model_fields


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--others", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument(
        "--offsets",
        type=int,
        nargs="+",
        default=[MAX_OFFSET],
        help="the offset pages' depths (the service offers up to MAX_OFFSET)",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        nargs="+",
        default=[0],
        help="one schema per count (setup(partitions=N); 0: none), timed in lockstep",
    )
    parser.add_argument(
        "--closed-every",
        type=int,
        default=0,
        help="every K-th of the user's facts not active (CLOSED), in schemas of their own",
    )
    parser.add_argument(
        "--dashboard", action="store_true", help="time the dashboard's memory page and its parts"
    )
    parser.add_argument(
        "--categories",
        action="store_true",
        help="only the counted category listing, A (Python) against B (one statement)",
    )
    parser.add_argument("--data-dir", help="keep the server here; reuse schemas already filled")
    parser.add_argument("--load-only", action="store_true", help="fill the schemas and stop")
    parser.add_argument(
        "--status-indexes",
        action="store_true",
        help="build store/0011's indexes beside store/0010's on the filled schemas, and stop",
    )
    parser.add_argument("--sql-only", action="store_true", help="skip the old path's shapes")
    parser.add_argument(
        "--migrate", action="store_true", help="run this code's migrations on the filled schemas"
    )
    args = parser.parse_args()

    from contextlib import ExitStack

    from langmem_vault.db._embedded import embedded_uri
    from langmem_vault.service import MemoryService
    from langmem_vault.store import VaultStore
    from langmem_vault.store._pages import PageOp

    uri = embedded_uri(args.data_dir) if args.data_dir else temp_server_uri()
    user = "u0"
    mixed = f"_c{args.closed_every}" if args.closed_every else ""
    schemas = {
        n: f"bench_pages{mixed}_p{n}" if n else f"bench_pages{mixed}" for n in args.partitions
    }
    filled: dict[int, float] = {}
    for n, schema in schemas.items():
        if _loaded(uri, schema, args.memories * (args.others + 1)):
            continue
        with VaultStore.from_conn_string(uri, schema=schema) as store:
            store.setup(partitions=n)
            t0 = time.perf_counter()
            _fill(store, user, args.memories, args.others, args.closed_every)
            filled[n] = time.perf_counter() - t0
            import psycopg

            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute(f"VACUUM ANALYZE {schema}.store_items")
            store.analyze()  # a partitioned table's own statistics (docs/scaling.md)
    if args.migrate:
        import psycopg

        for n, schema in schemas.items():
            with VaultStore.from_conn_string(uri, schema=schema) as store:
                store.setup(partitions=n)
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute(f"VACUUM ANALYZE {schema}.store_items")
        print("migrated")
        return
    if args.status_indexes:
        _status_indexes(uri, schemas)
        return
    if args.load_only:
        print(f"filled {filled}; load average {os.getloadavg()[0]:.1f}")
        return
    load = os.getloadavg()[0]
    if args.categories:
        print(f"load average {load:.2f}")
        print_table(
            ("counted categories (sync service path)", "partitions", "runs", "p50 ms", "p95 ms"),
            _category_rows(uri, schemas, user, args.runs),
        )
        return
    ns = ("memories", user, "semantic")
    namespaces = (ns, ("memories", user, "instructions"), ("memories", user, "episodes"))
    rows = []
    counted = []
    with ExitStack() as stack:
        stores = {
            n: stack.enter_context(VaultStore.from_conn_string(uri, schema=schema))
            for n, schema in schemas.items()
        }
        shapes = {
            n: _shapes(MemoryService(s), s, user, args.memories, args.sql_only, args.offsets)
            for n, s in stores.items()
        }
        for k, (name, _) in enumerate(shapes[args.partitions[0]]):
            runs = args.runs if name.startswith("SQL") else max(5, args.runs // 20)
            by_n = _timed_lockstep([shapes[n][k][1] for n in args.partitions], runs)
            for n, (p50, p95) in zip(args.partitions, by_n, strict=True):
                rows.append((name, n, runs, f"{p50:.2f}", f"{p95:.2f}"))
        counts = [_count_queries(stores[n], uri, schemas[n], user) for n in args.partitions]
        abc = _timed_lockstep([_runner(uri, q) for trio in counts for q in trio], args.runs)
        for n in args.partitions:
            for k, what in enumerate(STATEMENTS):
                p50, p95 = abc[len(STATEMENTS) * args.partitions.index(n) + k]
                rows.append((f"counts statement, {what}", n, args.runs, f"{p50:.2f}", f"{p95:.2f}"))
        if args.dashboard:
            rows += _dashboard_rows(uri, schemas, user, max(20, args.runs // 4))
        for n, store in stores.items():
            cursor = _cursor(store, namespaces)
            for what, op in (
                ("first page", PageOp(namespaces, 10)),
                ("next page by cursor", PageOp(namespaces, 10, after=cursor)),
            ):
                counted.append((what, n, *_buffers(uri, schemas[n], op)))
    print(
        f"{args.memories:,} memories for the user, {args.others} other users as many each, "
        f"interleaved; filled in {filled or '(reused)'} s; load average {load:.1f}"
    )
    print_table(("request (limit 10)", "partitions", "runs", "p50 ms", "p95 ms"), rows)
    print_table(("SQL page statement", "partitions", "shared buffers", "index rows read"), counted)
    read = [
        (what, n, *_read(uri, q))
        for n, trio in zip(args.partitions, counts, strict=True)
        for what, q in zip(STATEMENTS, trio, strict=True)
    ]
    print_table(("counts statement", "partitions", "shared buffers", "heap rows read"), read)


STATEMENTS = ("A: one walk", "B: candidates judged (0010)", "C: fixed index-only (0011)")


class _NotYet:
    """An online migration a store does not know applied yet (store/_applied.Applied)."""

    def ask(self, schema: str) -> Any:
        return False
        yield


def _status_indexes(uri: str, schemas: dict[int, str]) -> None:
    """store/0011's step on each schema (a plain CREATE INDEX each), store/0010's index kept
    and the migration not recorded (run under ``cpu test``)."""
    import psycopg
    from psycopg.rows import dict_row

    from langmem_vault.db._runner import Query
    from langmem_vault.db._status_counts_index import status_counts_plan

    with psycopg.connect(uri, autocommit=True, row_factory=dict_row) as conn:
        for schema in schemas.values():
            record = Query("SELECT 1")
            plan = status_counts_plan(schema, record, concurrently=False)
            answer: Any = None
            while True:
                try:
                    query: Any = plan.send(answer)
                except StopIteration:
                    break
                answer = None
                if query is not record and not query.sql.startswith("DROP INDEX"):
                    cursor = conn.execute(query.sql, query.params)
                    answer = cursor.fetchall() if cursor.description else None
            conn.execute(f"ANALYZE {schema}.store_items")
    print(f"store/0011's indexes built on {sorted(schemas.values())}")


def _count_queries(store: Any, uri: str, schema: str, user: str) -> tuple[Any, Any, Any]:
    """The tab counts' statement, A (one walk, every row labelled), B (``count_plan`` before
    store/0011: the candidates judged) and C (this package's ``count_plan``), checked to
    give the same counts."""
    import psycopg
    from psycopg.rows import dict_row

    from langmem_vault._tenants import DEFAULT_RULE
    from langmem_vault.service._records import STATUS_RULES, TOTAL_LIMIT, StatusCounts
    from langmem_vault.store import _page_plan as pp
    from langmem_vault.store._pages import CountOp

    op = CountOp(
        (("memories", user, "semantic"),),
        (STATUS_RULES["semantic"],),
        now=datetime.now(UTC),
        limit=TOTAL_LIMIT + 1,
    )
    params: dict[str, Any] = {}
    namespaces, wheres = pp._scope(op, DEFAULT_RULE, params)
    labeling = dict(zip(namespaces, op.labels, strict=True))
    walk: Any = next(pp._walk_counts(schema, namespaces, wheres, labeling, params))
    answers: list[Any] = []
    sent: list[Any] = []
    with psycopg.connect(uri, row_factory=dict_row) as conn:
        for fixed in (_NotYet(), None):  # B, then C: each plan's query, and its answer
            plan = pp.count_plan(op, schema, DEFAULT_RULE, fixed=fixed)  # type: ignore[arg-type]
            sent.append(next(plan))
            try:
                plan.send(conn.execute(sent[-1].sql, sent[-1].params).fetchall())
            except StopIteration as done:
                answers.append(StatusCounts.of(done.value))
        walked = {r["label"]: r["n"] for r in conn.execute(walk.sql, walk.params).fetchall()}
    (counted,) = store.batch([op])
    assert [StatusCounts.of(walked)] * 3 == [*answers, StatusCounts.of(counted)], answers
    judged, split = sent
    return walk, judged, split


def _runner(uri: str, query: Any) -> Callable[[], Any]:
    """``query`` on a connection of its own, as the store sends it (prepared after 5 runs)."""
    import psycopg

    conn = psycopg.connect(uri, autocommit=True)
    return lambda: conn.execute(query.sql, query.params).fetchall()


def _read(uri: str, query: Any) -> tuple[int, int]:
    """(shared buffers, rows of store_items read from the heap) of ``query``'s run."""
    import psycopg

    with psycopg.connect(uri) as conn:
        (plan,) = conn.execute(
            f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {query.sql}", query.params
        ).fetchone()  # type: ignore[misc]
    top = plan[0]["Plan"]

    def heap(node: dict[str, Any]) -> int:
        own = node.get("Relation Name", "").startswith("store_items")
        own = own and node["Node Type"] != "Index Only Scan"
        return (node["Actual Rows"] if own else 0) + sum(heap(c) for c in node.get("Plans", []))

    return top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0), heap(top)


def _dashboard_rows(uri: str, schemas: dict[int, str], user: str, runs: int) -> list[Any]:
    """The dashboard's memory page (active tab, 50 a page) through the app, and its service
    calls alone, on an AsyncVaultStore per schema, in lockstep across the schemas."""
    import asyncio
    import logging

    import httpx

    from langmem_vault.api import ApiKeyAuth, create_app
    from langmem_vault.api._dashboard import PAGE, TABS
    from langmem_vault.service import Identity, MemoryService
    from langmem_vault.store import AsyncVaultStore

    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request otherwise
    loop = asyncio.new_event_loop()
    auth = ApiKeyAuth({"k": Identity.admin("bench")})
    shapes: dict[int, list[tuple[str, Callable[[], Any]]]] = {}
    opened = []  # the stores' context managers, kept open (their pools close with them)
    for n, schema in schemas.items():
        opened.append(AsyncVaultStore.from_conn_string(uri, schema=schema))
        store = loop.run_until_complete(opened[-1].__aenter__())
        svc = MemoryService(store)
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(svc, prefix="/vault", auth=auth)),
            base_url="http://bench",
            headers={"Authorization": "Bearer k"},
        )

        def call(make: Callable[..., Any], *args: Any, **kw: Any) -> Callable[[], Any]:
            return lambda: loop.run_until_complete(make(*args, **kw))

        page = call(client.get, "/vault/", params={"user_id": user})
        categories = call(svc.alist_categories, user, counted=False)
        assert page().status_code == 200
        shapes[n] = [
            ("dashboard: memory page, GET / (end to end)", page),
            ("dashboard part: alist_categories, not counted (the page's)", categories),
            (
                "dashboard part: alist_categories, counted (before)",
                call(svc.alist_categories, user),
            ),
            ("dashboard part: acount_memories", call(svc.acount_memories, user, kind="semantic")),
            (
                f"dashboard part: alist_memories, {PAGE} a page",
                call(svc.alist_memories, user, kind="semantic", status=TABS["active"], limit=PAGE),
            ),
        ]
    rows = []
    order = list(schemas)
    for k, (name, _) in enumerate(shapes[order[0]]):
        timed = _timed_lockstep([shapes[n][k][1] for n in order], runs)
        for n, (p50, p95) in zip(order, timed, strict=True):
            rows.append((name, n, runs, f"{p50:.2f}", f"{p95:.2f}"))
    for cm in opened:
        loop.run_until_complete(cm.__aexit__(None, None, None))
    loop.close()
    return rows


def _category_rows(uri: str, schemas: dict[int, str], user: str, runs: int) -> list[Any]:
    """``list_categories`` counted, A: every current fact and its usage record read into
    Python (main before k28), B: one TallyOp statement; over the service's ``max_rows`` (the
    5,000 most recently updated facts) and over all, in one lockstep; A and B checked equal."""
    from contextlib import ExitStack

    from langmem_vault.db._steps import run_steps
    from langmem_vault.service._base import MAX_ROWS
    from langmem_vault.service._categories import categories_plan
    from langmem_vault.store import VaultStore

    shapes: list[tuple[str, int, Callable[[], Any]]] = []
    with ExitStack() as stack:
        for n, schema in schemas.items():
            store = stack.enter_context(VaultStore.from_conn_string(uri, schema=schema))
            for cap in (MAX_ROWS, None):
                pair = [
                    (
                        lambda c=cap, s=store, q=in_sql: run_steps(
                            categories_plan(user, max_rows=c, in_sql=q), s
                        )
                    )
                    for in_sql in (False, True)
                ]
                assert pair[0]() == pair[1](), "A and B differ"
                rows = f"{cap:,}" if cap else "all"
                shapes += [
                    (f"A: facts + usage read into Python, max_rows {rows}", n, pair[0]),
                    (f"B: one TallyOp statement, max_rows {rows}", n, pair[1]),
                ]
        timed = _timed_lockstep([call for _, _, call in shapes], runs)
    return [
        (name, n, runs, f"{p50:.2f}", f"{p95:.2f}")
        for (name, n, _), (p50, p95) in zip(shapes, timed, strict=True)
    ]


def _timed_lockstep(calls: list[Callable[[], Any]], runs: int) -> list[tuple[float, float]]:
    """p50 and p95 (ms) of each call, the calls run one after another in each round, so a
    load spike hits them alike."""
    for call in calls:
        call()  # warm: plans cached, pages in shared buffers
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(runs):
        for k, call in enumerate(calls):
            t0 = time.perf_counter()
            call()
            times[k].append((time.perf_counter() - t0) * 1000)
    return [(statistics.median(t), percentile(t, 95)) for t in times]


def _cursor(store: Any, namespaces: Any) -> Any:
    from langmem_vault.store._pages import PageOp

    (page,) = store.batch([PageOp(namespaces, 10)])
    return page.next


if __name__ == "__main__":
    main()
