"""Short aliases (``F1``, ``F2`` ...) for the stored facts shown to the extraction model.

The model never sees store keys, so it cannot point at a fact that does not exist: an alias
it invents resolves to nothing (the fact is then kept as a new proposal).

>>> aliases = AliasMap.build([("key-1", "Lives in Lyon", "personal", 0.9)])
>>> aliases.resolve("F1"), aliases.resolve("F7")
('key-1', None)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class KnownFact:
    """A stored fact shown to the model: its alias and what it says (never its key)."""

    alias: str
    key: str
    text: str
    category: str
    confidence: float


@dataclass
class AliasMap:
    """Short aliases (``F1``...) for stored facts; resolves only the aliases it handed out."""

    facts: list[KnownFact] = field(default_factory=list)

    @classmethod
    def build(cls, rows: Sequence[tuple[str, str, str, float]]) -> AliasMap:
        """From ``(key, text, category, confidence)`` rows, in relevance order."""
        return cls([KnownFact(f"F{i}", k, t, c, conf) for i, (k, t, c, conf) in enumerate(rows, 1)])

    def resolve(self, alias: str | None) -> str | None:
        """The store key behind ``alias``, or ``None`` when the alias was never handed out."""
        if not alias:
            return None
        wanted = alias.strip().strip("[]").upper()
        for fact in self.facts:
            if fact.alias == wanted:
                return fact.key
        return None
