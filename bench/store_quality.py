"""Retrieval quality of VaultStore against langgraph's PostgresStore, InMemoryStore and BM25.

Stores every turn of bench/data/conversations.json (value ``{"text", "speaker", "session"}``,
indexed on "text", one namespace per conversation), asks every question within its
conversation, and prints recall@5, recall@10 and MRR@10 per system, overall and per question
kind, with the VaultStore/PostgresStore ratio. All stores get the same all-MiniLM-L6-v2
vectors (computed once, cached in bench/out/) and share one throwaway embedded server.

    python bench/store_quality.py                              # all systems
    python bench/store_quality.py --systems vault,bm25 --text-weight 0.5 --show-misses vault
    python bench/store_quality.py --systems vault,postgres --embeddings onnx,torch

``--embeddings`` runs everything once per local embedding backend (default: the configured
one) and, given two, prints each system's recall with the first backend over the second's.

Any unknown ``--name VALUE`` option is passed to ``VaultStore.from_conn_string`` as
``name=VALUE`` (JSON-parsed), so ranking settings can be tuned from the command line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, PutOp
from rank_bm25 import BM25Okapi

sys.path.insert(0, str(Path(__file__).parent))

import common

ALL_SYSTEMS = ["vault", "postgres", "memory", "bm25"]
LABELS = {
    "vault": "VaultStore",
    "postgres": "PostgresStore",
    "memory": "InMemoryStore",
    "bm25": "BM25 (rank_bm25)",
}
K = 10
STOP_WORDS = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "she",
        "it",
        "its",
        "his",
        "her",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "why",
        "how",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "so",
        "as",
        "about",
        "into",
        "than",
        "then",
        "there",
    ]
)


def tokens(text: str) -> list[str]:
    """BM25 tokens: lower-case words without common stop words."""
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS]


class BM25Search:
    """One BM25Okapi index per conversation over the turn texts."""

    def __init__(self, data: dict[str, Any]) -> None:
        docs: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for cid, _session, turn in common.iter_turns(data):
            docs[cid].append((turn["id"], turn["text"]))
        self.ids = {cid: [i for i, _ in rows] for cid, rows in docs.items()}
        self.index = {cid: BM25Okapi([tokens(t) for _, t in rows]) for cid, rows in docs.items()}

    def search(self, cid: str, query: str, k: int) -> list[str]:
        scores = self.index[cid].get_scores(tokens(query))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
        return [self.ids[cid][i] for i in order]


def ingest(store: BaseStore, data: dict[str, Any], batch: int = 250) -> float:
    """Put every turn (batched); seconds taken."""
    ops = [
        PutOp(
            ("bench", cid),
            turn["id"],
            {"text": turn["text"], "speaker": turn["speaker"], "session": session},
            index=["text"],
        )
        for cid, session, turn in common.iter_turns(data)
    ]
    start = time.perf_counter()
    for i in range(0, len(ops), batch):
        store.batch(ops[i : i + batch])
    # After a bulk load, refresh the statistics VaultStore weighs keywords with (autovacuum
    # would do it within a minute in production). PostgresStore and the others have none.
    analyze = getattr(store, "analyze", None)
    if callable(analyze):
        analyze()
    return time.perf_counter() - start


def store_search(store: BaseStore, cid: str, query: str, k: int) -> list[str]:
    """Keys of the top ``k`` turns of conversation ``cid`` for ``query``."""
    return [item.key for item in store.search(("bench", cid), query=query, limit=k)]


def rank_of_evidence(found: list[str], evidence: list[str]) -> list[int | None]:
    """1-based rank of each evidence turn in ``found`` (None when absent)."""
    return [found.index(e) + 1 if e in found else None for e in evidence]


def metrics(results: list[dict[str, Any]]) -> dict[str, float]:
    """Mean recall@5, recall@10 (share of evidence turns found) and MRR@10 over questions."""

    def recall(r: dict[str, Any], k: int) -> float:
        return sum(1 for x in r["ranks"] if x is not None and x <= k) / len(r["ranks"])

    def rr(r: dict[str, Any]) -> float:
        found = [x for x in r["ranks"] if x is not None]
        return 1.0 / min(found) if found else 0.0

    n = len(results) or 1
    return {
        "r@5": sum(recall(r, 5) for r in results) / n,
        "r@10": sum(recall(r, 10) for r in results) / n,
        "mrr": sum(rr(r) for r in results) / n,
        "n": len(results),
    }


def run(
    args: argparse.Namespace, vault_kw: dict[str, Any], backend: str | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Every system on the data set, with vectors from the local model's ``backend``."""
    data = common.load_dataset()
    questions = data["questions"]
    turn_texts = [t["text"] for _, _, t in common.iter_turns(data)]
    q_texts = [q["question"] for q in questions]
    print(f"{len(turn_texts)} turns, {len(questions)} questions; embedding (cached)...", flush=True)
    turn_vectors = common.cached_vectors(turn_texts, "quality-turns", backend)
    emb = common.LookupEmbeddings(turn_texts, turn_vectors)
    emb.add(q_texts, common.cached_vectors(q_texts, "quality-questions", backend))
    index = {"dims": common.DIMS, "embed": emb, "fields": ["text"]}

    systems = args.systems
    db_systems = [s for s in systems if s in ("vault", "postgres", "memory")]
    # A database per backend: the stores' tables start empty in each run.
    uri = common.create_database(args.uri, f"quality_{backend or 'default'}") if args.uri else None
    out: dict[str, list[dict[str, Any]]] = {}
    with common.stores(db_systems, uri, index, vault_kw) as opened:
        searchers: dict[str, Callable[[str, str, int], list[str]]] = {}
        for name, store in opened.items():
            # InMemoryStore fails on a batch holding the same text twice (it embeds unique
            # texts but expects one vector per item), and greetings repeat: put one by one.
            secs = ingest(store, data, batch=1 if name == "memory" else 250)
            print(f"  {LABELS[name]}: ingested in {secs:.1f} s", flush=True)
            searchers[name] = partial(store_search, store)
        if uri is not None and not args.no_analyze:
            # Planner statistics, as autovacuum gives any database that has been up a while
            # (VaultStore reads word frequencies from them).
            common.analyze(uri)
        if "bm25" in systems:
            searchers["bm25"] = BM25Search(data).search
        for name in systems:
            rows = []
            for q in questions:
                found = searchers[name](q["conversation"], q["question"], K)
                rows.append({**q, "found": found, "ranks": rank_of_evidence(found, q["evidence"])})
            out[name] = rows
    return out


def report(out: dict[str, list[dict[str, Any]]], show_misses: list[str]) -> None:
    systems = list(out)
    overall = {s: metrics(out[s]) for s in systems}
    rows = [
        [
            LABELS[s],
            f"{overall[s]['r@5']:.3f}",
            f"{overall[s]['r@10']:.3f}",
            f"{overall[s]['mrr']:.3f}",
        ]
        for s in systems
    ]
    if "vault" in out and "postgres" in out:
        v, p = overall["vault"], overall["postgres"]
        rows.append(
            [
                "VaultStore / PostgresStore",
                common.ratio(v["r@5"], p["r@5"]),
                common.ratio(v["r@10"], p["r@10"]),
                common.ratio(v["mrr"], p["mrr"]),
            ]
        )
    n = overall[systems[0]]["n"]
    print(f"\nRetrieval quality over {n} questions (recall = share of answering turns found)\n")
    common.print_table(["system", "recall@5", "recall@10", "MRR@10"], rows)

    kinds = sorted({r["kind"] for r in out[systems[0]]})
    print("\nrecall@10 / MRR@10 per question kind\n")
    counts = {k: sum(1 for r in out[systems[0]] if r["kind"] == k) for k in kinds}
    kind_rows = []
    for s in systems:
        per = {k: metrics([r for r in out[s] if r["kind"] == k]) for k in kinds}
        kind_rows.append(
            [LABELS[s]] + [f"{per[k]['r@10']:.3f} / {per[k]['mrr']:.3f}" for k in kinds]
        )
    common.print_table(["system"] + [f"{k} ({counts[k]})" for k in kinds], kind_rows)

    for s in show_misses:
        misses = [r for r in out.get(s, []) if all(x is None for x in r["ranks"])]
        print(
            f"\n{LABELS.get(s, s)}: {len(misses)} questions with no answering turn in the top {K}"
        )
        for r in misses:
            print(f"  {r['id']} [{r['kind']}] {r['question']}  (answer: {r['answer']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--systems",
        default=",".join(ALL_SYSTEMS),
        help="comma-separated subset of " + ",".join(ALL_SYSTEMS),
    )
    parser.add_argument(
        "--show-misses", default="", help="comma-separated systems whose missed questions to list"
    )
    parser.add_argument("--json", type=Path, help="write per-question results here")
    parser.add_argument(
        "--embeddings",
        default="",
        help="comma-separated local embedding backends to run (onnx,torch); default: configured",
    )
    parser.add_argument(
        "--no-analyze", action="store_true", help="skip ANALYZE after ingest (cold statistics)"
    )
    args, leftover = parser.parse_known_args()
    vault_kw = common.extra_options(leftover)
    args.systems = [s for s in args.systems.split(",") if s]
    if "vault" in args.systems and not common.vault_available():
        print("VaultStore does not import yet; skipping it", file=sys.stderr)
        args.systems.remove("vault")
    unknown = set(args.systems) - set(ALL_SYSTEMS)
    if unknown:
        parser.error(f"unknown systems {sorted(unknown)}")
    if vault_kw:
        print(f"VaultStore options: {vault_kw}")
    backends = [b for b in args.embeddings.split(",") if b] or [None]
    # One server for every backend's run (each run creates its own databases).
    args.uri = common.temp_server_uri() if {"vault", "postgres"} & set(args.systems) else None
    runs = {}
    for backend in backends:
        if backend is not None:
            print(f"\n=== local embeddings: {backend} ===")
        out = run(args, vault_kw, backend)
        report(out, [s for s in args.show_misses.split(",") if s])
        runs[backend] = out
    if len(backends) == 2:
        compare_backends(runs, backends)
    if args.json:
        args.json.write_text(json.dumps(runs if len(backends) > 1 else out, indent=1))


def compare_backends(runs: dict[Any, dict[str, list[dict[str, Any]]]], backends: list[Any]) -> None:
    """Each system's recall with the first backend's vectors over the second's."""
    first, second = backends
    print(f"\nEmbedding backends: {first} / {second} (same data, same stores)\n")
    rows = []
    for s in runs[first]:
        a, b = metrics(runs[first][s]), metrics(runs[second][s])
        rows.append(
            [LABELS[s]]
            + [f"{a[m]:.3f} / {b[m]:.3f} = {a[m] / b[m]:.3f}x" for m in ("r@5", "r@10", "mrr")]
        )
    common.print_table(["system", "recall@5", "recall@10", "MRR@10"], rows)


if __name__ == "__main__":
    main()
