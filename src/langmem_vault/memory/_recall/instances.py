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

>>> asked = asked_instances("What instruments does Tim play?")
>>> {"violin", "piano"} <= asked
True
>>> asked_instances("Where does Tim live?")
frozenset()
>>> texts = {"a": "Tim: I love my violin", "b": "Tim: Piano and violin practice", "c": "Tim: Hi"}
>>> instance_ranked(asked, texts, {"a": 0.9, "b": 0.2, "c": 0.5})
[('b', 2.0), ('a', 1.0)]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar

__all__ = ["CATEGORY_INSTANCES", "asked_instances", "instance_ranked"]

K = TypeVar("K")

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
        "book": "book books novel novels read reading author series chapter",
        "author": "author book books novel writer wrote",
        "movie": "movie movies film films watched watch cinema series show",
        "game": "game games played play chess catan tournament console",
        "dessert": "cake cakes cookie cookies pie ice cream icecream brownies cupcakes pudding"
        " cobbler sundae chocolate dessert baked",
        "recipe": "recipe recipes cake cook cooked cooking baked made dish soup",
        "food": "pizza pasta cake soup salad chicken tacos sushi burger bread cookies dessert"
        " ice cream",
        "city": "city cities town paris rome london tokyo seattle chicago york boston berlin"
        " madrid barcelona",
        "country": "country countries spain england france italy japan germany canada mexico"
        " sweden uk usa",
        "place": "beach mountains forest park lake city town museum trip",
        "event": "event events parade festival conference fair fundraiser concert race charity"
        " march party competition workshop seminar meetup",
        "item": "bought buy got gift",
        "art": "painting paintings painted drawing sculpture pottery art abstract",
    }.items()
}

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")


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
    """The keys whose text names at least one of ``instances``, most distinct instances
    first, then by ``order`` (another branch's scores); each with its count."""
    if not instances:
        return []
    hits = []
    for key, text in texts.items():
        named = len(instances.intersection(_WORD.findall(text.lower())))
        if named:
            hits.append((key, float(named)))
    hits.sort(key=lambda pair: (pair[1], order.get(pair[0], 0.0)), reverse=True)
    return hits
