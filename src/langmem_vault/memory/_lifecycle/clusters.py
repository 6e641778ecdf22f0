"""Clusters for consolidation: related facts (lexical), episodes that share a topic.

>>> from langmem_vault.memory._lifecycle.consolidation_judge import FactView
>>> facts = [FactView("a", "Lives in Lyon", "personal"),
...          FactView("b", "Lives in Paris", "personal"),
...          FactView("c", "Plays chess", "personal")]
>>> [[f.key for f in c] for c in fact_clusters(facts, 0.5, 12)]
[['a', 'b']]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from langgraph.store.base import Item

from langmem_vault.memory._lifecycle.consolidation_judge import FactView, lexical_similarity

__all__ = ["episode_clusters", "fact_clusters", "signature"]


def signature(facts: Sequence[FactView]) -> str:
    """A short hash of a cluster's keys and texts: an unchanged cluster is judged once."""
    joined = "\n".join(f"{f.key}\t{f.text}" for f in sorted(facts, key=lambda f: f.key))
    return hashlib.sha256(joined.encode()).hexdigest()[:24]


def _related(a: FactView, b: FactView, threshold: float) -> bool:
    if a.category == b.category and a.text.lower().split()[:2] == b.text.lower().split()[:2]:
        return True
    return lexical_similarity(a.text, b.text) >= threshold


def fact_clusters(facts: Sequence[FactView], threshold: float, cap: int) -> list[list[FactView]]:
    """Connected groups of related facts (two or more), each cut to ``cap`` facts."""
    parent = {f.key: f.key for f in facts}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for i, a in enumerate(facts):
        for b in facts[i + 1 :]:
            if root(a.key) != root(b.key) and _related(a, b, threshold):
                parent[root(b.key)] = root(a.key)
    groups: dict[str, list[FactView]] = {}
    for f in facts:
        groups.setdefault(root(f.key), []).append(f)
    return [g[:cap] for g in groups.values() if len(g) > 1]


def episode_clusters(episodes: Sequence[Item], least: int) -> list[tuple[str, list[Item]]]:
    """(topic, episodes) for each topic shared by ``least`` or more episodes; an episode
    joins its largest topic only."""
    by_topic: dict[str, list[Item]] = {}
    for item in episodes:
        for topic in item.value.get("topics") or []:
            by_topic.setdefault(str(topic), []).append(item)
    used: set[str] = set()
    out: list[tuple[str, list[Item]]] = []
    for topic, items in sorted(by_topic.items(), key=lambda t: (-len(t[1]), t[0])):
        fresh = sorted((i for i in items if i.key not in used), key=lambda i: i.key)
        if len(fresh) >= least:
            used.update(i.key for i in fresh)
            out.append((topic, fresh))
    return out
