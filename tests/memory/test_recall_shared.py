"""Recall's shared branch: for a question that asks what two people share, each one's own
lines that say the same rare words as a line of the other's rank first, above the lines
where one addresses the other (memory/_recall/shared.py; InMemoryStore and VaultStore, sync
and async)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from langgraph.store.base import BaseStore

from langmem_vault.memory import MemoryVault, Recalled
from langmem_vault.memory._recall.shared import shared_ranked
from langmem_vault.memory._recall.subjects import two_subjects

# (thread, line): one turtle line of each, sessions apart; the rest say both names, or the
# question's words ("like", "animals", "both") about something else
CHAT = [
    ("s1", "Nate: I'm drawn to turtles, their slow pace calms me down"),
    ("s1", "Joanna: Nate, do you like animals? I love animals."),
    ("s2", "Joanna: Thanks, Nate! You always know what I like."),
    ("s2", "Nate: Joanna, both of us like a good story, right?"),
    ("s3", "Nate: Hey Joanna, what do you like to do on weekends?"),
    ("s3", "Joanna: Nate, I like that idea, both of us should go!"),
    ("s4", "Joanna: Old turtles remind me of patience and strength"),
    ("s4", "Nate: Joanna, animals at the zoo were fun to see"),
    ("s5", "Joanna: My screenplay draft is finally finished"),
    ("s5", "Nate: Won another gaming tournament last night"),
    ("s6", "Joanna: Baked a dairy-free cake for my family"),
    ("s6", "Nate: My new gaming chair arrived today"),
]
QUESTION = "What animal do both Nate and Joanna like?"
TURTLES = {CHAT[0][1], CHAT[6][1]}


def _said(n: int) -> datetime:
    return datetime(2024, 3, 2, tzinfo=UTC) + timedelta(days=n)


def _check(hits: Sequence[Recalled]) -> None:
    # by the question's words the addressing lines come first (Joanna's turtles 6th
    # without the branch); with it both turtle lines are the top two
    assert {h.value.text for h in hits[:2]} == TURTLES, [h.value.text for h in hits]
    assert all(h.parts["shared"].rank <= 2 for h in hits[:2])
    assert all("shared" not in h.parts for h in hits if h.value.text not in TURTLES)


def test_the_two_peoples_shared_words_rank_their_own_lines(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for n, (thread, text) in enumerate(CHAT):
        vault.remember(text, thread_id=thread, observed_at=_said(n))
    _check(vault.recall(QUESTION, limit=len(CHAT)))
    # a question about one of them asks nothing they share: no branch
    hits = vault.recall("What animal does Nate like?", limit=len(CHAT))
    assert hits and all("shared" not in h.parts for h in hits)


async def test_the_two_peoples_shared_words_rank_their_own_lines_async(
    astore: BaseStore,
) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, (thread, text) in enumerate(CHAT):
        await vault.aremember(text, thread_id=thread, observed_at=_said(n))
    _check(await vault.arecall(QUESTION, limit=len(CHAT)))


def test_a_pair_is_two_peoples_own_lines_from_two_conversations() -> None:
    texts = {
        "nate": "Nate: turtles are calm",
        "echo": "Joanna: turtles are calm, Nate? cute!",  # naming him says it all the same
        "reply": "Joanna: turtles, yes",  # the same conversation as Nate's: a reply
        "later": "Joanna: my turtles sleep",
        "other": "Tim: turtles everywhere",  # not one of the two
        "pizza": "Nate: pizza night",
        "rain": "Joanna: rain again",
        "chair": "Nate: a new chair",
    }
    threads = {"nate": "s1", "echo": "s2", "reply": "s1", "later": "s3", "other": "s4"}
    threads |= {"pizza": "s5", "rain": "s5", "chair": "s6"}
    hits = dict(shared_ranked(QUESTION, texts, {}, threads))
    assert set(hits) == {"nate", "echo", "later"}
    assert hits["echo"] > hits["later"]  # "calm" too
    # only each person's ``top`` best by the order given: Joanna's best is the reply
    order = {"nate": 0.5, "reply": 0.9, "later": 0.1}
    assert shared_ranked(QUESTION, texts, order, threads, top=1) == []
    # not a question about what they share, or one person named: nothing
    assert shared_ranked("What did Nate tell Joanna?", texts, {}, threads) == []
    assert shared_ranked("What did Nate share with Joanna?", texts, {}, threads) == []
    assert shared_ranked("What do Nate and Joanna share?", texts, {}, threads)
    assert shared_ranked("What do both Nate and Ann like?", texts, {}, threads) == []


def test_two_subjects_in_the_order_the_question_names_them() -> None:
    texts = {"a": "Nate: hi", "b": "Joanna: hi", "c": "Tim: hi"}
    assert two_subjects("Do Joanna and Nate share?", texts) == (("Joanna", {"b"}), ("Nate", {"a"}))
    assert two_subjects("Does Nate share?", texts) is None
    assert two_subjects("Do Joanna, Nate and Tim share?", texts) is None
