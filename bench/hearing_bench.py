"""Hearing: what the assistant keeps of what people tell it about themselves, the way they chat.

Data: bench/data/hearing/introductions.toml, 20 users, 99 messages, 205 facts (names, age,
pronouns, home, work, family, pets, health, diet, languages, hobbies, vehicles, favourites),
many said in one breath ("I'm Dana, I live in Porto, I'm allergic to peanuts, my daughter
is Rita"), in lower case, with typos, emoji and "lol".

Each user first has 300 unrelated memories of their own (trips, work, friends, errands: none
holds a word the questions look for), then tells their messages in one thread through
``build_memory_graph`` (the offline extractor and the offline answering model, VaultStore,
the default privacy: PII redaction and consent), and then is asked about every fact, each
question in a new thread. A fact counts as heard when the block inject puts in front of the
model holds a fact with all its expected words. Every injected memory must be the asking
user's own: a memory of another user shown is a leak, counted and reported.

    python bench/hearing_bench.py                # the table by category
    python bench/hearing_bench.py --misses       # and each fact not heard
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

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "data"))

from offline_extract_bench import holds, memory_graph

DATA = Path(__file__).parent / "data" / "hearing" / "introductions.toml"
NOISE_PER_USER = 300

# Unrelated memories: what else a user's assistant has kept over months of chats.
_NOISE = [
    "User asked for a {dish} recipe for a dinner party",
    "User is planning a weekend trip to {city} in {month}",
    "User's friend {name} is training for the {race}",
    "User read {book} and found the ending slow",
    "User's project {codename} has a demo on {weekday}",
    "User has a {appointment} on a {weekday} in {month}",
    "User wants ideas for a gift for {name}'s birthday",
    "User compared prices for a new {gadget}",
    "User's colleague {name} moved to {city}",
    "User booked a table at {restaurant} for {weekday}",
    "User is renovating the {room} and picked {colour} tiles",
    "User asked how to fix a leaking {fixture}",
    "User's neighbour {name} has a {pet} called {petname}",
    "User watched a documentary about {topic}",
    "User asked for tips on {topic} before a meeting in {city}",
]
_FILL = {
    "dish": ["lasagne", "pad thai", "paella", "shakshuka", "ramen", "moussaka", "tacos", "curry"],
    "room": ["kitchen", "bathroom", "hallway", "attic", "garage"],
    "colour": ["terracotta", "navy", "sage", "ochre", "white", "charcoal"],
    "fixture": ["tap", "shower head", "radiator valve", "toilet cistern", "garden hose"],
    "gadget": ["laptop", "phone", "robot vacuum", "e-reader", "coffee machine", "monitor"],
    "topic": [
        "deep sea creatures",
        "negotiation",
        "the history of tea",
        "public speaking",
        "volcanoes",
        "urban planning",
        "sleep science",
        "ancient Rome",
    ],
}


def load_users(path: Path = DATA) -> list[dict[str, Any]]:
    """The users of the set, in file order."""
    users: list[dict[str, Any]] = tomllib.loads(path.read_text("utf-8"))["user"]
    return users


def noise(user: dict[str, Any], count: int = NOISE_PER_USER, seed: int = 0) -> list[str]:
    """``count`` distinct unrelated memories for ``user``: none holds an expected word."""
    import vocabulary as V

    fill = {
        "city": V.CITIES,
        "month": V.MONTHS,
        "name": V.FEMALE_NAMES + V.MALE_NAMES,
        "race": V.RACES,
        "book": V.BOOKS,
        "codename": V.PROJECT_CODENAMES,
        "weekday": V.WEEKDAYS,
        "appointment": V.APPOINTMENTS,
        "restaurant": [r[1] for r in V.RESTAURANTS],
        "pet": list(V.PETS),
        "petname": V.PET_NAMES,
        **_FILL,
    }
    banned = [w.casefold() for fact in user["fact"] for w in fact["e"]]
    rng = random.Random(f"{user['id']}-{seed}")
    out: dict[str, None] = {}
    while len(out) < count:
        template = rng.choice(_NOISE)
        text = template.format(**{k: _text(rng.choice(v)) for k, v in fill.items()})
        if not any(w in text.casefold() for w in banned):
            out[text] = None
    return list(out)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value[0] if value else "")


def run(store: Any, users: Sequence[dict[str, Any]], extractor: Any) -> dict[str, Any]:
    """Tell, then ask, every user; per fact whether it was heard, and the leaks."""
    from langchain_core.messages import HumanMessage

    from langmem_vault.memory._vault import MemoryVault

    graph = memory_graph(store, extractor, every_n=4)
    heard: list[tuple[str, str, bool]] = []
    misses: list[str] = []
    for user in users:
        vault = MemoryVault(store, user_id=user["id"])
        for text in noise(user):
            vault.remember(text, category="general", source="conversation", confidence=0.9)
        config = {"configurable": {"thread_id": f"{user['id']}-chat", "user_id": user["id"]}}
        for text in user["messages"]:
            graph.invoke({"messages": [HumanMessage(text)]}, config)
    shown: list[tuple[str, str, str]] = []  # (asking user, key, text) of every injected fact
    for user in users:
        for i, fact in enumerate(user["fact"]):
            config = {"configurable": {"thread_id": f"{user['id']}-ask{i}", "user_id": user["id"]}}
            state = graph.invoke({"messages": [HumanMessage(fact["q"])]}, config)
            items = [m for m in state.get("memory_items") or [] if m["kind"] == "fact"]
            shown += [(user["id"], m["key"], m["text"]) for m in items if m.get("key")]
            hit = any(holds(m["text"], fact["e"]) for m in items)
            heard.append((user["id"], fact["c"], hit))
            if not hit:
                misses.append(f"  [{user['id']}/{fact['c']}] {fact['e']} <- {fact['q']}")
    # Owners read at the end: a tail extracted by a question's catch-up is the asker's too.
    owner = {
        m.key: user["id"]
        for user in users
        for m in MemoryVault(store, user_id=user["id"]).list(status=None, limit=5000)
    }
    leaked = [(asker, text) for asker, key, text in shown if owner.get(key, asker) != asker]
    misses += [f"  LEAK to {asker}: {text}" for asker, text in leaked]
    leaks = len(leaked)
    return {"heard": heard, "misses": misses, "leaks": leaks}


def table(heard: Sequence[tuple[str, str, bool]]) -> list[str]:
    """The markdown rows: share heard per category and overall."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for _, category, hit in heard:
        for key in (category, "overall"):
            counts[key][0] += int(hit)
            counts[key][1] += 1
    keys = [*sorted(k for k in counts if k != "overall"), "overall"]
    rows = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    rows.append(
        "| "
        + " | ".join(
            f"{100 * counts[k][0] / counts[k][1]:.0f}% ({counts[k][0]}/{counts[k][1]})"
            for k in keys
        )
        + " |"
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list the facts not heard")
    parser.add_argument("--data", type=Path, default=DATA, help="the set (TOML)")
    args = parser.parse_args()
    import common

    from langmem_vault.embeddings import local_embeddings
    from langmem_vault.offline._extractor import OfflineExtractor
    from langmem_vault.store import VaultStore

    print(f"load average at start: {os.getloadavg()}")
    users = load_users(args.data)
    facts = sum(len(u["fact"]) for u in users)
    messages = sum(len(u["messages"]) for u in users)
    index = {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}
    db = common.create_database(common.temp_server_uri(), "hearing")
    t0 = time.perf_counter()
    with VaultStore.from_conn_string(db, index=index) as store:  # type: ignore[arg-type]
        store.setup()
        out = run(store, users, OfflineExtractor())
    print(
        f"\n{len(users)} users, {messages} messages, {facts} facts, {NOISE_PER_USER} unrelated "
        f"memories per user; {time.perf_counter() - t0:.0f} s\n"
    )
    print("\n".join(table(out["heard"])))
    print(f"\nmemories of another user shown: {out['leaks']}")
    if args.misses:
        print("\nnot heard:")
        print("\n".join(out["misses"]))


if __name__ == "__main__":
    main()
