"""What recall is asked and what its branches see: the query (:class:`RecallQuery`), a fact
the search found with its score parts (:class:`Candidate`), and the :class:`Branch` protocol
that plugs one more ranked list into the fusion (``recall_plan``).

>>> RecallQuery(("memories", "u1", "semantic"), "What did Nate buy?", unnamed=10).unnamed_text
'What did buy?'
>>> RecallQuery(("memories", "u1", "semantic"), "What did Nate buy?").unnamed_text is None
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from langgraph.store.base import Item, SearchItem

from langmem_vault.memory._recall.subjects import without_names
from langmem_vault.memory._recall.usage import Target

__all__ = ["Branch", "Candidate", "RecallQuery", "search_score", "target_of", "unnamed_candidates"]


def unnamed_candidates(candidates: int) -> int:
    """How many candidates the search without the question's names reads beside a search of
    ``candidates``: a third (more fills the pool with other people's lines: LoCoMo 0-4,
    bench/RESULTS.md).

    >>> unnamed_candidates(300), unnamed_candidates(50)
    (100, 16)
    """
    return candidates // 3


@dataclass(frozen=True)
class RecallQuery:
    """What is asked: the user's fact namespace, the query text (None: no relevance, the
    most useful facts), the moment it asks about (``as_of``), how many candidates the search
    reads, whether the store joins usage records to it (``runs_mirror_search``), and how
    many candidates the second search, for the text without its names, reads (``unnamed``,
    :func:`unnamed_candidates`; 0: none)."""

    namespace: tuple[str, ...]
    text: str | None
    as_of: datetime | None = None
    candidates: int = 50
    joined_usage: bool = False
    unnamed: int = 0

    @property
    def unnamed_text(self) -> str | None:
        """The text of the second search, or None when there is none to run."""
        if not self.unnamed or not self.text:
            return None
        text = without_names(self.text)
        return text if text and text != self.text.strip() else None


@dataclass(frozen=True)
class Candidate:
    """A fact the search found, with the parts of its search score (None when the store
    does not report them: the item's own score then stands for its vector similarity)."""

    item: SearchItem | Item
    vector: float | None = None
    keyword: float | None = None


class Branch(Protocol):
    """One more ranked list for the fusion: store ops that join recall's batch, and a
    ranking read from their results (items the search did not find join the candidates)."""

    name: str

    def ops(self, query: RecallQuery) -> Sequence[Any]: ...

    def rank(
        self, query: RecallQuery, results: Sequence[Any], pool: Mapping[Target, Candidate]
    ) -> Sequence[tuple[SearchItem | Item, float]]: ...


def target_of(item: SearchItem | Item) -> Target:
    """Where ``item`` lives: its namespace and key."""
    return (tuple(item.namespace), item.key)


def search_score(item: SearchItem | Item) -> float | None:
    """The item's search score (None: not found by a search, or not indexed)."""
    score = getattr(item, "score", None)
    return None if score is None else float(score)
