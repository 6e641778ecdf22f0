"""Recall's ``neighbour`` branch: what was said just before or after a strong match.

The answer to a question is often not the sentence that matches it best but the one next to
it in the conversation: "How did Melanie feel about her family's support?" matches Caroline's
"How has your family been supportive?", and the answer is Melanie's reply ("They're a real
support, I appreciate them a lot"), which shares few of the question's words. So after a
first fusion, each of its best ``sources`` candidates lends its fused score to the
candidates beside it in its conversation: the same ``source_thread_id``, the one said just
before and the one just after it among the candidates (by when it was said: ``observed_at``,
else ``created_at``). The branch ranks those neighbours by the best score lent to them and
a second fusion adds it to the others (measured on LoCoMo conversations 0-4: single-hop
questions +2.4 points, bench/RESULTS.md). In process, over the candidates recall's batch
already read: no statement, no model.

>>> at = {"a": ("t1", 1.0), "b": ("t1", 2.0), "c": ("t1", 3.0), "d": ("t2", 1.0)}
>>> neighbour_ranked([("b", 0.5), ("c", 0.3), ("d", 0.4)], at)
[('a', 0.5), ('c', 0.5), ('b', 0.3)]
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from itertools import pairwise
from typing import TypeVar

__all__ = ["neighbour_ranked"]

K = TypeVar("K", bound=Hashable)


def neighbour_ranked(
    sources: Sequence[tuple[K, float]], said: Mapping[K, tuple[str, float]]
) -> list[tuple[K, float]]:
    """The candidates next to ``sources`` (each ``(key, score)``, best first) in their
    thread, each with the best score of a source beside it, best first; ``said`` maps each
    candidate to its thread and when it was said (a candidate not in it has no neighbours).
    Two sources side by side lend to each other: a question and its answer both match."""
    by_thread: dict[str, list[tuple[float, int, K]]] = {}
    for n, (key, (thread, moment)) in enumerate(said.items()):
        by_thread.setdefault(thread, []).append((moment, n, key))
    beside: dict[K, list[K]] = {}
    for told in by_thread.values():
        told.sort(key=lambda t: (t[0], t[1]))
        for (_, _, before), (_, _, after) in pairwise(told):
            beside.setdefault(before, []).append(after)
            beside.setdefault(after, []).append(before)
    lent: dict[K, float] = {}
    for key, score in sources:
        for other in beside.get(key, ()):
            if score > lent.get(other, float("-inf")):
                lent[other] = score
    return sorted(lent.items(), key=lambda pair: pair[1], reverse=True)
