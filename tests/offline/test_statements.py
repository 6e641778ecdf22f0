"""One fact per statement: clause splitting, chat as people type it, the ways people say who
they are, and confidence that matches the statement (issue 23). Table-driven and fast."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_vault._nlp import load_spacy
from langmem_vault.extraction._clauses import split_statements
from langmem_vault.offline._chat import hedged, normalise
from langmem_vault.offline._extractor import HEDGED_CONFIDENCE, OfflineExtractor

DANA = "I'm Dana, I live in Porto, I'm allergic to peanuts, my daughter is Rita"


@pytest.mark.parametrize(
    ("text", "statements"),
    [
        (DANA, ["I'm Dana", "I live in Porto", "I'm allergic to peanuts", "my daughter is Rita"]),
        # an implied first-person subject is said back: "live in leeds" -> "I live in leeds"
        (
            "34, live in leeds and work at tesco - got 2 kids",
            ["34", "I live in leeds", "I work at tesco", "I got 2 kids"],
        ),
        (
            "allergic to shellfish; based in Oslo",
            ["I'm allergic to shellfish", "I'm based in Oslo"],
        ),
        ("im dana i live in porto", ["im dana", "i live in porto"]),
        # lists and noun phrases stay with their statement
        ("i like apples, pears and plums", ["i like apples, pears and plums"]),
        (
            "my wife ana and i have a cat called mochi",
            ["my wife ana and i have a cat called mochi"],
        ),
        (
            "I speak English, French and a bit of German",
            ["I speak English, French and a bit of German"],
        ),
        ("i take metformin for my diabetes", ["i take metformin for my diabetes"]),
        (
            "I love cooking\nI work at Acme 🎉 my dog is Rex",
            ["I love cooking", "I work at Acme", "my dog is Rex"],
        ),
    ],
)
def test_a_message_splits_into_its_statements(text: str, statements: list[str]) -> None:
    assert [c.statement for c in split_statements(text, load_spacy())] == statements


def test_without_spacy_only_first_person_subjects_start_a_statement() -> None:
    got = [c.statement for c in split_statements(DANA)]
    assert got == ["I'm Dana", "I live in Porto", "I'm allergic to peanuts", "my daughter is Rita"]
    assert len(split_statements("I live in Leeds and work at Tesco")) == 1


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("im alergic to cats lol 😅", "I'm allergic to cats"),
        ("i wrok at acme haha", "I work at acme"),
        ("my fav band is muse :)", "my favourite band is muse"),
        ("ive got a dauther", "I've got a daughter"),
    ],
)
def test_chat_is_normalised_for_the_patterns(typed: str, read: str) -> None:
    assert normalise(typed) == read


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        (
            DANA,
            {
                "User's name is Dana",
                "User lives in Porto",
                "User is allergic to peanuts",
                "User's daughter is Rita",
            },
        ),
        ("hey! sam here lol", {"User's name is Sam"}),
        ("call me Mei, she/her pronouns btw", {"User's name is Mei"}),
        ("name's chloe! 23", {"User's name is Chloe", "User is 23 years old"}),
        ("it's Elena from the Milan office", {"User's name is Elena"}),
        ("my pronouns are they/them", {"User's pronouns are they/them"}),
        ("i just turned 40", {"User is 40 years old"}),
        ("my bday is june 3rd", {"User's birthday is june 3rd"}),
        (
            "based in lisbon, moved to berlin in may",
            {"User lives in lisbon", "User lives in berlin in may"},
        ),
        ("im a nurse at st marys", {"User works as a nurse at st marys"}),
        ("i work for Zalando as a frontend dev", {"User works at Zalando as a frontend dev"}),
        ("I'm on the payments team", {"User is on the payments team"}),
        ("my wife is called Priya", {"User's wife is Priya"}),
        ("married to lars, 3 kids", {"User is married to Lars"}),
        ("i have a dog called Rex", {"User has a dog named Rex"}),
        ("we have a cat, Mochi", {"User has a cat named Mochi"}),
        ("I'm Élodie, I live in Lyon", {"User's name is Élodie", "User lives in Lyon"}),
        ("my cat's name is mochi", {"User's cat is Mochi"}),
        ("im vegan 🌱", {"User is vegan"}),
        ("i take sertraline for anxiety", {"User takes sertraline for anxiety"}),
        ("I have asthma", {"User has asthma"}),
        ("i'm diabetic", {"User is diabetic"}),
        ("i speak polish and english", {"User speaks polish and english"}),
        ("I play the cello", {"User plays cello"}),
        ("i do yoga on sundays", {"User does yoga"}),
        ("I drive a Tesla Model Y", {"User drives a Tesla Model Y"}),
        ("my favourite book is Dune", {"User's favorite book is Dune"}),
    ],
)
def test_the_ways_people_say_who_they_are(said: str, facts: set[str]) -> None:
    out = OfflineExtractor().extract([HumanMessage(said)], [])
    assert facts <= {f.text for f in out.facts}, [f.text for f in out.facts]


@pytest.mark.parametrize(
    ("said", "confirmed"),
    [
        ("my dog is called Rex", True),
        ("I live in Oslo", True),
        ("I might move to Oslo", False),
        ("maybe I'll learn Spanish", False),
        ("i'm thinking about moving to Lisbon", False),
    ],
)
def test_confidence_matches_the_statement(said: str, confirmed: bool) -> None:
    (fact,) = OfflineExtractor().extract([HumanMessage(said)], []).facts
    assert (fact.confidence >= 0.8) is confirmed, fact
    assert hedged(said) is not confirmed
    if not confirmed:
        assert fact.confidence <= HEDGED_CONFIDENCE


def test_a_bare_name_after_a_greeting_is_the_name() -> None:
    ex = OfflineExtractor()
    greeted = [
        HumanMessage("hi there"),
        AIMessage("Hello! Who am I talking to?"),
        HumanMessage("Ravi."),
    ]
    assert "User's name is Ravi" in {f.text for f in ex.extract(greeted, []).facts}
    accented = [HumanMessage("hello there"), HumanMessage("Tomás.")]
    assert "User's name is Tomás" in {f.text for f in ex.extract(accented, []).facts}
    # not without a greeting, not for a word that is not a name
    assert ex.extract([HumanMessage("Ravi.")], []).facts == []
    thanks = [HumanMessage("hello"), AIMessage("Hi!"), HumanMessage("Thanks.")]
    assert ex.extract(thanks, []).facts == []


def test_a_question_is_not_split_into_statements() -> None:
    """A question puts its auxiliary before "I" ("where do I live"): no cut there, so no
    "I live, and where do" is kept as something the user said (the demo's second thread)."""
    asked = "Where do I live, and where do I work?"
    assert all(not c.text.lower().startswith("i ") for c in split_statements(asked, load_spacy()))
    assert OfflineExtractor().extract([HumanMessage(asked)], []).facts == []


@pytest.mark.parametrize("said", ["it's raining", "this is great", "it's so cold today"])
def test_a_remark_is_not_a_name(said: str) -> None:
    facts = OfflineExtractor().extract([HumanMessage(said)], []).facts
    assert not any(f.text.startswith("User's name") for f in facts), facts


def test_a_request_to_the_assistant_is_not_a_fact() -> None:
    out = OfflineExtractor().extract([HumanMessage("i need you to take notes for me")], [])
    assert out.facts == []
