"""Search cost against how common the query's words are: VaultStore beside langgraph's
PostgresStore, in the same run, search by search (issue 26).

For each size (``--sizes``, default 20000 and 100000) and vocabulary, both stores (a database
each on one embedded server) load the same items at once, ``--users`` namespaces
``("mem", "userN")``, each value ``{"text": ..., "kind": "a" | "b"}``, through ``store.batch``
of 500 puts, with a hashed word embedder (64 dims, query vectors computed before timing:
database side only), then answer 4-word queries with ``limit=10``, the stores interleaved
search by search in a random order:

- vocabularies: ``closed``, 12 words per item from 40 everyday words (every word in about a
  quarter of the items: issue 26's workload); ``zipf``, 12 words per item from 5,000 words
  with Zipfian frequencies (s = 1.1); ``real``, the chat-like texts of store_speed.py;
- query words: ``common`` (each in more than 5% of the items), ``rare`` (each in at most 50
  items) and ``mixed`` (two of each); a class the vocabulary has no words for is skipped;
- scopes: ``plain`` (from ``("mem",)``, every item), ``namespace`` (``("mem", "userN")``) and
  ``filter`` (``("mem",)`` with ``{"kind": "a"}``, half the items);
- passes: ``fresh`` (right after the load, as an app that searches while it ingests: no
  ANALYZE has run unless autovacuum got there), ``cold`` (server restarted, its files evicted
  from the OS cache), ``warm`` (the cold searches again: with ``--reuse`` and no ``cold``, the
  first pass of stores just opened on a server just started) and ``again`` (the warm searches
  again, on the same stores: every statement prepared, every page in shared buffers).

Prints p50 / p95 per row and the p95 (and p50) ratio VaultStore / PostgresStore; then, per
vocabulary, the shared buffers (hit + read) each store's statements touched per search, warm,
from the plans they really ran (``--explain N`` searches per row; 0: none), which do not depend
on the machine's load; ``--recall`` adds VaultStore's recall@10 against its exact path.

    python bench/search_cost_bench.py                 # the whole table (run time: RESULTS.md)
    python bench/search_cost_bench.py --quick         # 20k, closed and zipf, fresh and warm
    python bench/search_cost_bench.py --sizes 20000 --vocabularies closed --passes fresh,warm
    python bench/search_cost_bench.py --data-dir /tmp/cost-pg --reuse --passes "" --explain 10 \
        --show-plans --scopes plain                     # plans of databases a run left there
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import psycopg.rows
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, PutOp

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import plans_explained
import store_speed

from langmem_vault.db._embedded import embedded_uri

DIMS = 64
WORDS_PER_ITEM = 12
QUERY_WORDS = 4
EVERYDAY = [
    *("coffee", "tea", "morning", "evening", "walk", "run", "dog", "cat", "garden", "kitchen"),
    *("music", "book", "movie", "friend", "family", "work", "office", "train", "bus", "car"),
    *("lunch", "dinner", "breakfast", "weekend", "holiday", "beach", "mountain", "city", "park"),
    *("school", "teacher", "doctor", "phone", "computer", "game", "sport", "football", "rain"),
    *("sun", "snow"),
]
SCOPES = ("plain", "namespace", "filter")
COMMON_SHARE, RARE_ITEMS = 0.05, 50
_WORD = re.compile(r"[a-z]{3,}")


class HashedWords(Embeddings):
    """A word-hashing embedder: each word a fixed random unit direction, a text their sum."""

    def __init__(self) -> None:
        self._cache: dict[str, list[float]] = {}
        self._words: dict[str, np.ndarray] = {}

    def _word(self, w: str) -> np.ndarray:
        if (hit := self._words.get(w)) is None:
            seed = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
            hit = self._words[w] = np.random.default_rng(seed).standard_normal(DIMS)
        return hit

    def _one(self, text: str) -> list[float]:
        if (hit := self._cache.get(text)) is not None:
            return hit
        v = np.zeros(DIMS)
        for w in _WORD.findall(text.lower()):
            v += self._word(w)
        norm = float(np.linalg.norm(v)) or 1.0
        out: list[float] = (v / norm).tolist()
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)

    def remember(self, texts: Sequence[str]) -> None:
        """Compute these query vectors now, so timed searches only look them up."""
        for t in texts:
            self._cache[t] = self._one(t)


def _syllable_words(n: int, rng: random.Random) -> list[str]:
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def texts_for(vocabulary: str, n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    if vocabulary == "closed":
        return [" ".join(rng.choices(EVERYDAY, k=WORDS_PER_ITEM)) for _ in range(n)]
    if vocabulary == "zipf":
        words = _syllable_words(5000, rng)
        weights = [1 / (r + 1) ** 1.1 for r in range(len(words))]
        return [" ".join(rng.choices(words, weights, k=WORDS_PER_ITEM)) for _ in range(n)]
    if vocabulary == "real":
        return store_speed.synthetic_texts(common.load_dataset(), n)
    raise SystemExit(f"unknown vocabulary {vocabulary!r}")


def query_sets(texts: Sequence[str], count: int, seed: int = 9) -> dict[str, list[str]]:
    """``count`` 4-word queries per class, from the words' document frequencies."""
    df: Counter[str] = Counter()
    for t in texts:
        df.update(set(_WORD.findall(t.lower())))
    common_words = sorted(w for w, c in df.items() if c > COMMON_SHARE * len(texts))
    rare_words = sorted(w for w, c in df.items() if c <= RARE_ITEMS)
    rng = random.Random(seed)
    half = QUERY_WORDS // 2
    out: dict[str, list[str]] = {}
    if len(common_words) >= QUERY_WORDS:
        out["common"] = [" ".join(rng.sample(common_words, QUERY_WORDS)) for _ in range(count)]
    if len(rare_words) >= QUERY_WORDS:
        out["rare"] = [" ".join(rng.sample(rare_words, QUERY_WORDS)) for _ in range(count)]
    if len(common_words) >= half and len(rare_words) >= half:
        out["mixed"] = [
            " ".join(rng.sample(common_words, half) + rng.sample(rare_words, half))
            for _ in range(count)
        ]
    return out


def scope_args(scope: str, i: int, users: int) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    if scope == "namespace":
        return ("mem", f"user{(7 * i) % users}"), None
    return ("mem",), ({"kind": "a"} if scope == "filter" else None)


def load(store: BaseStore, texts: Sequence[str], users: int) -> None:
    for start in range(0, len(texts), 500):
        store.batch(
            [
                PutOp(("mem", f"user{i % users}"), f"k{i}", {"text": texts[i], "kind": "ab"[i % 2]})
                for i in range(start, min(len(texts), start + 500))
            ]
        )


Row = tuple[str, str, str]  # (query class, scope, pass)


def timed_pass(
    stores: dict[str, BaseStore],
    queries: dict[str, list[str]],
    users: int,
    label: str,
    scopes: Sequence[str] = SCOPES,
) -> dict[Row, dict[str, list[float]]]:
    """Every query of every class in every scope, the stores in a random order each time."""
    rng = random.Random(label)
    out: dict[Row, dict[str, list[float]]] = {}
    for cls, qs in queries.items():
        for scope in scopes:
            times: dict[str, list[float]] = {s: [] for s in stores}
            for i, q in enumerate(qs):
                prefix, flt = scope_args(scope, i, users)
                for name in rng.sample(list(stores), len(stores)):
                    start = time.perf_counter()
                    stores[name].search(prefix, query=q, filter=flt, limit=10)
                    times[name].append((time.perf_counter() - start) * 1000)
            out[(cls, scope, label)] = times
    return out


def run(
    server: str,
    data_dir: Path,
    size: int,
    vocabulary: str,
    args: argparse.Namespace,
    vault_kw: dict[str, Any],
) -> dict[Row, dict[str, list[float]]]:
    texts = texts_for(vocabulary, size)
    queries = query_sets(texts, args.queries)
    emb = HashedWords()
    emb.remember([q for qs in queries.values() for q in qs])
    index = {"dims": DIMS, "embed": emb, "fields": ["text"]}
    systems = args.systems.split(",")
    passes = [p for p in args.passes.split(",") if p]
    scopes = args.scopes.split(",")
    names = {s: f"cost_{s}_{vocabulary}_{size}" for s in systems}
    reused = {s: _loaded(server, names[s], size) for s in systems} if args.reuse else {}
    uris = {s: reused.get(s) or common.create_database(server, names[s]) for s in systems}
    results: dict[Row, dict[str, list[float]]] = {}

    def opened(stack: ExitStack) -> dict[str, BaseStore]:
        return {s: common.open_store(s, stack, uris[s], index, vault_kw) for s in systems}

    def loaded(name: str, store: BaseStore) -> None:
        start = time.perf_counter()
        load(store, texts, args.users)
        print(f"  {name}: loaded {size} in {time.perf_counter() - start:.1f} s", flush=True)

    with ExitStack() as stack:
        stores = opened(stack)
        # Both stores at once: the load is most of a run's time, and each has its own server
        # process (the searches, timed, run one at a time).
        with ThreadPoolExecutor() as pool:
            for done in [pool.submit(loaded, n, s) for n, s in stores.items() if not reused.get(n)]:
                done.result()
        if "fresh" in passes:
            results |= timed_pass(stores, queries, args.users, "fresh", scopes)
    if {"cold", "warm", "again"} & set(passes):
        if "cold" in passes:
            common.restart_cold(data_dir)
        with ExitStack() as stack:
            stores = opened(stack)
            for label in ("cold", "warm", "again"):
                if label in passes:
                    results |= timed_pass(stores, queries, args.users, label, scopes)
    if args.recall and "vault" in uris:
        recall_report(
            f"{vocabulary} vocabulary, {size:,} items",
            uris["vault"],
            index,
            queries,
            args,
            vault_kw,
        )
    if args.explain:
        report_buffers(
            f"{vocabulary} vocabulary, {size:,} items",
            explained(uris, index, queries, args.users, args, vault_kw),
        )
    return results


def _loaded(server: str, name: str, size: int) -> str | None:
    """The URI of database ``name`` when an earlier ``--reuse`` run left ``size`` items in it."""
    from psycopg.conninfo import make_conninfo

    uri = make_conninfo(server, dbname=name)
    try:
        with psycopg.connect(uri) as conn:
            table = "bench.store_items" if "_vault_" in name else "store"
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    except psycopg.Error:
        return None
    return uri if row and row[0] == size else None


def explained(
    uris: dict[str, str],
    index: dict[str, Any],
    queries: dict[str, list[str]],
    users: int,
    args: argparse.Namespace,
    vault_kw: dict[str, Any],
) -> dict[Row, dict[str, list[float]]]:
    """Per row and store, warm (every search run once before; prepared statements made): the
    server CPU per search (ms; ``("cpu", scope, class)`` rows) over ``--cpu-rounds`` runs of the
    first ``--explain`` queries, then the shared buffers (hit + read) of each of them."""
    from langgraph.store.postgres import PostgresStore

    from langmem_vault.store import VaultStore

    out: dict[Row, dict[str, list[float]]] = {}
    for system, uri in uris.items():
        kw: dict[str, Any] = {"autocommit": True}
        if system == "postgres":
            kw |= {"prepare_threshold": 0, "row_factory": psycopg.rows.dict_row}
        with psycopg.connect(uri, **kw) as conn:
            store: BaseStore = (
                PostgresStore(conn, index=index)  # type: ignore[arg-type]
                if system == "postgres"
                else VaultStore(conn, index=index, **common.vault_options(vault_kw))  # type: ignore[arg-type]
            )
            rows = [
                (cls, scope, [(*scope_args(scope, i, users), q) for i, q in enumerate(qs)])
                for cls, qs in queries.items()
                for scope in args.scopes.split(",")
            ]
            for cls, scope, calls in rows:
                calls = calls[: args.explain]
                for prefix, flt, q in calls:
                    store.search(prefix, query=q, filter=flt, limit=10)
                before = plans_explained.backend_cpu(conn)
                for _ in range(args.cpu_rounds):
                    for prefix, flt, q in calls:
                        store.search(prefix, query=q, filter=flt, limit=10)
                used = plans_explained.backend_cpu(conn) - before
                searches = max(1, args.cpu_rounds * len(calls))
                out.setdefault(("cpu", scope, cls), {})[system] = [used / searches * 1000]
            plans = plans_explained.auto_explain(conn)
            for cls, scope, calls in rows:
                counts, shown = out.setdefault((cls, scope, "explain"), {}), []
                for prefix, flt, q in calls[: args.explain]:
                    plans.clear()
                    store.search(prefix, query=q, filter=flt, limit=10)
                    counts.setdefault(system, []).append(plans_explained.buffers(plans))
                    shown.append((counts[system][-1], q, list(plans)))
                if args.show_plans:
                    most, q, worst = max(shown, key=lambda x: x[0])
                    print(f"\n-- {system} {cls} {scope}: most buffers {most} ({q!r})")
                    for p in worst:
                        print("\n".join("   " + x for x in plans_explained.walk(p["Plan"])))
    return out


def recall_report(
    title: str,
    uri: str,
    index: dict[str, Any],
    queries: dict[str, list[str]],
    args: argparse.Namespace,
    vault_kw: dict[str, Any],
) -> None:
    """VaultStore's top 10 against its exact path (every vector of the scope scored) in the
    plain and namespace scopes: the share of the exact top 10 found, per query class."""
    exact_kw = {**vault_kw, "exact_scan_rows": 10**9}
    rows = []
    with ExitStack() as stack:
        store = common.open_store("vault", stack, uri, index, vault_kw)
        exact = common.open_store("vault", stack, uri, index, exact_kw)
        for cls, qs in queries.items():
            for scope in ("plain", "namespace"):
                found = total = 0
                for i, q in enumerate(qs):
                    prefix, _ = scope_args(scope, i, args.users)
                    got, want = (
                        {h.key for h in s.search(prefix, query=q, limit=10)} for s in (store, exact)
                    )
                    found, total = found + len(got & want), total + len(want)
                rows.append([cls, scope, f"{found / total:.3f}" if total else "-"])
    print(f"\n### {title}: VaultStore recall@10 against its exact path\n")
    common.print_table(["words", "scope", "recall@10"], rows)


def report_buffers(title: str, results: dict[Row, dict[str, list[float]]]) -> None:
    print(f"\n### {title}: per search, warm: shared buffers (hit + read), server CPU\n")
    rows = []
    pct = common.percentile
    for (cls, scope, label), counts in results.items():
        if label != "explain":
            continue
        v, p = counts.get("vault", []), counts.get("postgres", [])
        cpu = results.get(("cpu", scope, cls), {})
        cv, cp = cpu.get("vault", [float("nan")])[0], cpu.get("postgres", [float("nan")])[0]
        rows.append(
            [
                cls,
                scope,
                f"{pct(v, 50):.0f} / {pct(v, 95):.0f}",
                f"{pct(p, 50):.0f} / {pct(p, 95):.0f}",
                common.ratio(pct(v, 95), pct(p, 95)),
                f"{cv:.2f} / {cp:.2f}",
                common.ratio(cv, cp),
            ]
        )
    common.print_table(
        [
            "words",
            "scope",
            "VaultStore buffers p50 / p95",
            "PostgresStore buffers p50 / p95",
            "p95 ratio",
            "server CPU ms, Vault / Postgres",
            "CPU ratio",
        ],
        rows,
    )


def report(title: str, results: dict[Row, dict[str, list[float]]]) -> None:
    print(f"\n### {title}\n")
    rows = []
    pct: Callable[[list[float], float], float] = common.percentile
    for (cls, scope, label), times in results.items():
        v, p = times.get("vault", []), times.get("postgres", [])
        rows.append(
            [
                cls,
                scope,
                label,
                f"{pct(v, 50):.2f} / {pct(v, 95):.2f}",
                f"{pct(p, 50):.2f} / {pct(p, 95):.2f}",
                f"**{common.ratio(pct(v, 95), pct(p, 95))}**"
                f" ({common.ratio(pct(v, 50), pct(p, 50))})",
            ]
        )
    common.print_table(
        [
            "words",
            "scope",
            "pass",
            "VaultStore p50 / p95 ms",
            "PostgresStore p50 / p95 ms",
            "p95 ratio (p50)",
        ],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--vocabularies", default="closed,zipf,real")
    parser.add_argument("--queries", type=int, default=60, help="queries per word class")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--passes", default="fresh,cold,warm")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="20k items, closed and zipf vocabularies, 20 queries, fresh and warm passes",
    )
    parser.add_argument("--scopes", default=",".join(SCOPES))
    parser.add_argument("--systems", default="vault,postgres")
    parser.add_argument("--data-dir", help="the embedded server's data dir (default: a temp dir)")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --data-dir: keep databases an earlier run loaded with as many items",
    )
    parser.add_argument(
        "--explain",
        type=int,
        default=10,
        metavar="N",
        help="also print each row's shared buffers per search (EXPLAIN of N searches each)",
    )
    parser.add_argument("--show-plans", action="store_true", help="with --explain")
    parser.add_argument(
        "--cpu-rounds",
        type=int,
        default=20,
        help="with --explain: runs of its searches timed by the server's CPU clock",
    )
    parser.add_argument(
        "--recall", action="store_true", help="also VaultStore's recall against its exact path"
    )
    args, leftover = parser.parse_known_args()
    if args.quick:
        args.sizes, args.vocabularies, args.queries = "20000", "closed,zipf", 20
        args.passes, args.explain = "fresh,warm", 5
    vault_kw = common.extra_options(leftover)
    data_dir = Path(args.data_dir).resolve() if args.data_dir else common.temp_server_dir()
    server = embedded_uri(data_dir)
    for size in map(int, args.sizes.split(",")):
        for vocabulary in args.vocabularies.split(","):
            print(f"== {vocabulary} vocabulary, {size} items", flush=True)
            results = run(server, data_dir, size, vocabulary, args, vault_kw)
            if results:
                report(f"{vocabulary} vocabulary, {size:,} items", results)


if __name__ == "__main__":
    main()
