"""Recall's ``instances`` branch: a question that asks for a category is answered by
memories that name an instance of it.

"What activities does Melanie do?" is answered by "I went camping with the kids" and "I
finished a pottery class": neither says "activities", and a sentence embedding puts the
category word far from its instances (on LoCoMo, the evidence turns of such list questions
rank about 20th by cosine among the person's own turns). A small offline lexicon maps the
category nouns people ask about (activities, hobbies, sports, instruments, pets, books,
cities, events...) to words that name their instances; the branch ranks the candidates that
say the most distinct instances first, their vector similarity breaking ties. In process,
over the candidates recall's batch already read: no statement, no model.

Some instances no word list holds: a book or a film is named by its title ("I loved
"Becoming Nicole""), a city or a country by its proper name ("we drove to Seattle"), a person
by theirs ("my mentor Alice"). So the entries of those categories also count the text's quoted
titles (:data:`QUOTED_TITLE`) or its proper names (:data:`PROPER_NAME`: a capitalised word,
or a run of them such as "Acme Robotics", after a lower-case word or a comma, other than a
month, a weekday or the candidates' own subjects: the speakers' names are in every kind of
line, so they answer nothing).

>>> asked = asked_instances("What instruments does Tim play?")
>>> {"violin", "piano"} <= asked
True
>>> asked_instances("Where does Tim live?")
frozenset()
>>> texts = {"a": "Tim: I love my violin", "b": "Tim: Piano and violin practice", "c": "Tim: Hi"}
>>> instance_ranked(asked, texts, {"a": 0.9, "b": 0.2, "c": 0.5})
[('b', 2.0), ('a', 1.0)]
>>> places = asked_instances("Which cities has Tim been to?")
>>> said = {"a": "Tim: we drove to Leeds, Lyon", "b": "Ana: Tim, hi!", "c": "Tim: a city"}
>>> instance_ranked(places, said, {})
[('a', 2.0), ('c', 1.0)]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar

from langmem_vault.memory._conditions import WEEKDAYS
from langmem_vault.memory._recall.subjects import subject_of

__all__ = [
    "CATEGORY_INSTANCES",
    "PROPER_NAME",
    "QUOTED_TITLE",
    "asked_instances",
    "instance_ranked",
]

K = TypeVar("K")

#: among a category's instance words: each distinct quoted title a text says counts as one
#: (LoCoMo 0-4, with :data:`PROPER_NAME`: multi-hop +1.3 points; bench/RESULTS.md)
QUOTED_TITLE = '<"Title">'
#: among a category's instance words: each distinct proper name a text says counts as one
PROPER_NAME = "<Name>"

_TITLES = " " + QUOTED_TITLE
_NAMES = " " + PROPER_NAME
# kin and the people one meets: the answers to "which relatives...", "who..."
_PEOPLE = (
    "mom mother dad father parents sister sisters brother brothers son sons daughter"
    " daughters kids kid children child husband wife partner girlfriend boyfriend grandma"
    " grandmother grandpa grandfather aunt uncle cousin cousins niece nephew family friend"
    " friends mentor coworker colleague colleagues neighbor neighbour" + _NAMES
)

#: category noun (singular) -> words that name its instances; written by hand, offline
CATEGORY_INSTANCES: Mapping[str, frozenset[str]] = {
    category: frozenset(words.split())
    for category, words in {
        "activity": "camping hiking hike hikes hiked swimming swim swam running run ran painting"
        " paint painted pottery yoga biking cycling bike climbing fishing kayaking surfing"
        " skiing dancing dance danced gardening cooking baking reading read writing museum"
        " picnic volunteering volunteer games game concert concerts festival beach park walk"
        " walks walking jogging trip trips road travel traveling photography knitting sewing"
        " singing music guitar piano workout gym karaoke",
        "hobby": "camping hiking swimming running painting pottery yoga biking cycling climbing"
        " fishing kayaking surfing skiing dancing gardening cooking baking reading writing"
        " photography knitting sewing singing guitar piano violin drawing games gaming chess"
        " collecting movies films",
        "sport": "basketball football soccer baseball tennis golf hockey volleyball surfing"
        " skiing swimming running cycling boxing kickboxing taekwondo karate wrestling rugby"
        " cricket climbing snowboarding skating yoga",
        "exercise": "running jogging yoga gym weights weight lifting training workout swimming"
        " cycling pilates kickboxing cardio circuit stretching hiking push-ups",
        "instrument": "piano violin guitar drums clarinet flute saxophone cello trumpet ukulele"
        " bass harp keyboard",
        "pet": "dog dogs cat cats puppy pup kitten turtle turtles fish hamster rabbit bird"
        " parrot snake guinea pig",
        "book": "book books novel novels read reading author series chapter" + _TITLES,
        "novel": _TITLES,
        "author": "author book books novel writer wrote" + _TITLES,
        "movie": "movie movies film films watched watch cinema series show" + _TITLES,
        "film": _TITLES,
        "series": _TITLES,
        "show": _TITLES,
        "song": _TITLES,
        "album": _TITLES,
        "band": _TITLES,
        "artist": _TITLES,
        "musical": _TITLES,
        "game": "game games played play chess catan tournament console" + _TITLES,
        "dessert": "cake cakes cookie cookies pie ice cream icecream brownies cupcakes pudding"
        " cobbler sundae chocolate dessert baked",
        "recipe": "recipe recipes cake cook cooked cooking baked made dish soup",
        "food": "pizza pasta cake soup salad chicken tacos sushi burger bread cookies dessert"
        " ice cream",
        "city": "city cities town paris rome london tokyo seattle chicago york boston berlin"
        " madrid barcelona" + _NAMES,
        "country": "country countries spain england france italy japan germany canada mexico"
        " sweden uk usa" + _NAMES,
        "place": "beach mountains forest park lake city town museum trip" + _NAMES,
        "location": _NAMES,
        "area": _NAMES,
        "state": _NAMES,
        "town": _NAMES,
        # not "family" nor "friends": "her family's support", "with her friends" ask for no list
        "relative": _PEOPLE,
        "member": _PEOPLE,
        "people": _PEOPLE,
        "who": _PEOPLE,
        "whom": _PEOPLE,
        "event": "event events parade festival conference fair fundraiser concert race charity"
        " march party competition workshop seminar meetup",
        "item": "bought buy got gift",
        "art": "painting paintings painted drawing sculpture pottery art abstract",
    }.items()
}

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_QUOTED = re.compile(r'["\u201c]([A-Z][^"\u201d]{1,60})["\u201d]')
# a capitalised word (or a run of them: one name) within a sentence: after a lower-case word
# or a comma (a sentence's first word is capitalised by grammar)
_INNER_NAME = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+(?: [A-Z][a-z]+)*")
_MONTHS = "January February March April May June July August September October November December"
# the weekdays as memory conditions spell them ("weekday is Monday")
_CALENDAR = frozenset([*_MONTHS.split(), *(day.capitalize() for day in WEEKDAYS)])


def _forms(word: str) -> tuple[str, ...]:
    """``word`` and what it is the plural of, if anything ("cities": city, "games": game)."""
    return (word, word[:-1], word[:-2], word[:-3] + "y") if word.endswith("s") else (word,)


def asked_instances(query: str) -> frozenset[str]:
    """The instance words of the categories ``query`` names (empty: it names none)."""
    named = {f for w in _WORD.findall(query.lower()) for f in _forms(w)} & CATEGORY_INSTANCES.keys()
    return frozenset().union(*(CATEGORY_INSTANCES[c] for c in named))


def instance_ranked(
    instances: frozenset[str], texts: Mapping[K, str], order: Mapping[K, float]
) -> list[tuple[K, float]]:
    """The keys whose text names at least one of ``instances`` (words, and the
    :data:`QUOTED_TITLE` and :data:`PROPER_NAME` kinds), most distinct instances first, then
    by ``order`` (another branch's scores); each with its count."""
    if not instances:
        return []
    titles, names = QUOTED_TITLE in instances, PROPER_NAME in instances
    people = {s for text in texts.values() if (s := subject_of(text))} if names else set()
    hits = []
    for key, text in texts.items():
        named = len(instances.intersection(_WORD.findall(text.lower())))
        if titles:
            named += len(set(_QUOTED.findall(text)))
        if names:
            named += len(set(_INNER_NAME.findall(text)) - people - _CALENDAR)
        if named:
            hits.append((key, float(named)))
    hits.sort(key=lambda pair: (pair[1], order.get(pair[0], 0.0)), reverse=True)
    return hits
