"""Recall's feedback branch: the words of the first fusion's best rank the candidates that
share them, not the question's words (InMemoryStore and VaultStore, sync and async)."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import BaseStore

from langmem_vault.memory import MemoryVault, Recalled
from langmem_vault.memory._recall.feedback import feedback_ranked

# two causes John names, a third he raised funds for without saying "cause" or "support",
# and lines that say the question's words about something else
CAUSES = [
    "John: Veterans are a cause I support, so I raise funds for their charity",
    "John: Supporting the food bank is a cause dear to me; its charity drive needs funds",
    "John: Ran a 5K race and raised funds for a charity",
    "John: Tech support finally fixed my laptop",
    "John: My team always supports me before a game",
    "John: The flu causes headaches, stay home",
    "John: What causes traffic jams downtown?",
]
QUESTION = "What causes does John support?"
# the feedback branch needs a pool (RecallSettings.feedback_min_candidates): lines about
# other things, sharing no word with the causes
OTHER = [
    f"John: {thing}"
    for thing in (
        "Breakfast was pancakes with blueberries",
        "The train to Boston left late again",
        "My sister adopted a grey kitten",
        "Painted the garage door bright yellow",
        "Watched an old western movie last night",
        "The garden tomatoes are finally ripe",
        "Learning to play the ukulele slowly",
        "Our basement flooded after the storm",
        "Booked a cabin near the mountains for July",
        "New glasses, much sharper vision now",
        "The bakery downstairs closed for good",
        "Tried sushi for the first time",
        "Cleaning out the attic this weekend",
    )
]


def test_the_sources_words_rank_the_others_not_the_questions() -> None:
    texts = {
        "best": "Joanna: what I write: a screenplay and a blog post",
        "book": "Joanna: my book and a blog post came out",
        "talk": "Joanna: what did you write?",
        "walk": "Joanna: a walk",
    }
    hits = dict(feedback_ranked(["best"], texts, "What does she write?", {}))
    # "blog" and "post" are said by the best match and one other: they rank it
    assert hits["book"] > 0 and "walk" not in hits
    # "what" and "write" are the question's own words, "joanna" every candidate's: none counts
    assert "talk" not in hits
    assert feedback_ranked(["gone"], texts, "What does she write?", {}) == []


def _check(hits: Sequence[Recalled]) -> None:
    ranked = [h.value.text for h in hits]
    elsewhere = [CAUSES[3], CAUSES[5], CAUSES[6]]  # the question's words about other things
    # the race says none of the question's words, but "funds" and "charity", as its best
    # matches do: it ranks above the lines that say "support" or "causes" of other things
    # (by their vector alone it ranks below all three)
    assert all(ranked.index(CAUSES[2]) < ranked.index(other) for other in elsewhere), ranked
    assert hits[ranked.index(CAUSES[2])].parts["feedback"].rank > 0
    assert all("feedback" not in h.parts for h in hits if h.value.text in elsewhere)


def test_the_best_matches_words_find_an_answer_without_the_questions(
    store: BaseStore,
) -> None:
    vault = MemoryVault(store, user_id="u1")
    for text in CAUSES + OTHER:
        vault.remember(text)
    _check(vault.recall(QUESTION, limit=len(CAUSES + OTHER)))
    # a question that names no one runs one search (as inject does): no feedback
    hits = vault.recall("What causes does he support?", limit=len(CAUSES))
    assert hits and all("feedback" not in h.parts for h in hits)
    # among fewer candidates than feedback_min_candidates: no feedback (the best three are
    # most of them, and their own words would rank them)
    few = MemoryVault(store, user_id="u2")
    for text in CAUSES:
        few.remember(text)
    hits = few.recall(QUESTION, limit=len(CAUSES))
    assert len(hits) == len(CAUSES) and all("feedback" not in h.parts for h in hits)


async def test_the_best_matches_words_find_an_answer_without_the_questions_async(
    astore: BaseStore,
) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for text in CAUSES + OTHER:
        await vault.aremember(text)
    _check(await vault.arecall(QUESTION, limit=len(CAUSES + OTHER)))
