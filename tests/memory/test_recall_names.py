"""recall and the names in a question (memory/_recall/instances.py, subjects.py): the
instances a list question wants named by a title or a proper name, the person a question
about two people asks about, and the full names the search without names keeps."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from langgraph.store.base import BaseStore

from langmem_vault.memory import MemoryVault, Recalled
from langmem_vault.memory._recall.instances import asked_instances, instance_ranked
from langmem_vault.memory._recall.recall_query import RecallQuery
from langmem_vault.memory._recall.subjects import named_subject, without_names

# the answers name no word of the lexicon: two cities, two films, two people by name
LINES = [
    "Maya: I love visiting new cities, and old towns too.",
    "Maya: We flew to Lisbon and then drove on to Porto.",
    "Maya: Movies are so expensive now.",
    'Maya: "Dune" and "Heat" both made me cry.',
    "Maya: Relatives are great when you are moving house.",
    "Maya: my sister Priya and Tom carried every box up three floors.",
    "Ana: Maya, hi! How are you?",
    "Ana: I painted the kitchen yellow in March.",
]
ASKED = {
    "Which cities has Maya visited?": LINES[1],
    "What movies has Maya seen?": LINES[3],
    "Which of Maya's relatives helped her move?": LINES[5],
}


def _said(n: int) -> datetime:
    return datetime(2024, 3, 2, tzinfo=UTC) + timedelta(days=n)


def _check(question: str, hits: Sequence[Recalled]) -> None:
    # the answer says two instances: the instances branch ranks it first
    answer = next(h for h in hits if h.value.text == ASKED[question])
    assert answer.parts["instances"].rank == 1, [(h.value.text, h.parts) for h in hits]


def test_titles_and_proper_names_are_instances(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for n, text in enumerate(LINES):
        vault.remember(text, observed_at=_said(n))
    for question in ASKED:
        _check(question, vault.recall(question, limit=len(LINES)))


async def test_titles_and_proper_names_are_instances_async(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, text in enumerate(LINES):
        await vault.aremember(text, observed_at=_said(n))
    for question in ASKED:
        _check(question, await vault.arecall(question, limit=len(LINES)))


def test_a_speakers_name_a_month_and_a_sentences_first_word_are_no_instances() -> None:
    texts = dict(enumerate(LINES))
    counts = dict(instance_ranked(asked_instances("Which places did Maya see?"), texts, {}))
    # Lisbon, Porto; Priya, Tom; not "Maya" (a speaker) after "Ana:", nor "March"
    assert counts == {1: 2.0, 5: 2.0}
    # a run of capitalised words is one name: a company's two words do not outrank a city
    city = asked_instances("Which city?")
    assert dict(instance_ranked(city, {0: "Works at Acme Robotics", 1: "Lives in Lyon"}, {})) == {
        0: 1.0,
        1: 1.0,
    }
    # a category without titles does not count them
    assert 3 not in dict(instance_ranked(asked_instances("What pets?"), texts, {}))


# Caroline's lines share the question's words ("sports"); Melanie's answers do not
CHAT = [
    "Caroline: Melanie, which sports do you like to watch?",
    "Melanie: I go kayaking on the lake most Sundays.",
    "Caroline: I like sports, mostly football and tennis.",
    "Melanie: I started rock climbing with my son.",
    "Caroline: Sports on TV bore me.",
]
# about Melanie, who tells Caroline
TWO = "What sports has Melanie told Caroline she likes?"


def _check_two(hits: Sequence[Recalled]) -> None:
    # both of Melanie's answers make the top three, above Caroline's question to her
    texts = [h.value.text for h in hits]
    assert {CHAT[1], CHAT[3]} <= set(texts), texts
    assert CHAT[0] not in texts


def test_a_question_about_one_of_two_people_lifts_the_first(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for n, text in enumerate(CHAT):
        vault.remember(text, thread_id=f"t{n}", observed_at=_said(n))
    _check_two(vault.recall(TWO, limit=3))


async def test_a_question_about_one_of_two_people_lifts_the_first_async(
    astore: BaseStore,
) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, text in enumerate(CHAT):
        await vault.aremember(text, thread_id=f"t{n}", observed_at=_said(n))
    _check_two(await vault.arecall(TWO, limit=3))


def test_which_of_two_named_people_a_question_is_about() -> None:
    texts = dict(enumerate(CHAT))
    assert named_subject(TWO, texts) == {1, 3}
    assert named_subject("What did Caroline say to Melanie?", texts) == {0, 2, 4}
    # the owner is not who it is about; joined or "both": about both, none lifted
    assert named_subject("What does Caroline's friend Melanie like?", texts) == {1, 3}
    assert named_subject("What do Melanie and Caroline like?", texts) == set()
    assert named_subject("What do Melanie's and Caroline's kids like?", texts) == set()
    assert named_subject("What has Melanie both read and told Caroline?", texts) == set()


def test_the_search_without_names_keeps_a_full_name_or_a_title() -> None:
    ns = ("memories", "u1", "semantic")

    def unnamed(question: str) -> str | None:
        return RecallQuery(ns, question, unnamed=10).unnamed_text

    assert unnamed("What does John like about Lebron James?") == (
        "What does like about Lebron James?"
    )
    assert unnamed("When did Nate watch The Lord of the Rings?") == (
        "When did watch The Lord of the Rings?"
    )
    # a single name goes, with its possessive
    assert without_names("What did Nate's sister buy in Lisbon?") == "What did sister buy in?"
