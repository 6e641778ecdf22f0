"""Recall's ``feedback`` branch: the words the best first matches share with other candidates.

"What books has John read?" is answered by "I'm reading Dune", "I just finished this amazing
fantasy series, the author is..." and "I love non-fiction books": the first fusion finds the
last (it says "books"), and the others share no word with the question. They share words
with the answers it found ("reading", "author", "inspiring"). So after a first fusion, the
words of its best ``sources`` candidates become a second query over the candidates
(pseudo-relevance feedback): each word weighs how many of the sources say it times how rare
it is among the candidates (its inverse document frequency, so "hey" and the speakers' names
weigh little), the ``terms`` heaviest are kept, and each candidate scores the weight of the
kept words it says. The question's own words are left out (the ``keyword`` branch has them).
Measured on LoCoMo conversations 0-4 (bench/RESULTS.md). In process, over the candidates
recall's batch already read: no statement, no model.

>>> texts = {
...     "a": "John: I love non-fiction books, reading about mindset",
...     "b": "John: I'm reading Dune, the author is great",
...     "c": "John: basketball practice today",
...     "d": "Tim: basketball again!",
... }
>>> hits = feedback_ranked(["a"], texts, "What books has John read?", {"b": 0.1, "c": 0.5})
>>> [(key, round(score, 2)) for key, score in hits]
[('a', 6.24), ('b', 0.69)]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["feedback_ranked"]

K = TypeVar("K", bound=Hashable)

# words of four letters or more: shorter ones are mostly function words ("the", "was", "and")
_WORD = re.compile(r"[a-z][a-z'-]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def feedback_ranked(
    sources: Sequence[K],
    texts: Mapping[K, str],
    query: str,
    order: Mapping[K, float],
    *,
    terms: int = 20,
) -> list[tuple[K, float]]:
    """The keys of ``texts`` that say the ``terms`` heaviest words of ``sources`` (keys of
    ``texts``, the first fusion's best) other than ``query``'s, heaviest first, then by
    ``order`` (another branch's scores); each with the weight of the words it says."""
    said = {key: _words(text) for key, text in texts.items()}
    known = [said[key] for key in sources if key in said]
    if not known:
        return []
    asked = _words(query)
    spread = Counter(word for words in said.values() for word in words)
    weight = {
        word: count * math.log(len(said) / spread[word])
        for word, count in Counter(word for words in known for word in words).items()
        if word not in asked
    }
    # ties by the word: the same words every run (a set's order changes with the hash seed)
    kept = dict(sorted(weight.items(), key=lambda pair: (-pair[1], pair[0]))[:terms])
    hits = []
    for key, words in said.items():
        score = sum(kept.get(word, 0.0) for word in words)
        if score > 0:
            hits.append((key, score))
    hits.sort(key=lambda pair: (pair[1], order.get(pair[0], 0.0)), reverse=True)
    return hits
