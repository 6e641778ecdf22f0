"""recall's subject lift: the turns said by the person a question names move up among
the candidates (memory/_recall/subjects.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from langgraph.store.base import BaseStore

from langmem_vault.memory import MemoryVault, Recalled
from langmem_vault.memory._recall.subjects import named_subject, subject_of

# Caroline's turns share the question's words ("sports"); Melanie's answers do not
CHAT = [
    "Caroline: Melanie, which sports do you like to watch?",
    "Melanie: I go kayaking on the lake most Sundays.",
    "Caroline: I like sports, mostly football and tennis.",
    "Melanie: I started rock climbing with my son.",
    "Caroline: Sports on TV bore me.",
]
QUESTION = "What sports does Melanie like?"
# about Melanie, who tells Caroline: a question naming two people lifts the first
TWO = "What sports has Melanie told Caroline she likes?"


def _said(n: int) -> datetime:
    return datetime(2024, 3, 2, tzinfo=UTC) + timedelta(days=n)


def _check(hits: Sequence[Recalled]) -> None:
    # both of Melanie's answers make the top three, above Caroline's question to her
    texts = [h.value.text for h in hits]
    assert {CHAT[1], CHAT[3]} <= set(texts), texts
    assert CHAT[0] not in texts


@pytest.mark.parametrize("question", [QUESTION, TWO])
def test_the_named_persons_turns_move_up(store: BaseStore, question: str) -> None:
    vault = MemoryVault(store, user_id="u1")
    for n, text in enumerate(CHAT):
        vault.remember(text, thread_id=f"t{n}", observed_at=_said(n))
    _check(vault.recall(question, limit=3))


@pytest.mark.parametrize("question", [QUESTION, TWO])
async def test_the_named_persons_turns_move_up_async(astore: BaseStore, question: str) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, text in enumerate(CHAT):
        await vault.aremember(text, thread_id=f"t{n}", observed_at=_said(n))
    _check(await vault.arecall(question, limit=3))


def test_the_subject_is_the_name_a_text_starts_with() -> None:
    texts = dict(enumerate([*CHAT, "Maya moved to Lyon in 2023", "The user's sister is Priya"]))
    assert named_subject(QUESTION, texts) == {1, 3}
    assert named_subject("Where did Maya live before Lyon?", texts) == {5}
    # a name only mentioned (not a subject), the first word, or two speakers: no lift
    assert named_subject("Who is Priya?", texts) == set()
    assert named_subject("Melanie likes what?", texts) == set()
    assert named_subject("Did Caroline or Melanie ski?", texts) == set()
    assert [subject_of(t) for t in (CHAT[0], "Maya's sister Priya", "Melanie, hi")] == [
        "Caroline",
        "Maya",
        None,
    ]


def test_which_of_two_named_people_a_question_is_about() -> None:
    texts = dict(enumerate(CHAT))
    assert named_subject(TWO, texts) == {1, 3}
    assert named_subject("What did Caroline say to Melanie?", texts) == {0, 2, 4}
    # the owner is not who it is about; joined or "both": about both, none lifted
    assert named_subject("What does Caroline's friend Melanie like?", texts) == {1, 3}
    assert named_subject("What do Melanie and Caroline like?", texts) == set()
    assert named_subject("What do Melanie's and Caroline's kids like?", texts) == set()
    assert named_subject("What has Melanie both read and told Caroline?", texts) == set()
