"""inject latency and cross-session recall of the memory nodes, on VaultStore and references.

1. **inject latency**: a user with N stored facts (default 1k and 10k, plus 10 standing
   instructions and 20 episodes); the inject node runs ``--iterations`` times with a user
   message (the store embeds it with the local model: the query embedding is included) and
   with no user message. Access stamps are written in the background and flushed between
   iterations, outside the timing, as they would be between chat turns. The databases are
   ANALYZEd after the bulk load (as autovacuum soon would). The same node runs on
   langgraph's PostgresStore (and InMemoryStore at 1k) as the reference, in the same run:
   the stores take turns sample by sample. ``--others N`` writes N facts of another user
   after them (the user's rows are then not the newest in the table). The query embedding
   is the default local model (``local_embeddings()``: the ONNX backend unless
   ``$LANGMEM_VAULT_EMBEDDINGS`` says otherwise); the load average is printed beside each
   row.
2. **recall across sessions**: 25 facts stated over five threads (through the full graph:
   inject, respond, extract with the offline extractor, reconcile), among ``--distractors``
   other stored facts; in a sixth thread 23 questions (paraphrases) ask about them. Share of
   the relevant stored facts that appear in inject's section, beside a plain top-5 store
   search by the question (what LangMem's manager/search tool retrieves, query_limit=5).

    python bench/nodes_bench.py                       # sizes 1000,10000; systems vault,postgres
    python bench/nodes_bench.py --sizes 1000 --iterations 50 --systems vault
    python bench/nodes_bench.py --sizes 10000 --systems vault,vault:16,postgres --others 10000

``vault:N`` is VaultStore set up with N partitions by tenant (``setup(partitions=N)``); the
users' namespaces, ``("memories", user)``, fit the store's tenant template.

Document vectors are computed once with the local model and cached in bench/out/.
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import sys
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore, PutOp

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

import common
import vocabulary as V

from langmem_vault.embeddings import local_embeddings
from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory import METRICS
from langmem_vault.memory._models import Episode, Instruction, SemanticFact
from langmem_vault.memory._sealing import ENV_KEY
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.memory._writes import memory_put
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel
from langmem_vault.privacy._redaction.policy import RedactionPolicy

LABELS = {"vault": "VaultStore", "postgres": "PostgresStore", "memory": "InMemoryStore"}
QUESTIONS_LATENCY = [
    "where do I live these days?",
    "what should I cook for my sister tonight?",
    "remind me what project I'm working on",
    "which airline seat do I like?",
    "what's my manager's name?",
    "any plans for the weekend hike?",
    "what instrument do I play?",
    "what am I allergic to?",
]


class LiveQueryEmbeddings(Embeddings):
    """Stored documents from precomputed vectors; queries (and unknown texts) embedded live."""

    def __init__(self, texts: list[str], vectors: np.ndarray) -> None:
        self.lookup = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors
        self.model = local_embeddings()
        self.query_ms: list[float] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self.lookup]
        live: dict[str, list[float]] = {}
        if missing:  # PostgresStore embeds its queries through embed_documents
            start = time.perf_counter()
            live = dict(zip(missing, self.model.embed_documents(missing), strict=True))
            self.query_ms.append((time.perf_counter() - start) * 1000)
        return [live[t] if t in live else self.vectors[self.lookup[t]].tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        start = time.perf_counter()
        vector = self.model.embed_query(text)
        self.query_ms.append((time.perf_counter() - start) * 1000)
        return vector


# --- synthetic memories -----------------------------------------------------------------------


def distractor_texts(n: int, seed: int = 7) -> list[str]:
    """``n`` distinct facts about other people, places and things (none about the targets)."""
    rng = random.Random(seed)
    people = V.FEMALE_NAMES + V.MALE_NAMES
    templates = [
        lambda: f"User's colleague {rng.choice(people)} moved to {rng.choice(V.CITIES)}",
        lambda: f"User read about {rng.choice(V.BOOKS)} in a newsletter",
        lambda: f"User's friend {rng.choice(people)} works at {rng.choice(V.COMPANIES)}",
        lambda: f"User once stayed at {rng.choice(V.HOTELS)} during a conference",
        lambda: f"User met {rng.choice(people)} at {rng.choice(V.RESTAURANTS)}",
        lambda: f"User's neighbour drives a {rng.choice(V.CARS)}",
        lambda: f"User has an appointment: {rng.choice(V.APPOINTMENTS)}",
        lambda: f"User's team uses codename {rng.choice(V.PROJECT_CODENAMES)} for a demo",
        lambda: f"User bought a gift: {rng.choice(V.GIFTS)}",
        lambda: f"User watched a race: {rng.choice(V.RACES)}",
    ]
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        text = rng.choice(templates)()
        if text in seen:
            text = f"{text} (note {len(out)})"
        seen.add(text)
        out.append(text)
    return out


def seed_user(
    store: BaseStore, user: str, texts: list[str], episodes: int = 20, private: int = 0
) -> None:
    """Store ``texts`` as facts of ``user`` plus 10 instructions and ``episodes`` episodes; the
    first ``private`` facts are private (stored by the write rule: unindexed)."""
    rng = random.Random(3)
    categories = ["personal", "relationship", "project", "company", "preference", "general"]
    ns = ("memories", user)
    ops: list[PutOp] = []
    for i, text in enumerate(texts):
        fact = SemanticFact(
            text=text,
            category=rng.choice(categories),  # type: ignore[arg-type]
            confidence=rng.uniform(0.8, 1.0),
            source="import",
            private=i < private,
        )
        ops.append(memory_put((*ns, "semantic"), f"f{i}", fact))
    for i in range(10):
        cond = "topic contains travel" if i % 3 == 0 else None
        ins = Instruction(text=f"Standing rule number {i}", priority=1 + i % 10, condition=cond)
        ops.append(PutOp((*ns, "instructions"), f"i{i}", ins.to_store(), index=False))
    for i in range(episodes):
        ep = Episode(summary=f"Conversation {i} about plans", importance=rng.random())
        ops.append(PutOp((*ns, "episodes"), f"e{i}", ep.to_store(), index=False))
    for start in range(0, len(ops), 500):
        store.batch(ops[start : start + 500])


def analyze(db_uri: str | None) -> None:
    """Refresh planner statistics after the bulk load, as autovacuum soon would (without it
    both Postgres stores pick slow plans for the first minutes after a load)."""
    if db_uri is None:
        return
    import psycopg

    with psycopg.connect(db_uri, autocommit=True) as conn:
        conn.execute("ANALYZE")


def time_injects(
    stores: dict[str, BaseStore],
    user: str,
    iterations: int,
    with_message: bool,
    emb: LiveQueryEmbeddings,
) -> dict[str, tuple[list[float], list[float]]]:
    """Milliseconds per inject call on each store, and the same minus the query embedding's
    time (background stamps are flushed outside the timing). The stores take turns sample
    by sample, so a busy machine slows them alike."""
    config = {"configurable": {"user_id": user, "thread_id": "bench"}}
    nodes = {
        name: create_inject_node(store=s, emit_events=False).node for name, s in stores.items()
    }
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in stores}
    for i in range(iterations + 5):
        q = QUESTIONS_LATENCY[i % len(QUESTIONS_LATENCY)] + f" ({i})"
        state = {"messages": [HumanMessage(q)] if with_message else []}
        for name, impl in nodes.items():
            before = len(emb.query_ms)
            start = time.perf_counter()
            impl.invoke(state, config)
            elapsed = (time.perf_counter() - start) * 1000
            embedding = sum(emb.query_ms[before:])
            impl.recorder.flush()
            if i >= 5:  # warm-up
                out[name][0].append(elapsed)
                out[name][1].append(elapsed - embedding)
    return out


# --- recall across sessions --------------------------------------------------------------------

THREADS = [
    [
        "My name is Dana.",
        "I live in Rotterdam.",
        "I work at Blue Heron Labs.",
        "My sister is called Priya.",
        "I'm allergic to peanuts.",
    ],
    [
        "My favourite food is ramen.",
        "I speak Portuguese.",
        "I'm working on a robot lawnmower called Falcon.",
        "My dog is called Biscuit.",
        "I prefer aisle seats on long flights.",
    ],
    [
        "I work as a data engineer.",
        "My favourite band is Radiohead.",
        "I decided to run the Lisbon marathon.",
        "I hate cilantro.",
        "My brother Tomas lives in Oslo.",
    ],
    [
        "I love playing the cello.",
        "My favourite book is Dune.",
        "I'm allergic to cats.",
        "My manager is called Helga.",
        "I'm building a treehouse for my kids.",
    ],
    [
        "I speak Japanese.",
        "My favourite drink is oolong tea.",
        "I love hiking in the Alps.",
        "My wife is called Ines.",
        "I decided to learn woodworking.",
    ],
]
# question -> words that identify the relevant stored facts
QUESTIONS = [
    ("What's my name again?", ["Dana"]),
    ("Which city is my home?", ["Rotterdam"]),
    ("Where am I employed?", ["Blue Heron"]),
    ("What's my sister's name?", ["Priya"]),
    ("Do I have any allergies?", ["peanuts", "cats"]),
    ("What dish do I like best?", ["ramen"]),
    ("Which languages can I speak?", ["Portuguese", "Japanese"]),
    ("What is the robot project I'm on?", ["Falcon"]),
    ("What's the name of my dog?", ["Biscuit"]),
    ("Where do I like to sit on planes?", ["aisle"]),
    ("What's my job?", ["data engineer"]),
    ("Which music group do I like?", ["Radiohead"]),
    ("Which race am I training for?", ["marathon"]),
    ("Which herb do I dislike?", ["cilantro"]),
    ("Where does my brother live?", ["Tomas"]),
    ("Which instrument do I play?", ["cello"]),
    ("What's my favourite novel?", ["Dune"]),
    ("Who is my boss?", ["Helga"]),
    ("What am I building for the children?", ["treehouse"]),
    ("What do I like to drink?", ["oolong"]),
    ("What do I do outdoors for fun?", ["hiking"]),
    ("What's my wife's name?", ["Ines"]),
    ("What new craft did I decide to learn?", ["woodworking"]),
]


def recall_run(
    store: BaseStore,
    distractors: int,
    db_uri: str | None = None,
    verbose: bool = True,
    policy: RedactionPolicy | None = None,
) -> dict[str, int]:
    """Counts: relevant active facts, found by inject / by a top-5 search; relevant pending
    facts, found by inject; pending facts injected for another question; private facts."""
    user = f"recall-{uuid.uuid4().hex[:6]}"
    seed_user(store, user, distractor_texts(distractors, seed=11))
    analyze(db_uri)
    graph = build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=OfflineExtractor(),
        summarizer=None,
        compact=False,
        extract_options=ExtractOptions(every_n_messages=2, redaction=policy or RedactionPolicy()),
    )
    for t, lines in enumerate(THREADS):
        cfg = {"configurable": {"user_id": user, "thread_id": f"t{t}"}}
        for line in lines:
            graph.invoke({"messages": [HumanMessage(line)]}, cfg)
    # relevant = what extraction stored from the five threads (distractors are "import")
    ns = ("memories", user, "semantic")
    stored = store.search(ns, filter={"source": "conversation"}, limit=1000)
    vault = MemoryVault(store, user_id=user)  # opens sealed facts when a key is set
    texts = {i.key: vault.get(i.key).value.text for i in stored}  # type: ignore[union-attr]
    status = {i.key: i.value.get("status") for i in stored}
    facts = {texts[k] for k in texts if status[k] == "active"}
    pending = {texts[k] for k in texts if status[k] == "pending_confirmation"}
    private = sum(1 for i in stored if i.value.get("private"))
    inject = create_inject_node(store=store, emit_events=False, record_access=False).node
    cfg = {"configurable": {"user_id": user, "thread_id": "t6"}}
    stats = dict.fromkeys(["relevant", "found", "top5", "pending", "pending_found", "wrong"], 0)
    for question, words in QUESTIONS:

        def about(f: str, words: list[str] = words) -> bool:
            return any(w.lower() in f.lower() for w in words)

        targets = [f for f in facts if about(f)]
        waiting = [f for f in pending if about(f)]
        context = inject.invoke({"messages": [HumanMessage(question)]}, cfg)["memory_context"]
        top5 = {i.value["text"] for i in store.search(ns, query=question, limit=5)}
        if verbose:
            for f in targets:
                if f not in context:
                    print(f"  missed: {question!r} -> {f!r}", flush=True)
        stats["relevant"] += len(targets)
        stats["found"] += sum(1 for f in targets if f in context)
        stats["top5"] += sum(1 for f in targets if f in top5)
        # A pending fact is injected as "(unconfirmed) <text>" among the facts; its text may
        # also appear in an episode summary, which is not the fact being injected.
        shown = {f for f in pending if f"(unconfirmed) {f}" in context}
        stats["pending"] += len(waiting)
        stats["pending_found"] += sum(1 for f in waiting if f in shown)
        # a pending fact injected for a question it does not answer: unconfirmed noise
        stats["wrong"] += len(shown - set(waiting))
    stats["private"] = private
    return stats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--systems", default="vault,postgres")
    parser.add_argument("--distractors", type=int, default=1000)
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--skip-recall", action="store_true")
    parser.add_argument("--episodes", type=int, default=20, help="episodes per user")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="recall with RedactionPolicy.strict() and a key: every name and place private, sealed",
    )
    parser.add_argument(
        "--others",
        type=int,
        default=0,
        help="facts of another user, written after the latency user's (its rows are then "
        "not the newest in the table, as on a shared server)",
    )
    parser.add_argument(
        "--private",
        default="0",
        help="comma-separated counts of private facts among the latency user's facts",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    privates = [int(p) for p in args.private.split(",") if p]
    systems = [s for s in args.systems.split(",") if s]
    texts = distractor_texts(max([*sizes, args.distractors]))
    recall_texts = distractor_texts(args.distractors, seed=11)
    all_texts = list(dict.fromkeys(texts + recall_texts))
    vectors = common.cached_vectors(all_texts, "nodes-facts")
    emb = LiveQueryEmbeddings(all_texts, vectors)
    index = {"dims": 384, "embed": emb, "fields": ["text"]}
    uri = common.temp_server_uri() if any(s != "memory" for s in systems) else None

    rows: list[list[Any]] = []
    if not args.skip_latency:
        for size, private in ((s, p) for s in sizes for p in privates):
            with ExitStack() as stack:
                stores: dict[str, BaseStore] = {}
                user = f"u{size}"
                for system in systems:
                    if system == "memory" and size > 1000:
                        continue
                    name = f"n_{system.replace(':', 'p')}_{size}_{private}"
                    db = common.create_database(uri, name) if uri and system != "memory" else None
                    store = common.open_store(system, stack, db, index, {})
                    seed_user(store, user, texts[:size], args.episodes, private=private)
                    if args.others:  # same texts (their vectors are cached), another user
                        seed_user(store, "other", texts[: args.others], args.episodes)
                    analyze(db)
                    stores[system] = store
                load = os.getloadavg()[0]
                with_msg = time_injects(stores, user, args.iterations, True, emb)
                without = time_injects(stores, user, args.iterations, False, emb)
                # the turns' buffered accounting writes, before the stores close (VaultStore
                # flushes its own on close; PostgresStore would drop them)
                METRICS.flush()
            for system in stores:
                timings, net = with_msg[system]
                rows.append(
                    [
                        f"{size:,}",
                        f"{args.others:,}",
                        private,
                        common.system_label(system, LABELS),
                        f"{common.percentile(timings, 50):.1f}",
                        f"{common.percentile(timings, 95):.1f}",
                        f"{common.percentile(net, 50):.1f}",
                        f"{common.percentile(net, 95):.1f}",
                        f"{common.percentile(without[system][0], 50):.1f}",
                        f"{common.percentile(without[system][0], 95):.1f}",
                        f"{load:.1f}-{os.getloadavg()[0]:.1f}",
                    ]
                )
                print(rows[-1], flush=True)
        print("\ninject latency, ms (with a user message: includes the local query embedding)")
        common.print_table(
            [
                "facts/user",
                "other user's facts",
                "private",
                "store",
                "msg p50",
                "msg p95",
                "msg excl. embed p50",
                "msg excl. embed p95",
                "no msg p50",
                "no msg p95",
                "load avg",
            ],
            rows,
        )

    if args.skip_recall:
        return
    recall_rows = []
    policy = RedactionPolicy.strict() if args.strict else None
    if args.strict:  # sealed at rest, opened by inject with the same key
        os.environ[ENV_KEY] = base64.b64encode(os.urandom(32)).decode()
    for system in systems:
        with ExitStack() as stack:
            db = (
                common.create_database(uri, f"r_{system.replace(':', 'p')}")
                if uri and system != "memory"
                else None
            )
            store = common.open_store(system, stack, db, index, {})
            r = recall_run(store, args.distractors, db, policy=policy)
            METRICS.flush()
        recall_rows.append(
            [
                common.system_label(system, LABELS),
                args.distractors,
                len(QUESTIONS),
                r["relevant"],
                r["private"],
                f"{r['found'] / max(r['relevant'], 1):.1%}",
                f"{r['top5'] / max(r['relevant'], 1):.1%}",
                f"{r['pending_found']}/{r['pending']}",
                r["wrong"],
            ]
        )
    print("\nrecall across sessions (facts from 5 threads, asked in a 6th)")
    common.print_table(
        [
            "store",
            "distractors",
            "questions",
            "relevant active facts",
            "private (of all told)",
            "inject",
            "top-5 search",
            "pending injected",
            "pending off-topic",
        ],
        recall_rows,
    )


if __name__ == "__main__":
    main()
