"""Issue 28's targets with partitions on: one user's namespace search (cold and warm), a page
of the user's list and the user's erase, on VaultStore with ``setup(partitions=N)`` for a few
N beside partitions off and langgraph's PostgresStore, all in one run on one embedded server.

    # load (slow: run it under `/work/wt/cpu test`); --data-dir keeps the server
    python bench/partitions_bench.py load --data-dir D --items 100000 --users 100 \\
        --partitions 0 16 64 --postgres
    # 1M from 1,000 users, grown in SQL from the 100k databases' rows (see grow())
    python bench/partitions_bench.py load --data-dir D --items 1000000 --users 1000 \\
        --partitions 0 64 --grow-from 100000
    # the same from the 100k layout with the namespace index in key order (pt100000_r0): the
    # grown pt1000000_r0 keeps it, built after the rows; its partitioned copies are made from it
    python bench/partitions_bench.py load --data-dir D --items 1000000 --users 1000 \
        --partitions 64 --rebuilt --grow-from 100000 --grow-source r0 --no-hnsw
    # time (under `/work/wt/cpu bench`)
    python bench/partitions_bench.py search --data-dir D --items 100000 \\
        --partitions 0 16 64 --postgres
    python bench/partitions_bench.py erase --data-dir D --items 1000000 --partitions 0 64
    # counts: pages a user's search touches; bytes per memory
    python bench/partitions_bench.py buffers --data-dir D --items 100000 --partitions 0 64
    python bench/partitions_bench.py sizes --data-dir D --items 100000 --partitions 0 64

Each memory is a semantic fact as the package stores it (``SemanticFact.to_store()``) in the
user's namespace ``("memories", "userNNNN", "semantic")``, which fits the store's tenant
template, so its tenant is the user; users arrive interleaved (item n belongs to user
n % users). Texts are store_speed.py's synthetic chat turns; vectors are random unit vectors
seeded by the text (the same text gets the same vector in every store, query too; a vector's
values do not change what a user's exact scan reads).

``search``: for each cold round the server is stopped, its files evicted from the OS cache
(``posix_fadvise``, and ``echo 3 > /proc/sys/vm/drop_caches`` when writable) and started
again; then each of ``--queries`` searches asks a different user's namespace (so each is that
user's first read), the stores interleaved search by search in a random order; then, store by
store, the same searches twice, the second pass timed as warm (every page it reads in shared
buffers, as on a server that holds one store). Then a page of 10 of a user's list
(``PageOp``, newest first), warm. ``erase``: after a cold restart, ``purge_prefixes`` of
``--erase-users`` users (timed, the statistics refresh excluded), then the erase
statement's EXPLAIN (ANALYZE, BUFFERS) for one more user, rolled back: which partitions it
read, and how many buffers.
The erased users are gone afterwards (rerun ``load`` to have them back).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import vector_layouts

SCHEMA = "bench"
#: puts per batch: a batch's rows are written in key order, so a batch of one fact per user
#: keeps the users' rows interleaved on the heap, as turns of many users arriving one by one
BATCH = 1000
DROP_CACHES = Path("/proc/sys/vm/drop_caches")
#: a cold pass's first searches of each store read the catalogs and plan the statement on a
#: connection of the pool (bench/cold_reads.py: 90-120 ms, then 20-30): a server start's
#: cost, not a user's; "cold from search 3" leaves them out
FIRST = 2


class SeededEmbeddings(Embeddings):
    """A random unit vector seeded by the text: identical for every store and every call."""

    def _one(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        v = np.random.default_rng(seed).standard_normal(common.DIMS)
        return (v / np.linalg.norm(v)).tolist()  # type: ignore[no-any-return]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


INDEX: dict[str, Any] = {"dims": common.DIMS, "embed": SeededEmbeddings(), "fields": ["text"]}


def user_label(n: int) -> str:
    return f"user{n:04d}"


def db_name(items: int, system: str) -> str:
    """``pt<items>_p<N>`` for VaultStore in N partitions (0: none), ``pt<items>_pg``."""
    return f"pt{items}_{system}"


def systems_of(args: argparse.Namespace) -> list[str]:
    systems = [f"p{n}" for n in args.partitions]
    systems += ["n0"] if args.namespace_index else []
    systems += ["r0"] if args.rebuilt else []
    systems += ["v0"] if args.vacuumed else []
    systems += ["c0"] if args.clustered else []
    return systems + args.systems + (["pg"] if args.postgres else [])


def label(system: str) -> str:
    if system == "pg":
        return "PostgresStore"
    if system == "c0":
        return "VaultStore, partitions off, CLUSTERed by tenant"
    if system == "n0":
        return "VaultStore, partitions off, store_vectors_namespace_idx"
    if system == "r0":
        return "VaultStore, partitions off, store_vectors_namespace_idx rebuilt"
    if system == "v0":
        return "the same (r0), vacuumed"
    if system[0] != "p":
        return f"VaultStore, database {system}"
    n = int(system[1:])
    return f"VaultStore, {n} partitions" if n else "VaultStore, partitions off"


def open_system(stack: ExitStack, uri: str, system: str, partitions: int = 0) -> Any:
    if system == "pg":
        from langgraph.store.postgres import PostgresStore

        store = stack.enter_context(PostgresStore.from_conn_string(uri, index=INDEX))  # type: ignore[arg-type]
        store.setup()
        return store
    from langmem_vault.store import VaultStore

    vault = stack.enter_context(VaultStore.from_conn_string(uri, schema=SCHEMA, index=INDEX))  # type: ignore[arg-type]
    vault.setup(partitions=partitions)
    return vault


def fill(store: Any, items: int, users: int) -> float:
    """``items`` facts from ``users`` users, interleaved; returns items per second."""
    import store_speed
    from langgraph.store.base import PutOp

    from langmem_vault.memory._models import SemanticFact

    texts = store_speed.synthetic_texts(common.load_dataset(), items)
    topics = store_speed.TOPICS
    start = time.perf_counter()
    batch: list[PutOp] = []
    size = min(BATCH, users)
    for n, text in enumerate(texts):
        fact = SemanticFact(text=text, category="preference", tags=[topics[n % len(topics)]])
        ns = ("memories", user_label(n % users), "semantic")
        batch.append(PutOp(ns, f"f{n}", fact.to_store(), index=["text"]))
        if len(batch) == size:
            store.batch(batch)
            batch = []
    if batch:
        store.batch(batch)
    return items / (time.perf_counter() - start)


def _connect(uri: str) -> Any:
    import psycopg

    return psycopg.connect(uri, autocommit=True)


def _exists(server: str, name: str) -> bool:
    with _connect(server) as conn:
        return (
            conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            is not None
        )


def _copy_database(server: str, source: str, name: str) -> str:
    from psycopg.conninfo import make_conninfo

    with _connect(server) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
    return make_conninfo(server, dbname=name)


def _finish(uri: str, system: str) -> None:
    """What autovacuum gives a database up a while: statistics and a visibility map."""
    with _connect(uri) as conn:
        conn.execute("VACUUM ANALYZE")
    if system != "pg":
        from langmem_vault.store import VaultStore

        with VaultStore.from_conn_string(uri, schema=SCHEMA, index=INDEX) as store:  # type: ignore[arg-type]
            store.analyze()


GROW = """
CREATE TEMP TABLE old_items AS
    SELECT row_number() OVER (ORDER BY ctid) AS n, * FROM {s}.store_items;
CREATE TEMP TABLE old_vectors AS SELECT * FROM {s}.store_vectors;
CREATE TEMP TABLE noise (g int PRIMARY KEY, v vector({dims}));
"""

ITEMS = """
INSERT INTO {s}.store_items
    (tenant, prefix, key, namespace, value, created_at, updated_at, ttl_minutes, expires_at,
     search_tsv, indexed)
SELECT u.name, 'memories.' || u.name || '.semantic', o.key || '-' || g.g,
       ARRAY['memories', u.name, 'semantic'], o.value, o.created_at, o.updated_at,
       o.ttl_minutes, o.expires_at, o.search_tsv, o.indexed
FROM old_items AS o CROSS JOIN generate_series(0, %(copies)s - 1) AS g(g)
CROSS JOIN LATERAL (SELECT 'user' || lpad((substr(o.namespace[2], 5)::int
                                           + %(users)s * g.g)::text, 4, '0') AS name) AS u
ORDER BY o.n, g.g"""

VECTORS = """
INSERT INTO {s}.store_vectors (tenant, prefix, key, field, embedding)
SELECT i.tenant, i.prefix, i.key, v.field, v.embedding + n.v
FROM {s}.store_items AS i
JOIN old_vectors AS v
  ON v.prefix = 'memories.' || 'user' || lpad((substr(i.namespace[2], 5)::int
                                                %% %(users)s)::text, 4, '0') || '.semantic'
 AND v.key = regexp_replace(i.key, '-[0-9]+$', '')
JOIN noise AS n ON n.g = substring(i.key FROM '-([0-9]+)$')::int
ORDER BY i.ctid"""


def grow(
    server: str, source: str, name: str, items: int, base_users: int, copies: int, hnsw: bool
) -> str:
    """Database ``name``: ``copies`` copies of ``source``'s facts (``base_users`` users), copy
    g's users renumbered by ``g * base_users``, rows written in arrival order (each source
    item's copies one after another), so every user's items lie spread over the table; each
    copy's vectors shifted by a small random vector of its own (HNSW dislikes duplicates).
    Indexes are dropped before and made again after; the HNSW index only when ``hnsw`` (its
    build is the long part; a user's namespace search and erase do not read it)."""
    uri = _copy_database(server, source, name)
    rng = np.random.default_rng(5)
    with _connect(uri) as conn:
        s = SCHEMA
        conn.execute(GROW.format(s=s, dims=common.DIMS))
        for g in range(copies):
            v = rng.standard_normal(common.DIMS) * 0.05 if g else np.zeros(common.DIMS)
            conn.execute("INSERT INTO noise VALUES (%s, %s::vector)", (g, str(v.tolist())))
        indexes = conn.execute(
            """SELECT c.relname, pg_get_indexdef(i.indexrelid)
               FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
               WHERE i.indrelid IN (%s::regclass, %s::regclass)
                 AND NOT EXISTS (SELECT 1 FROM pg_constraint AS k
                                 WHERE k.conindid = i.indexrelid)""",
            (f"{s}.store_items", f"{s}.store_vectors"),
        ).fetchall()
        for index_name, _ in indexes:
            conn.execute(f"DROP INDEX {s}.{index_name}")
        conn.execute(f"TRUNCATE {s}.store_items CASCADE")
        params = {"copies": copies, "users": base_users}
        t0 = time.perf_counter()
        conn.execute(ITEMS.format(s=s), params)
        conn.execute(VECTORS.format(s=s), params)
        print(f"  {name}: rows in {time.perf_counter() - t0:.0f} s", flush=True)
        conn.execute("SET maintenance_work_mem = '2GB'")
        for index_name, ddl in indexes:
            if " USING hnsw " in ddl and not hnsw:
                continue
            t0 = time.perf_counter()
            conn.execute(ddl)
            print(f"  {name}: {index_name} in {time.perf_counter() - t0:.0f} s", flush=True)
        n = conn.execute(f"SELECT count(*) FROM {s}.store_items").fetchone()
        assert n is not None and n[0] == items, (n, items)
    return uri


def load(args: argparse.Namespace) -> None:
    from psycopg.conninfo import make_conninfo

    from langmem_vault.db._embedded import embedded_uri

    server = embedded_uri(Path(args.data_dir).resolve())
    # --grow-source r0: the grown copy keeps the namespace index (built after the rows, so in
    # key order, as reorder_vectors() keeps it) and the partitioned copies are made from it
    kind = args.grow_source if args.grow_from else "p0"
    base = db_name(args.items, kind)
    # only the vacuumed copy of an existing --rebuilt database: no base to load or open
    copy_only = not args.grow_from and systems_of(args) == ["v0"]
    if copy_only:
        pass
    elif args.grow_from:
        source = db_name(args.grow_from, kind)
        copies = args.items // args.grow_from
        grow(server, source, base, args.items, args.users // copies, copies, not args.no_hnsw)
        t0 = time.perf_counter()
        with ExitStack() as stack:  # this tree's migrations (store/0007 rewrites store_items)
            open_system(stack, make_conninfo(server, dbname=base), kind)
        print(f"  {base}: setup() in {time.perf_counter() - t0:.0f} s", flush=True)
        _finish(make_conninfo(server, dbname=base), kind)
    elif args.reload or not _exists(server, base):
        uri = common.create_database(server, base)
        with ExitStack() as stack:
            rate = fill(open_system(stack, uri, "p0"), args.items, args.users)
        print(f"{label('p0')}: {args.items} items at {rate:.0f} items/s", flush=True)
        _finish(uri, "p0")
    if not copy_only:
        with ExitStack() as stack, _connect(make_conninfo(server, dbname=base)) as conn:
            # p0 and its copies are main's layout: without the namespace index (issue 28)
            open_system(stack, make_conninfo(server, dbname=base), "p0")
            if kind == "p0":
                vector_layouts.without_namespace_index(conn, SCHEMA)
    for system in systems_of(args):
        if system == kind:
            continue
        name = db_name(args.items, system)
        if system == "pg":
            if args.reload or not _exists(server, name):
                uri = common.create_database(server, name)
                with ExitStack() as stack:
                    rate = fill(open_system(stack, uri, "pg"), args.items, args.users)
                print(f"{label('pg')}: {args.items} items at {rate:.0f} items/s", flush=True)
                _finish(uri, "pg")
            continue
        if _exists(server, name) and not args.reload:
            continue
        t0 = time.perf_counter()
        source = {"r0": "n0", "v0": "r0"}.get(system)
        uri = _copy_database(server, db_name(args.items, source) if source else base, name)
        if system == "r0":
            with _connect(uri) as conn:
                took = vector_layouts.rebuild(conn, SCHEMA)
            print(f"{label(system)}: REINDEX CONCURRENTLY in {took:.0f} s", flush=True)
        elif system == "n0":
            with _connect(uri) as conn:
                took = vector_layouts.regrow(conn, SCHEMA, common.DIMS)
            print(f"{label(system)}: vectors written again in {took:.0f} s", flush=True)
        elif system == "v0":
            pass  # _finish's VACUUM: store_items's visibility map, which store/0007 emptied
        elif system == "c0":
            with _connect(uri) as conn:
                conn.execute(f"CLUSTER {SCHEMA}.store_items USING store_items_pkey")
                conn.execute(f"CLUSTER {SCHEMA}.store_vectors USING store_vectors_pkey")
        else:
            with ExitStack() as stack:
                open_system(stack, uri, system, partitions=int(system[1:]))
        print(f"{label(system)}: made in {time.perf_counter() - t0:.0f} s", flush=True)
        _finish(uri, system)
    print(f"load average {os.getloadavg()}")


def cold_restart(data_dir: Path) -> str:
    """Stop the server, evict its files from the OS cache (and every clean page, when
    allowed), start it again: empty shared buffers, files read from disk."""
    from langmem_vault.db._embedded import embedded_uri, release

    release(data_dir)
    common.evict_os_cache(data_dir)
    try:
        subprocess.run(["sync"], check=True)
        DROP_CACHES.write_text("3\n")
    except OSError:
        pass
    return embedded_uri(data_dir)


def _uris(server: str, items: int, systems: list[str]) -> dict[str, str]:
    from psycopg.conninfo import make_conninfo

    return {s: make_conninfo(server, dbname=db_name(items, s)) for s in systems}


def _summary(times: list[float]) -> str:
    return f"{common.percentile(times, 50):.2f} / {common.percentile(times, 95):.2f}"


def _scope(case: str, user: str, topic: str) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    """The prefix and filter of one search of ``case``."""
    if case == "namespace":
        return ("memories", user), None
    if case == "filter":
        return ("memories",), {"tags": [topic]}
    return ("memories",), None


def _pass(stores: dict[str, Any], calls: list[tuple[Any, Any, str]], rng: random.Random) -> Any:
    """Each search on every store, the stores in a random order each time: (ms, short)."""
    out: dict[str, tuple[list[float], int]] = {s: ([], 0) for s in stores}
    order = list(stores)
    for prefix, flt, query in calls:
        rng.shuffle(order)
        for s in order:
            t0 = time.perf_counter()
            found = stores[s].search(prefix, query=query, filter=flt, limit=10)
            ms, short = out[s]
            ms.append((time.perf_counter() - t0) * 1000)
            out[s] = (ms, short + (len(found) < 10))
    return out


def search(args: argparse.Namespace) -> None:
    import store_speed

    from langmem_vault.store import PageOp

    data_dir = Path(args.data_dir).resolve()
    systems = systems_of(args)
    questions = [q["question"] for q in common.load_dataset()["questions"]]
    rng = random.Random(3)
    times: dict[tuple[str, str, str], list[float]] = {}
    short: dict[tuple[str, str], int] = {}
    for round_ in range(args.cold_rounds):
        for case in args.cases:
            # each namespace search a different user's first read (while users last)
            users = rng.sample(range(args.users), min(args.queries, args.users))
            calls = [
                (
                    *_scope(
                        case, user_label(users[i % len(users)]), rng.choice(store_speed.TOPICS)
                    ),
                    rng.choice(questions),
                )
                for i in range(args.queries)
            ]
            server = cold_restart(data_dir)
            uris = _uris(server, args.items, systems)
            load_avg = os.getloadavg()
            with ExitStack() as stack:
                stores = {s: open_system(stack, uris[s], s) for s in systems}
                # warm: each store alone, its searches run once first, so that they read its
                # pages from shared buffers (interleaved, the stores' 2 GB evicted each other's
                # from 512 MB of them: 7-9 ms p95 of reads from the OS cache; bench/RESULTS.md)
                passes = [("cold", stores)] + [
                    (phase, {s: stores[s]}) for s in stores for phase in ("", "warm")
                ]
                for phase, group in passes:
                    for s, (ms, n_short) in _pass(group, calls, rng).items():
                        if phase:
                            times.setdefault((case, s, phase), []).extend(ms)
                        if phase == "cold":  # without what a server start costs once
                            times.setdefault((case, s, "later"), []).extend(ms[FIRST:])
                            short[(case, s)] = short.get((case, s), 0) + n_short
                if case == "namespace":
                    ns = ("memories", calls[0][0][1], "semantic")
                    page = [PageOp((ns,), limit=10)]
                    vaults = [s for s in systems if s != "pg"]
                    for s in vaults:
                        stores[s].batch(page)
                    for _ in range(args.pages):
                        for s in vaults:
                            t0 = time.perf_counter()
                            stores[s].batch(page)
                            ms = (time.perf_counter() - t0) * 1000
                            times.setdefault(("page", s, "warm"), []).append(ms)
            print(
                f"round {round_ + 1}, {case}: load average before {load_avg}, "
                f"after {os.getloadavg()}",
                flush=True,
            )
    per_user = args.items // args.users
    print(
        f"\n{args.items:,} items from {args.users} users ({per_user} each), interleaved; "
        f"{args.queries} searches per case x {args.cold_rounds} cold rounds; top 10; "
        "ms p50 / p95; short = answers under 10 (cold + warm)"
    )
    rows = []
    for case in args.cases:
        for s in systems:
            rows.append(
                (
                    case,
                    label(s),
                    _summary(times[(case, s, "cold")]),
                    _summary(times[(case, s, "later")]),
                    _summary(times[(case, s, "warm")]),
                    short[(case, s)],
                )
            )
    for s in systems:
        if ("page", s, "warm") in times:
            rows.append(
                (
                    "page of 10 (PageOp)",
                    label(s),
                    "-",
                    "-",
                    _summary(times[("page", s, "warm")]),
                    "-",
                )
            )
    common.print_table(
        ("search", "store", "cold", f"cold from search {FIRST + 1}", "warm", "short"), rows
    )


def _no_restores(statements: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The statements but the settings' restores (``set_config`` back to the value kept in
    a custom setting), which search_profile.explain would replay before the next SELECT."""
    return [(q, p) for q, p in statements if "current_setting(" not in str(q)[:300]]


def buffers(args: argparse.Namespace) -> None:
    """Shared buffers one user's namespace search touches (EXPLAIN (ANALYZE, BUFFERS) of the
    statements it sends, each search run once before, so every page is a hit): the pages a
    cold search has to read, counted without the noise of timing."""
    import search_profile
    from psycopg.conninfo import make_conninfo

    from langmem_vault.db._embedded import embedded_uri

    server = embedded_uri(Path(args.data_dir).resolve())
    questions = [q["question"] for q in common.load_dataset()["questions"]]
    rng = random.Random(5)
    users = [user_label(u) for u in rng.sample(range(args.users), min(args.queries, args.users))]
    rows = []
    for system in systems_of(args):
        uri = make_conninfo(server, dbname=db_name(args.items, system))
        counts = []
        with ExitStack() as stack, _connect(uri) as conn:
            store = open_system(stack, uri, system)
            for user in users:
                query = rng.choice(questions)
                store.search(("memories", user), query=query, limit=10)
                with common.captured_statements() as statements:
                    store.search(("memories", user), query=query, limit=10)
                counts.append(search_profile.explain(conn, _no_restores(statements))[1])
        rows.append(
            (
                label(system),
                len(counts),
                f"{common.percentile(counts, 50):.0f}",
                f"{common.percentile(counts, 95):.0f}",
            )
        )
    print(f"\nbuffers per namespace search, {args.items:,} items from {args.users} users")
    common.print_table(("store", "searches", "buffers p50", "buffers p95"), rows)


def cold(args: argparse.Namespace) -> None:
    """Blocks one user's namespace search reads from disk, cold (``cold_reads.py``): per
    store, the median and p95 over ``--queries`` users (a cold restart before each), and
    where the median user's reads went."""
    import cold_reads

    data_dir = Path(args.data_dir).resolve()
    questions = [q["question"] for q in common.load_dataset()["questions"]]
    rng = random.Random(13)
    spare = user_label(args.users - 1)
    users = [user_label(u) for u in rng.sample(range(args.users - 1), args.queries)]
    found: dict[str, list[Any]] = {s: [] for s in systems_of(args) if s != "pg"}
    for user in users:
        query = rng.choice(questions)
        server = cold_restart(data_dir)
        for system, uris in _uris(server, args.items, list(found)).items():
            with ExitStack() as stack, _connect(uris) as conn:
                store = open_system(stack, uris, system)
                with common.captured_statements() as statements:
                    store.search(("memories", spare), query=query, limit=10)
                found[system].append(cold_reads.reads(conn, statements, spare, user))
    print(
        f"\nblocks read cold by one user's namespace search, {args.items:,} items, "
        f"{len(users)} users (a cold restart before each)"
    )
    rows = []
    for system, counts in found.items():
        totals = [sum(c.values()) for c in counts]
        median = sorted(counts, key=lambda c: sum(c.values()))[len(counts) // 2]
        where = ", ".join(f"{k} {n}" for k, n in median.most_common(4))
        rows.append((label(system), _summary(totals), where))
    common.print_table(("store", "blocks read p50 / p95", "the median user's, by scan"), rows)


def sizes(args: argparse.Namespace) -> None:
    """Bytes per memory of every relation (a partition's under its table's name) of each
    store's database: capacity_bench.py's query."""
    from capacity_bench import SIZES_SQL
    from psycopg.conninfo import make_conninfo

    from langmem_vault.db._embedded import embedded_uri

    server = embedded_uri(Path(args.data_dir).resolve())
    for system in [s for s in systems_of(args) if s != "pg"]:
        with _connect(make_conninfo(server, dbname=db_name(args.items, system))) as conn:
            rels = conn.execute(SIZES_SQL, (SCHEMA,)).fetchall()
        total = sum(b + toast for _, _, b, toast, _ in rels)
        rows = [
            (name, f"{(b + toast) / 2**20:.1f}", f"{(b + toast) / args.items:.0f}")
            for name, _, b, toast, _ in rels
            if b + toast > 2**20
        ]
        rows.append(("all", f"{total / 2**20:.1f}", f"{total / args.items:.0f}"))
        print(f"\n{label(system)}, {args.items:,} items")
        common.print_table(("relation", "MiB", "bytes per memory"), rows)


def _explain_erase(uri: str, user: str) -> tuple[float, int, list[str]]:
    """The erase statement of ``user`` under EXPLAIN (ANALYZE, BUFFERS), rolled back: server
    ms, shared buffers, and the relations it scanned."""
    from langmem_vault.store import _sql as q
    from langmem_vault.store._search_plan import like_prefix

    prefix = f"memories.{user}"
    params = {"prefixes": [prefix], "likes": [like_prefix(prefix)], "tenants": [user]}
    with _connect(uri) as conn:
        conn.execute("BEGIN")
        (plan,) = conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + q.purge_prefixes(SCHEMA, routed=True),
            params,
        ).fetchone()
        conn.execute("ROLLBACK")
    top = plan[0]
    relations: set[str] = set()

    def walk(node: dict[str, Any]) -> None:
        if "Scan" in node["Node Type"] and "Relation Name" in node:
            relations.add(node["Relation Name"])
        for child in node.get("Plans", []):
            walk(child)

    walk(top["Plan"])
    buffers = top["Plan"].get("Shared Hit Blocks", 0) + top["Plan"].get("Shared Read Blocks", 0)
    return float(top["Execution Time"]), int(buffers), sorted(relations)


def erase(args: argparse.Namespace) -> None:
    data_dir = Path(args.data_dir).resolve()
    systems = [s for s in systems_of(args) if s != "pg"]
    rng = random.Random(11)
    users = [user_label(u) for u in rng.sample(range(args.users), args.erase_users + 1)]
    server = cold_restart(data_dir)
    uris = _uris(server, args.items, systems)
    print(f"load average {os.getloadavg()}", flush=True)
    rows = []
    with ExitStack() as stack:
        stores = {s: open_system(stack, uris[s], s) for s in systems}
        took: dict[str, list[float]] = {s: [] for s in systems}
        gone: dict[str, int] = dict.fromkeys(systems, 0)
        for user in users[:-1]:
            for s in rng.sample(systems, len(systems)):
                t0 = time.perf_counter()
                gone[s] += stores[s].purge_prefixes([("memories", user)], analyze=False)
                took[s].append((time.perf_counter() - t0) * 1000)
    for s in systems:
        ms, buffers, relations = _explain_erase(uris[s], users[-1])
        rows.append(
            (
                label(s),
                gone[s],
                " ".join(f"{t:.0f}" for t in took[s]),
                f"{ms:.1f}",
                buffers,
                ", ".join(relations),
            )
        )
    print(f"\nerase of one user at {args.items:,} items from {args.users} users (cold server)")
    common.print_table(
        (
            "store",
            "items erased",
            "each erase ms",
            "EXPLAIN ms (one more user)",
            "buffers",
            "relations scanned",
        ),
        rows,
    )
    print(f"load average {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["load", "search", "erase", "buffers", "cold", "sizes"])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument(
        "--partitions",
        type=int,
        nargs="*",
        default=[0, 16, 64],
        help="none: the others only",
    )
    parser.add_argument("--postgres", action="store_true", help="PostgresStore beside")
    parser.add_argument(
        "--clustered",
        action="store_true",
        help="beside: partitions off, the tables CLUSTERed by their key (tenant first)",
    )
    parser.add_argument(
        "--namespace-index",
        action="store_true",
        help="beside: partitions off, store_vectors_namespace_idx grown with the rows",
    )
    parser.add_argument(
        "--rebuilt",
        action="store_true",
        help="beside: the --namespace-index copy with that index rebuilt (REINDEX CONCURRENTLY)",
    )
    parser.add_argument(
        "--vacuumed",
        action="store_true",
        help="beside: a copy of the --rebuilt database, VACUUMed (its visibility map set)",
    )
    parser.add_argument(
        "--systems", nargs="*", default=[], help="beside: other databases by suffix (pt<items>_X)"
    )
    parser.add_argument("--no-hnsw", action="store_true", help="load --grow-from: no HNSW")
    parser.add_argument("--grow-from", type=int, help="load: copy the databases of this size")
    parser.add_argument(
        "--grow-source",
        choices=["p0", "r0"],
        default="p0",
        help="load --grow-from: the layout grown (r0: with the namespace index, in key order)",
    )
    parser.add_argument("--reload", action="store_true", help="load: refill existing databases")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--cases", nargs="+", default=["namespace"], choices=["namespace", "plain", "filter"]
    )
    parser.add_argument("--cold-rounds", type=int, default=2)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--erase-users", type=int, default=3)
    args = parser.parse_args()
    commands = {
        "load": load,
        "search": search,
        "erase": erase,
        "buffers": buffers,
        "cold": cold,
        "sizes": sizes,
    }
    commands[args.command](args)


if __name__ == "__main__":
    main()
