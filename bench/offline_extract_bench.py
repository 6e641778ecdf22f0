"""Offline extraction quality: what the no-model extractor keeps of plain first-person
statements, and what the next thread's memory then answers.

Data: bench/data/offline/self_statements.toml, 70 statements about occupation, family, health,
pets, likes, places and plans, each with the words a kept memory must hold and a question.

- **alone**: each statement as its own message to ``OfflineExtractor``; kept when a proposed
  fact holds every expected word.
- **next thread**: the set split into ten people (person k says the k-th statement of each
  category), each telling theirs in a varied conversation (two threads, one to three
  statements a message, among greetings, small talk and questions) through
  ``build_memory_graph`` on VaultStore, with the default privacy (PII redaction, consent);
  then each question asked in a new thread: answered when inject puts a fact holding every
  expected word in front of the model. Once with the default consent (sensitive facts not
  allowed: health facts are dropped) and once with ``allow_sensitive_facts=True``.

The reference in the same run is the extractor without its verbatim fallback
(``OfflineExtractor(keep_sentences=False)``: the statement patterns alone).

    python bench/offline_extract_bench.py
    python bench/offline_extract_bench.py --misses      # list what was not kept or answered
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import tomllib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "offline" / "self_statements.toml"
CATEGORIES = ("occupation", "family", "health", "pets", "likes", "places", "plans")
OPENERS = ["Hi!", "Morning.", "Quick update.", "Anyway.", "Long day, honestly.", "Oh, one more."]
CLOSERS = ["What do you think?", "Thanks!", "Any tips?", "Can you keep that in mind?", "Haha."]
USER = "dana"


def load_statements(path: Path = DATA) -> list[dict[str, Any]]:
    """The statements of the set, in file order."""
    rows: list[dict[str, Any]] = tomllib.loads(path.read_text("utf-8"))["statement"]
    return rows


def holds(text: str, expect: Sequence[str]) -> bool:
    """Whether ``text`` holds every expected word (case-insensitive)."""
    folded = text.casefold()
    return all(word.casefold() in folded for word in expect)


def personas(statements: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The set as ten people: person k says the k-th statement of each category (one job,
    one home town... each, as a real user has)."""
    by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in statements:
        by_category[s["category"]].append(s)
    count = min(len(v) for v in by_category.values())
    return [[by_category[c][k] for c in by_category] for k in range(count)]


def scenario(statements: Sequence[dict[str, Any]], seed: int = 7) -> list[list[str]]:
    """One person's statements as a conversation: two threads of user messages, each one to
    three statements (shuffled, seeded) with small talk around some of them."""
    rng = random.Random(seed)
    order = list(statements)
    rng.shuffle(order)
    messages: list[str] = []
    i = 0
    while i < len(order):
        n = rng.choice((1, 2, 3))
        parts = [s["say"] for s in order[i : i + n]]
        i += n
        if rng.random() < 0.4:
            parts.insert(0, rng.choice(OPENERS))
        if rng.random() < 0.4:
            parts.append(rng.choice(CLOSERS))
        messages.append(" ".join(parts))
    half = -(-len(messages) // 2)
    return [messages[:half], messages[half:]]


def kept_alone(statements: Sequence[dict[str, Any]], extractor: Any) -> list[bool]:
    """Per statement: told alone, does a proposed fact hold every expected word?"""
    from langchain_core.messages import HumanMessage

    out = []
    for s in statements:
        facts = extractor.extract([HumanMessage(s["say"])], []).facts
        out.append(any(holds(f.text, s["expect"]) for f in facts))
    return out


def memory_graph(store: Any, extractor: Any, every_n: int) -> Any:
    """The memory graph a notebook user builds (``every_n`` messages per extraction)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from langmem_vault import ExtractOptions, build_memory_graph
    from langmem_vault.offline._model import RecallChatModel

    return build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=extractor,
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=every_n),
    )


def tell(graph: Any, user: str, threads: Sequence[Sequence[str]]) -> None:
    """Send every message of every thread through the memory graph, as ``user``."""
    from langchain_core.messages import HumanMessage

    for t, messages in enumerate(threads):
        config = {"configurable": {"thread_id": f"{user}-day{t}", "user_id": user}}
        for text in messages:
            graph.invoke({"messages": [HumanMessage(text)]}, config)


def answered(graph: Any, user: str, statements: Sequence[dict[str, Any]]) -> list[bool]:
    """Per statement: asked in a new thread of the graph, does its inject show a fact with
    every expected word?"""
    from langchain_core.messages import HumanMessage

    out = []
    for i, s in enumerate(statements):
        config = {"configurable": {"thread_id": f"{user}-ask{i}", "user_id": user}}
        state = graph.invoke({"messages": [HumanMessage(s["ask"])]}, config)
        facts = [m["text"] for m in state["memory_items"] if m["kind"] == "fact"]
        out.append(any(holds(text, s["expect"]) for text in facts))
    return out


def run_next_thread(
    store: Any,
    label: str,
    statements: Sequence[dict[str, Any]],
    extractor: Any,
    sensitive: bool,
    every_n: int = 4,
) -> list[bool]:
    """Each person tells their statements (consent for sensitive facts as given), then is
    asked about each in new threads; answers in the order of ``statements``."""
    from langmem_vault.privacy import set_consent

    found: dict[str, bool] = {}
    graph = memory_graph(store, extractor, every_n)
    for k, said in enumerate(personas(statements)):
        user = f"{label}-person{k}"
        if sensitive:
            set_consent(store, user, allow_sensitive_facts=True)
        tell(graph, user, scenario(said, seed=k))
        for s, hit in zip(said, answered(graph, user, said), strict=True):
            found[s["say"]] = hit
    return [found[s["say"]] for s in statements]


def per_category(statements: Sequence[dict[str, Any]], hits: Sequence[bool]) -> dict[str, str]:
    """ "kept/total" per category and overall."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s, hit in zip(statements, hits, strict=True):
        for key in (s["category"], "overall"):
            counts[key][0] += int(hit)
            counts[key][1] += 1
    return {k: f"{100 * a / b:.0f}% ({a}/{b})" for k, (a, b) in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list statements not kept")
    parser.add_argument(
        "--every-n",
        type=int,
        default=4,
        help="messages per extraction (4: the library default, so a chat's last messages are "
        "a tail the next thread catches up)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    import common

    from langmem_vault.embeddings import local_embeddings
    from langmem_vault.offline._extractor import OfflineExtractor
    from langmem_vault.store import VaultStore

    print(f"load average at start: {os.getloadavg()}")
    statements = load_statements()
    systems = {
        "patterns + verbatim fallback": OfflineExtractor(),
        "patterns only (reference)": OfflineExtractor(keep_sentences=False),
    }
    index = {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}
    uri = common.temp_server_uri()
    columns: dict[str, list[bool]] = {}
    t0 = time.perf_counter()
    for label, extractor in systems.items():
        columns[f"{label}: alone"] = kept_alone(statements, extractor)
        for sensitive in (False, True):
            db = common.create_database(uri, f"offline_{len(columns)}")
            with VaultStore.from_conn_string(db, index=index) as store:  # type: ignore[arg-type]
                store.setup()
                hits = run_next_thread(store, USER, statements, extractor, sensitive, args.every_n)
            consent = "sensitive allowed" if sensitive else "default consent"
            columns[f"{label}: next thread, {consent}"] = hits
    print(
        f"\n{len(statements)} statements; {time.perf_counter() - t0:.0f} s; load average "
        f"{os.getloadavg()}\n"
    )
    tables = {name: per_category(statements, hits) for name, hits in columns.items()}
    keys = [*CATEGORIES, "overall"]
    print("| measure | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for name, table in tables.items():
        print(f"| {name} | " + " | ".join(table[k] for k in keys) + " |")
    if args.misses:
        for name, hits in columns.items():
            print(f"\n## {name}: not kept")
            for s, hit in zip(statements, hits, strict=True):
                if not hit:
                    print(f"  [{s['category']}] {s['say']}  (asked: {s['ask']})")


if __name__ == "__main__":
    main()
