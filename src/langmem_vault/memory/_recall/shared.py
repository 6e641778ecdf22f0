"""Recall's ``shared`` branch: what two people the question names have both said.

"What animal do both Nate and Joanna like?" is answered by one line of each ("Nate: I'm drawn
to turtles", "Joanna: turtles make me think of strength"), often months apart. Neither says
the question's words, and the lines that say both names are one person addressing the other
("Thanks, Nate!"), whatever they talk about; the question without its names ("What animal do
both and like?") says little more. What the answers have is each other: the same rare words
in two people's own lines. So for a question that asks what two people share ("both", "in
common", "share", "similar") and names two of the candidates' subjects
(:func:`~.subjects.two_subjects`), each person's ``top`` best lines (by another branch's
order) are paired with the other's from another conversation (a reply echoes the line it
answers, whatever they share), a pair weighs the rare words its two lines have in common
(each word's inverse document frequency among the candidates; the names and the question's
own words left out), and the branch ranks each line by its heaviest pair. In process, over
the candidates recall's batch already read: no statement, no model (LoCoMo 0-4: multi-hop
+1 point; bench/RESULTS.md).

>>> texts = {
...     "a": "Nate: I'm drawn to turtles, so calm",
...     "b": "Joanna: turtles make me think of strength",
...     "c": "Nate: Thanks, Joanna! Great game",
...     "d": "Joanna: a new script today",
...     "e": "Nate: a game tonight",
... }
>>> threads = {"a": "s1", "b": "s2", "c": "s3", "d": "s3", "e": "s4"}
>>> order = {"c": 0.9, "a": 0.5, "b": 0.4, "d": 0.3, "e": 0.2}
>>> [key for key, _ in shared_ranked("What animal do both Nate and Joanna like?", texts,
...                                  order, threads)]
['a', 'b']
>>> shared_ranked("What animal does Nate like?", texts, order, threads)
[]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Mapping
from functools import cache
from typing import TypeVar

from langmem_vault.memory._recall.subjects import two_subjects

__all__ = ["SHARED_QUESTION", "shared_ranked"]

K = TypeVar("K", bound=Hashable)

#: a question about what two people have in common (not "What did Evan share with Sam?":
#: something one gave the other)
SHARED_QUESTION = re.compile(r"\b(?:both|in common|similar|shared?(?!\s+with\b))\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z']{2,}")
# a word's first five letters: "painting" and "painted", "turtle" and "turtles" meet
_STEM = 5


@cache
def _stop_words() -> frozenset[str]:
    # spaCy's list (spaCy ships with the package); imported only for a question that asks
    # what two people share: importing spaCy takes about a second
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def _words(text: str, skip: frozenset[str]) -> set[str]:
    """The stems of ``text``'s content words (not stop words, not ``skip``: the names)."""
    found = set()
    for word in _WORD.findall(text.lower()):
        word = word.split("'")[0]
        if len(word) >= 3 and word not in skip:
            found.add(word[:_STEM])
    return found


def shared_ranked(
    query: str,
    texts: Mapping[K, str],
    order: Mapping[K, float],
    threads: Mapping[K, str],
    *,
    top: int = 20,
) -> list[tuple[K, float]]:
    """The keys of ``texts`` said by the two people ``query`` asks what they share, ranked
    by the weight of the words their line has in common with a line of the other's (said in
    another of ``threads``), each person's ``top`` best by ``order`` only; empty for any
    other question."""
    if not SHARED_QUESTION.search(query):
        return []
    people = two_subjects(query, texts)
    if people is None:
        return []
    (first, first_keys), (second, second_keys) = people
    stop = _stop_words()
    skip = stop | {first.lower(), second.lower()}
    asked = _words(query, stop)
    # the line after its speaker's name: the speaker is not what the line says
    said = {key: _words(text.split(":", 1)[-1], skip) - asked for key, text in texts.items()}
    spread = Counter(word for words in said.values() for word in words)
    weight = {word: math.log(len(said) / count) for word, count in spread.items()}

    def own(keys: set[K]) -> list[K]:
        # in ``texts``' order first (a set's follows the hash seed): ties keep it, every run
        mine = [key for key in texts if key in keys]
        return sorted(mine, key=lambda key: order.get(key, 0.0), reverse=True)[:top]

    best: dict[K, float] = {}
    for one in own(first_keys):
        for two in own(second_keys):
            if threads.get(one) is not None and threads.get(one) == threads.get(two):
                continue  # a line and the reply that echoes it
            score = sum(weight[word] for word in said[one] & said[two])
            best[one] = max(best.get(one, 0.0), score)
            best[two] = max(best.get(two, 0.0), score)
    hits = [(key, score) for key, score in best.items() if score > 0]
    hits.sort(key=lambda pair: (pair[1], order.get(pair[0], 0.0)), reverse=True)
    return hits
