"""Privacy parts on the chat path: audit logging cost, sealing cost, gate and erase latency.

On one embedded Postgres (a fresh temporary data directory):

1. audit, per event, as a chat turn pays it: a naive INSERT per event (autocommit, the usual
   way), ``AuditLog.record`` (durable on return) and ``AuditBuffer.record`` (batched in the
   background); then the time to get 10,000 events durable each way;
2. ``encrypt_fact`` / ``decrypt_fact`` per fact (AES-256-GCM);
3. ``PrivacyGate.request`` for a user with 200 facts (redaction included, after warm-up);
4. ``erase_user`` of a user with 1,000 memories and 10 threads (store, saver, jobs, audit).

Run:  python bench/privacy_bench.py [--events 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import common  # bench/common.py (the script's folder is on sys.path)
import psycopg

from langmem_vault.checkpointers import VaultSaver
from langmem_vault.db._connection import open_pool
from langmem_vault.jobs import JobQueue
from langmem_vault.memory._models import FactCategory, SemanticFact
from langmem_vault.memory._sealing import Keyring, decrypt_fact, encrypt_fact
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.privacy._audit.buffer import AuditBuffer
from langmem_vault.privacy._audit.log import AuditEvent, AuditLog
from langmem_vault.privacy._redaction.pii import preload
from langmem_vault.privacy._subject_rights.erase import erase_user
from langmem_vault.privacy._subject_rights.gate import PrivacyGate
from langmem_vault.store import VaultStore

SCHEMA = "privacy_bench"


def pcts(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def row(name: str, samples: list[float], unit: str = "ms") -> None:
    p50, p95 = pcts(samples)
    scale = 1000 if unit == "µs" else 1
    print(f"| {name:<52} | {p50 * scale:>9.3f} | {p95 * scale:>9.3f} | {unit} |")


def event(i: int) -> AuditEvent:
    return AuditEvent("alice", "inject", "inject", memory_key=f"k{i}", detail={"turn": i})


def bench_audit(uri: str, n: int) -> None:
    pool = open_pool(uri, max_size=4)
    log = AuditLog(pool, schema=SCHEMA)
    log.setup()
    naive_sql = (
        f"INSERT INTO {SCHEMA}.vault_audit (at, user_id, action, component, memory_key, detail)"
        " VALUES (now(), %s, %s, %s, %s, %s::jsonb)"
    )
    counter = iter(range(10**9))
    naive: list[float] = []
    durable: list[float] = []
    with psycopg.connect(uri, autocommit=True) as conn:
        # Interleaved, so both see the same disk (commit time is an fsync, shared with
        # whatever else the machine does).
        for i in range(n):
            t0 = time.perf_counter()
            conn.execute(naive_sql, ("alice", "inject", "inject", f"k{i}", "{}"))
            t1 = time.perf_counter()
            log.record(event(i))
            t2 = time.perf_counter()
            naive.append((t1 - t0) * 1000)
            durable.append((t2 - t1) * 1000)
    row("naive INSERT per event (autocommit connection)", naive)
    row("AuditLog.record, 1 event (pooled, durable on return)", durable)
    with AuditBuffer(log, flush_interval=0.2) as buf:
        row(
            "AuditBuffer.record, 1 event (batched)",
            timed(lambda: buf.record(event(next(counter))), n),
        )
        t0 = time.perf_counter()
        buf.flush()
        flush_ms = (time.perf_counter() - t0) * 1000
    print(f"| {'AuditBuffer.flush() of what was left':<52} | {flush_ms:>9.3f} | {'':>9} | ms |")
    big = 10_000
    with psycopg.connect(uri, autocommit=True) as conn:
        t0 = time.perf_counter()
        for i in range(big):
            conn.execute(naive_sql, ("bob", "inject", "inject", f"k{i}", "{}"))
        naive_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with AuditBuffer(log) as buf:
        for i in range(big):
            buf.record(event(i))
    buffered_s = time.perf_counter() - t0
    print(f"\n10,000 events durable: naive {naive_s:.2f} s, AuditBuffer {buffered_s:.2f} s "
          f"({naive_s / buffered_s:.0f}x)\n")  # fmt: skip
    pool.close()


def bench_crypto(n: int) -> None:
    ring = Keyring.generate()
    ns = ("memories", "alice", "semantic")
    value = SemanticFact(text="Was born on 3 March 1985 in Porto", private=True).to_store()
    sealed = encrypt_fact(value, ring, ns, "k")
    row("encrypt_fact", timed(lambda: encrypt_fact(value, ring, ns, "k"), n), "µs")
    row("decrypt_fact", timed(lambda: decrypt_fact(sealed, ring, ns, "k"), n), "µs")


def bench_gate_and_erase(uri: str) -> None:
    pool = open_pool(uri, max_size=4)
    store = VaultStore(pool, schema=SCHEMA)
    store.setup()
    saver = VaultSaver(pool, schema=SCHEMA)
    saver.setup()
    queue = JobQueue(pool, schema=SCHEMA)
    queue.setup()
    log = AuditLog(pool, schema=SCHEMA)
    vault = MemoryVault(store, user_id="carol")
    cats: list[FactCategory] = ["preference", "skill", "project", "personal", "general"]
    for i in range(200):
        vault.remember(f"Fact number {i} about tools and plans", category=cats[i % 5])
    preload()
    gate = PrivacyGate(store, audit=log, grants={"plugin": "full"})
    gate.request("carol", "plugin", purpose="warm-up")
    row(
        "PrivacyGate.request, 200 facts, 20 shared",
        timed(lambda: gate.request("carol", "plugin", purpose="assist"), 20),
    )
    user = f"dave{uuid.uuid4().hex[:6]}"
    big = MemoryVault(store, user_id=user)
    store.batch([])
    for i in range(1000):
        big.remember(f"memory {i}")
    t0 = time.perf_counter()
    report = erase_user(store, user, saver=saver, jobs=queue, audit=log)
    ms = (time.perf_counter() - t0) * 1000
    print(f"| {'erase_user, 1,000 memories':<52} | {ms:>9.1f} | {'':>9} | ms |")
    assert report.store_items == 1000
    pool.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args()
    uri = common.temp_server_uri()  # removed at exit, once the server has stopped
    print("| operation | p50 | p95 | unit |\n|---|---:|---:|---|")
    bench_audit(uri, args.events)
    print("| operation | p50 | p95 | unit |\n|---|---:|---:|---|")
    bench_crypto(args.events)
    bench_gate_and_erase(uri)


if __name__ == "__main__":
    main()
