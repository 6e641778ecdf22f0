"""recall's subject lift: the turns said by the person a question names move up among
the candidates (memory/_recall/subjects.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

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


def _said(n: int) -> datetime:
    return datetime(2024, 3, 2, tzinfo=UTC) + timedelta(days=n)


def _check(hits: Sequence[Recalled]) -> None:
    # both of Melanie's answers make the top three, above Caroline's question to her
    texts = [h.value.text for h in hits]
    assert {CHAT[1], CHAT[3]} <= set(texts), texts
    assert CHAT[0] not in texts


def test_the_named_persons_turns_move_up(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for n, text in enumerate(CHAT):
        vault.remember(text, thread_id=f"t{n}", observed_at=_said(n))
    _check(vault.recall(QUESTION, limit=3))


async def test_the_named_persons_turns_move_up_async(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, text in enumerate(CHAT):
        await vault.aremember(text, thread_id=f"t{n}", observed_at=_said(n))
    _check(await vault.arecall(QUESTION, limit=3))


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
