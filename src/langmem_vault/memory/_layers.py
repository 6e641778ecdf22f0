"""Memory layers: short-term (this session's working set), working (recent), long-term.

Every fact and episode carries its ``layer``. The layer decides how long the store keeps it,
through the store's own TTL (``PutOp(ttl=...)``: nothing here deletes anything by a timer):

- ``short_term``: a session's working set, 2 hours by default (an app's session note, a
  passing remark extracted with low confidence);
- ``working``: recent and not yet proven (what a conversation taught), 7 days;
- ``long_term``: promoted, or created or confirmed by the user; no expiry.

A memory moves up when its **effectiveness** passes a threshold. Effectiveness counts use
(injections), citations, explicit thumbs-up, confirmations and repetition (extraction
proposing the same fact again). A rewrite for a promotion re-puts the memory with its new
layer's TTL (``None`` for long-term), which is how the store forgets the old expiry.

On stores without TTL support (langgraph's ``InMemoryStore``) layers still rank and promote,
but nothing expires.

>>> policy = LayerPolicy()
>>> policy.ttl_minutes("working"), policy.ttl_minutes("long_term")
(10080.0, None)
>>> policy.promoted({"layer": "working", "mentions": 4}, {})
'long_term'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

__all__ = [
    "DEFAULT_LAYERS",
    "LAYERS",
    "Layer",
    "LayerPolicy",
    "effectiveness",
]

Layer = Literal["short_term", "working", "long_term"]
LAYERS: tuple[str, ...] = get_args(Layer)


def effectiveness(value: Mapping[str, Any], usage: Mapping[str, Any] | None) -> dict[str, float]:
    """The evidence that a memory is worth keeping, counted from its value and usage record.

    >>> effectiveness({"mentions": 3}, {"access_count": 2, "citations": 1, "feedback_up": 1})
    {'uses': 2.0, 'citations': 1.0, 'confirmations': 1.0, 'repetitions': 2.0}
    """
    usage = usage or {}
    return {
        "uses": float(usage.get("access_count", 0) or 0),
        "citations": float(usage.get("citations", 0) or 0),
        # A thumbs-up is the user confirming the memory was right and useful.
        "confirmations": float(usage.get("feedback_up", 0) or 0),
        "repetitions": float(max(int(value.get("mentions", 1) or 1) - 1, 0)),
    }


@dataclass(frozen=True)
class LayerPolicy:
    """Lifetimes of the layers, the promotion thresholds and the weights of the evidence.

    ``score = uses x use_weight + citations x citation_weight + confirmations x
    confirmation_weight + repetitions x repetition_weight``; a short-term memory becomes
    working at ``to_working`` and any memory long-term at ``to_long_term``. Defaults: three
    injections count as much as one citation, and two more mentions, two citations or one
    citation and a thumbs-up make a memory long-term.

    >>> LayerPolicy(working_minutes=0)
    Traceback (most recent call last):
    ...
    ValueError: working_minutes must be a finite number of minutes > 0, got 0
    """

    short_term_minutes: float = 120.0
    working_minutes: float = 7 * 24 * 60.0
    to_working: float = 1.0
    to_long_term: float = 2.0
    use_weight: float = 1 / 3
    citation_weight: float = 1.0
    confirmation_weight: float = 1.0
    repetition_weight: float = 1.0
    #: ranking factor of a short-term memory from ANOTHER session (this session's: 1.0)
    other_session_factor: float = 0.6
    #: a fact extracted with a confidence below this starts short-term (a passing remark)
    short_term_below: float = 0.5

    def __post_init__(self) -> None:
        for name in ("short_term_minutes", "working_minutes"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a finite number of minutes > 0, got {value!r}")
        for name in (
            "to_working",
            "to_long_term",
            "use_weight",
            "citation_weight",
            "confirmation_weight",
            "repetition_weight",
        ):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.to_long_term < self.to_working:
            raise ValueError(
                f"to_long_term ({self.to_long_term}) must be >= to_working ({self.to_working})"
            )
        if not 0.0 <= self.short_term_below <= 1.0:
            raise ValueError(f"short_term_below must be in [0, 1], got {self.short_term_below!r}")
        if not 0.0 <= self.other_session_factor <= 1.0:
            raise ValueError(
                f"other_session_factor must be in [0, 1], got {self.other_session_factor!r}"
            )

    def initial(self, confidence: float) -> Layer:
        """The layer of a memory a conversation just taught (never long-term: not proven)."""
        return "short_term" if confidence < self.short_term_below else "working"

    def ttl_minutes(self, layer: str | None) -> float | None:
        """The store TTL of a memory in ``layer`` (None: kept until deleted)."""
        if layer == "short_term":
            return float(self.short_term_minutes)
        if layer == "working":
            return float(self.working_minutes)
        return None

    def score(self, value: Mapping[str, Any], usage: Mapping[str, Any] | None) -> float:
        """The effectiveness score of a memory (see the class docstring)."""
        e = effectiveness(value, usage)
        return (
            e["uses"] * self.use_weight
            + e["citations"] * self.citation_weight
            + e["confirmations"] * self.confirmation_weight
            + e["repetitions"] * self.repetition_weight
        )

    def promoted(self, value: Mapping[str, Any], usage: Mapping[str, Any] | None) -> Layer | None:
        """The layer a memory should move up to now, or None when it stays where it is.

        Layers only go up: demotion is decay's job (utility, then retirement).
        """
        layer = value.get("layer") or "long_term"
        if layer not in ("short_term", "working"):
            return None
        score = self.score(value, usage)
        if score >= self.to_long_term:
            return "long_term"
        if score >= self.to_working and layer == "short_term":
            return "working"
        return None

    def factor(self, value: Mapping[str, Any], session: str | None) -> float:
        """Ranking factor: long-term and working memories are preferred, but a short-term
        memory from THIS session (``session``: the thread id) competes at full weight."""
        if value.get("layer") != "short_term":
            return 1.0
        origin = value.get("source_thread_id") or value.get("thread_id")  # fact or episode
        if session is not None and origin == session:
            return 1.0
        return self.other_session_factor


DEFAULT_LAYERS = LayerPolicy()
