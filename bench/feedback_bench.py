"""Does utility feedback help? A simulated week of turns, with feedback and without.

One user has, per topic, a few **useful** facts (what the user needs when they ask about the
topic) and more **distractors** (true but useless trivia on the same topic, so search ranks
them just as high). Each turn the user asks about a topic; inject (``max_facts=3``) picks the
memory block and a scripted model answers, citing the useful memories it was shown (it knows
which those are: the simulated user's judgement, never visible to the ranking).

- **with feedback**: respond records citations (and the uncited facts it was shown); in
  a fifth of the turns the user also rates one shown memory (``memory_feedback``: thumbs up
  on a useful one, down on a distractor); the consolidation cycle runs after each day;
- **without feedback**: the same turns, questions and cycles, no citations recorded, no
  ratings.

Printed: the share of useful memories in the injected block (all turns, and the last day),
for both runs, and the ratio, on the real VaultStore (embedded Postgres, local embeddings).

    python bench/feedback_bench.py                 # 7 days x 20 turns, 12 topics
    python bench/feedback_bench.py --days 7 --turns 20 --seed 3
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore

sys.path.insert(0, str(Path(__file__).parent))

import common

from langmem_vault.embeddings import local_embeddings
from langmem_vault.graphs._state import MemoryState
from langmem_vault.memory._lifecycle.consolidation import consolidate
from langmem_vault.memory._lifecycle.feedback import memory_feedback
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.injected import INJECTED_KEY
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.nodes._respond import create_respond_node
from langmem_vault.store import VaultStore

# topic: (useful facts, distractors, questions)
TOPICS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "coffee": (
        ["Drinks oat-milk flat whites", "Avoids caffeine after 2 pm"],
        [
            "Once saw a coffee museum in Vienna",
            "A coffee shop near the old office closed in 2019",
            "Read an article about coffee prices",
        ],
        ["What coffee should I order for me?", "Can I have a coffee now at 4 pm?"],
    ),
    "travel": (
        ["Prefers aisle seats on flights", "Has a Star Alliance gold card"],
        [
            "Watched a travel documentary about Peru",
            "A colleague travels to Japan every year",
            "Once lost a travel adaptor in a hotel",
        ],
        ["Book my flight to Berlin", "Which seat do I like when I travel by plane?"],
    ),
    "running": (
        ["Runs 10 km every Sunday morning", "Is training for the Paris half marathon"],
        [
            "Running shoes were on sale last winter",
            "A neighbour started running recently",
            "Watched the Olympic running finals on TV",
        ],
        ["Plan my running week", "What am I training for in running?"],
    ),
    "diet": (
        ["Is vegetarian", "Is allergic to peanuts"],
        [
            "Read a diet book a friend recommended",
            "A cousin follows a keto diet",
            "Saw a documentary about diet trends",
        ],
        ["Suggest a dinner recipe for my diet", "What should I avoid eating?"],
    ),
    "work": (
        ["Works as a data engineer at Acme", "Has stand-up meetings at 9:30"],
        [
            "A former coworker moved to Canada",
            "The office kitchen was repainted last year",
            "Read a blog post about remote work",
        ],
        ["When is my first meeting at work?", "Draft a note about my work role"],
    ),
    "music": (
        ["Listens to jazz while working", "Plays the piano at an intermediate level"],
        [
            "A music festival happened in town last summer",
            "A friend dislikes jazz music",
            "Saw an old music video on the bus",
        ],
        ["Recommend music for my focus time", "Which piano pieces suit my level?"],
    ),
    "family": (
        ["Has a daughter named Mia who is 7", "Visits parents in Lyon monthly"],
        [
            "A neighbour's family moved to Spain",
            "Watched a film about a large family",
            "A colleague's family owns a bakery",
        ],
        ["Plan a weekend with my family", "How old is my daughter?"],
    ),
    "reading": (
        ["Reads science fiction before bed", "Is in a book club on Thursdays"],
        [
            "The reading room of the library was renovated",
            "A friend reads only poetry",
            "Saw a list of reading challenges online",
        ],
        ["Suggest a book for my reading tonight", "When is my reading club?"],
    ),
}


class OracleModel(BaseChatModel):
    """Answers by citing the useful memories it was shown (the simulated judgement)."""

    useful: frozenset[str] = frozenset()

    @property
    def _llm_type(self) -> str:
        return "oracle"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        shown: list[dict[str, Any]] = []
        for m in messages:
            if isinstance(m, SystemMessage):
                shown += m.additional_kwargs.get(INJECTED_KEY, [])
        cites = [f"[{m['alias']}]" for m in shown if m.get("text") in self.useful]
        text = "Here you go " + " ".join(cites) if cites else "I am not sure."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def _seed(store: BaseStore, user: str) -> tuple[dict[str, str], set[str]]:
    vault = MemoryVault(store, user_id=user)
    keys: dict[str, str] = {}
    useful: set[str] = set()
    for topic, (good, bad, _) in TOPICS.items():
        for text in [*good, *bad]:
            # Conversation facts, all working layer and neutral utility at the start.
            fact = vault.remember(text, category="preference", source="conversation", tags=[topic])
            keys[fact.key] = text
            if text in good:
                useful.add(fact.key)
    return keys, useful


def run(
    store: BaseStore, *, feedback: bool, days: int, turns: int, seed: int
) -> tuple[float, float]:
    user = f"u-{uuid.uuid4().hex[:8]}"
    keys, useful = _seed(store, user)
    useful_texts = frozenset(keys[k] for k in useful)
    recorder = AccessRecorder(inline=True)
    builder = StateGraph(MemoryState)
    builder.add_node("inject", create_inject_node(max_facts=3, record_access=recorder))
    respond = create_respond_node(
        OracleModel(useful=useful_texts), record_utility=recorder if feedback else False
    )
    builder.add_node("respond", respond)
    builder.add_edge(START, "inject").add_edge("inject", "respond")
    graph = builder.compile(store=store)
    rng = random.Random(seed)
    shares: list[float] = []
    last_day: list[float] = []
    for day in range(days):
        for turn in range(turns):
            topic = rng.choice(list(TOPICS))
            question = rng.choice(TOPICS[topic][2])
            config = {"configurable": {"user_id": user, "thread_id": f"d{day}t{turn}"}}
            out = graph.invoke({"messages": [HumanMessage(question)]}, config)
            shown = [k for a, k in out["memory_refs"].items() if a.startswith("M")]
            share = sum(k in useful for k in shown) / len(shown) if shown else 0.0
            shares.append(share)
            if day == days - 1:
                last_day.append(share)
            rate = rng.random() < 0.2  # drawn in both runs: the same questions follow
            pick = rng.choice(shown) if shown else None
            if feedback and rate and pick is not None:
                memory_feedback(store, pick, "up" if pick in useful else "down", user_id=user)
        consolidate(store, user_id=user)  # the daily cycle, in both runs
    return sum(shares) / len(shares), sum(last_day) / len(last_day)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--turns", type=int, default=20, help="turns per day")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    uri = common.temp_server_uri()
    index = {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}
    results = {}
    for feedback in (False, True):
        schema = f"fb_{'on' if feedback else 'off'}_{os.getpid()}"
        with VaultStore.from_conn_string(uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
            store.setup()
            results[feedback] = run(
                store, feedback=feedback, days=args.days, turns=args.turns, seed=args.seed
            )
    off, on = results[False], results[True]
    print(f"useful share of the injected block, {args.days} days x {args.turns} turns, max_facts=3")
    print(f"{'run':<18}{'all turns':>12}{'last day':>12}")
    print(f"{'without feedback':<18}{off[0]:>12.3f}{off[1]:>12.3f}")
    print(f"{'with feedback':<18}{on[0]:>12.3f}{on[1]:>12.3f}")
    print(f"{'ratio':<18}{on[0] / off[0]:>11.2f}x{on[1] / off[1]:>11.2f}x")


if __name__ == "__main__":
    main()
