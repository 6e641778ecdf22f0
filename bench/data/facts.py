"""Fact kinds for the synthetic retrieval set: each builds the turns that state a fact, the
turns that mention the same entities without answering (distractors), and the questions.

A question's evidence is a list of tags; make_conversations.py turns tags into turn ids once
the episodes are placed in sessions. Question kinds:

- ``lexical``: shares a rare word with the answering turn (a name, a code name, a brand);
- ``semantic``: paraphrases it with synonyms and roles instead of names ("my colleague");
- ``update``: asks for the current state of something that changed; only the newest turn
  answers, the older statements are distractors;
- ``multi_hop``: needs two turns (one says who someone is, another what they did).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TypeVar

import vocabulary as V

T = TypeVar("T")

OPENERS = [
    "",
    "",
    "",
    "Oh, ",
    "By the way, ",
    "So, ",
    "Quick update: ",
    "Random thing, but ",
    "Guess what, ",
    "Okay so ",
    "Small news: ",
    "Not sure if I mentioned it, but ",
]
PROPER = {
    w
    for seq in (V.FEMALE_NAMES, V.MALE_NAMES, V.PET_NAMES, V.PROJECT_CODENAMES, V.COMPANIES)
    for w in seq
}
PROPER |= {r[1].split()[0] for r in V.RESTAURANTS} | {c[0].split()[0] for c in V.CITIES}
ASIDES = [
    "Long day today.",
    "Anyway, it's still raining.",
    "Also I finally cleaned the fridge.",
    "Work was a circus today.",
    "Sorry, typing on my phone.",
    "I'm so tired lol.",
    "Also the printer at work died again.",
    "Unrelated, but I need new running shoes.",
    "Also I burnt the toast this morning.",
    "The heating is broken again, by the way.",
    "Oh and I have a dentist thing later.",
    "Also my phone screen cracked, great.",
    "The bus was late again.",
    "Had way too much coffee already.",
    "Anyway, how are you?",
    "Also, can't believe it's almost the weekend.",
    "Also my landlord still hasn't fixed the sink.",
    "I'm procrastinating, obviously.",
]
ACKS = [
    "That's great to hear!",
    "Oh nice, thanks for telling me.",
    "Good to know, I'll keep that in mind.",
    "That sounds exciting.",
    "Love that.",
    "Ha, that's a fun detail.",
    "Thanks for the update!",
    "Noted! How are you feeling about it?",
    "Oh wow, that's a big change.",
    "That sounds lovely.",
]


@dataclass
class Turn:
    speaker: str
    text: str
    tag: str = ""  # non-empty when a question cites this turn


@dataclass
class Question:
    text: str
    kind: str
    tags: list[str]
    answer: str


@dataclass
class Fact:
    episodes: list[list[Turn]]  # placed in increasing sessions, in this order
    distractors: list[list[Turn]] = field(default_factory=list)  # placed anywhere
    questions: list[Question] = field(default_factory=list)
    # Entities the fact is about; chatter.py writes more distractor turns around them.
    slots: dict[str, str] = field(default_factory=dict)


@dataclass
class Person:
    name: str
    role: str
    gender: str

    @property
    def she(self) -> str:
        return "she" if self.gender == "f" else "he"

    @property
    def her(self) -> str:
        return "her" if self.gender == "f" else "his"

    @property
    def him(self) -> str:
        return "her" if self.gender == "f" else "him"


class Ctx:
    """Random choices for one conversation: no name or thing is used twice in it."""

    def __init__(self, rng: random.Random, user: str) -> None:
        self.rng = rng
        self.user = user
        self.home = rng.choice(V.HOME_CITIES)
        self.people: dict[str, Person] = {}
        self.used: set[str] = set()

    def pick(self, seq: list[str]) -> str:
        return self.rng.choice(seq)

    def take(self, seq: list[T]) -> T:
        free = [x for x in seq if repr(x) not in self.used]
        item = self.rng.choice(free)
        self.used.add(repr(item))
        return item

    def person(self, role: str) -> Person:
        if role not in self.people:
            gender = V.ROLE_GENDER.get(role) or self.rng.choice("fm")
            name = self.take(V.FEMALE_NAMES if gender == "f" else V.MALE_NAMES)
            self.people[role] = Person(name, role, gender)
        return self.people[role]

    def said(self, p: Person) -> str:
        """How the user introduces a person in a statement: "my coworker Priya"."""
        return f"my {self.pick(V.ROLES[p.role][0])} {p.name}"

    def asked(self, p: Person) -> str:
        """How a semantic question refers to the same person without the name or role word."""
        return self.pick(V.ROLES[p.role][1])

    def say(self, text: str, tag: str = "") -> Turn:
        opener = self.pick(OPENERS)
        first = text.split()[0].split("'")[0].strip(".,!:")
        if opener and first not in PROPER and first != "I":
            text = text[0].lower() + text[1:]
        elif not opener:
            text = text[0].upper() + text[1:]
        text = opener + text
        # Real messages mix topics: often a fact comes with an unrelated sentence around it.
        roll = self.rng.random()
        if roll < 0.2:
            text = self.pick(ASIDES) + " " + text
        elif roll < 0.4:
            text = text + " " + self.pick(ASIDES)
        return Turn("user", text, tag)

    def ack(self, follow_up: str = "") -> Turn:
        return Turn("assistant", follow_up or self.pick(ACKS))
