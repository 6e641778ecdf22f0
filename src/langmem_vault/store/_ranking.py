"""How hybrid search ranks: one absolute relevance score, plus optional boosts for ordering.

``SearchItem.score`` is the cosine similarity between the query and the item's best indexed
field, lifted toward 1 by keyword coverage: the share of the query's distinct lexemes (after
stemming and stop-word removal) that the item's indexed text contains, each lexeme weighted by
its inverse document frequency in the store (from Postgres's statistics; equal weights until
ANALYZE has run), so a rare name counts for more than "work" or "back"::

    score = cos + (1 - cos) * text_weight * coverage

With no keyword in common the score is exactly the cosine similarity that InMemoryStore and
PostgresStore report, so thresholds keep their meaning; a full keyword match closes
``text_weight`` of the remaining gap to 1. It does not depend on the other results, so it is
comparable across queries (a rank-fusion score is not). Without embeddings configured the score
is the keyword coverage alone, in [0, 1].

``boosts`` reorder results by numeric value fields (confidence, utility...) without changing
the reported score: ``order = score + sum(weight * field)``; missing fields count as 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langmem_vault.store._validation import InvalidValueError

DEFAULT_TEXT_WEIGHT = 0.3
# Each retriever (vector, keyword) proposes at least this many candidates before re-ranking.
DEFAULT_CANDIDATES = 50
# pgvector's limit for hnsw.ef_search; iterative scans still return more rows than this.
MAX_EF_SEARCH = 1000
# A filtered or namespaced search matching at most this many items scores them all exactly.
DEFAULT_EXACT_SCAN_ROWS = 2000
# Lexemes estimated to occur in more rows than this are not used to find keyword candidates.
DEFAULT_COMMON_ROWS = 500


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_int(value: object, *, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


@dataclass(frozen=True)
class SearchRanking:
    """Ranking settings of a VaultStore.

    >>> SearchRanking(text_weight=0.4, boosts={"confidence": 0.1}).text_weight
    0.4
    """

    text_weight: float = DEFAULT_TEXT_WEIGHT
    candidates: int = DEFAULT_CANDIDATES
    boosts: Mapping[str, float] = field(default_factory=dict)
    text_config: str = "english"
    common_rows: int = DEFAULT_COMMON_ROWS
    exact_scan_rows: int = DEFAULT_EXACT_SCAN_ROWS

    def __post_init__(self) -> None:
        if not _is_number(self.text_weight) or not 0.0 <= self.text_weight <= 1.0:
            raise InvalidValueError(f"text_weight must be in [0, 1], got {self.text_weight!r}")
        for name in ("candidates", "common_rows"):
            if not _is_int(getattr(self, name), minimum=1):
                raise InvalidValueError(f"{name} must be an int >= 1, got {getattr(self, name)!r}")
        if not _is_int(self.exact_scan_rows, minimum=0):
            raise InvalidValueError(
                f"exact_scan_rows must be an int >= 0, got {self.exact_scan_rows!r}"
            )
        if not isinstance(self.text_config, str) or not self.text_config:
            raise InvalidValueError(
                f"text_config must be a text search configuration name, got {self.text_config!r}"
            )
        for name, weight in self.boosts.items():
            if not isinstance(name, str) or not name or not _is_number(weight):
                raise InvalidValueError(f"boosts must map field names to numbers: {name!r}")

    def candidate_count(self, wanted: int) -> int:
        """Candidates each retriever proposes for a page ending at result ``wanted``."""
        return max(self.candidates, 2 * wanted)

    def score_sql(self, *, hybrid: bool) -> str:
        """SQL for the relevance score over columns ``cos`` and ``coverage``."""
        if not hybrid:
            return "coverage"
        return "(coalesce(cos, 0) + (1 - coalesce(cos, 0)) * %(text_weight)s * coverage)"

    def order_sql(self, params: dict[str, Any], *, hybrid: bool) -> str:
        """SQL ordering expression: the score plus weighted numeric value fields."""
        terms = [self.score_sql(hybrid=hybrid)]
        for n, (name, weight) in enumerate(self.boosts.items()):
            params[f"boost_field{n}"] = name
            params[f"boost_weight{n}"] = float(weight)
            terms.append(
                f"%(boost_weight{n})s * CASE WHEN jsonb_typeof(value -> %(boost_field{n})s) "
                f"= 'number' THEN (value -> %(boost_field{n})s)::float8 ELSE 0 END"
            )
        return " + ".join(terms)
