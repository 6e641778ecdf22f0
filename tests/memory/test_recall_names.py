"""recall and the names in a question (memory/_recall/instances.py, subjects.py): the
instances a list question wants named by a title or a proper name, and the full names the
search without names keeps (a question about two people: test_recall_subjects.py)."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import BaseStore

from langmem_vault.memory import MemoryVault, Recalled
from langmem_vault.memory._recall.instances import asked_instances, instance_ranked
from langmem_vault.memory._recall.recall_query import RecallQuery
from langmem_vault.memory._recall.subjects import without_names
from tests.memory.test_recall_subjects import _said

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
