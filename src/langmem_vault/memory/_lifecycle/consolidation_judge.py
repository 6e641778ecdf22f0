"""Who decides, per cluster, what consolidation does: a chat model (one call per cluster) or
the offline rules.

A **fact cluster** (related current facts) gets a :class:`FactVerdict`: groups of
near-duplicates to merge, and pairs that contradict each other (reconcile missed them: they
will wait for the user's confirmation). An **episode cluster** (conversations on one topic)
gets a summary: one semantic fact, the spec's "prospective reflection".

:class:`OfflineJudge` needs no model: duplicates are texts that match almost word for word,
contradictions are two facts of one category that open with the same two words ("lives in
Lyon" / "lives in Paris") or differ by a negation only; a summary lists the episodes.
:class:`ModelJudge` asks a chat model (``with_structured_output``); if the call fails, the
offline rules answer instead, so a consolidation run never stops on a model error.

>>> judge = OfflineJudge()
>>> v = judge.judge_facts([FactView("a", "Lives in Lyon", "personal"),
...                        FactView("b", "Lives in Paris", "personal")])
>>> v.contradictions
[('a', 'b')]
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from langmem_vault.telemetry._metering import metered_call

__all__ = [
    "ClusterJudge",
    "EpisodeView",
    "FactVerdict",
    "FactView",
    "ModelJudge",
    "OfflineJudge",
    "lexical_similarity",
]

logger = logging.getLogger("langmem_vault.consolidation")

_WORD = re.compile(r"[\w']+")
_NEGATIONS = {"not", "no", "never", "don't", "doesn't", "isn't", "won't", "can't", "dislikes"}


@dataclass(frozen=True)
class FactView:
    """What a judge sees of a fact (no ids beyond the key, no usage)."""

    key: str
    text: str
    category: str


@dataclass(frozen=True)
class EpisodeView:
    """What a judge sees of an episode."""

    key: str
    summary: str
    topics: tuple[str, ...] = ()


@dataclass
class FactVerdict:
    """Duplicate groups (keys) and contradicting pairs (older key, newer key as given)."""

    duplicates: list[list[str]] = field(default_factory=list)
    contradictions: list[tuple[str, str]] = field(default_factory=list)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def lexical_similarity(a: str, b: str) -> float:
    """Similarity of two texts in [0, 1], word by word (order-aware).

    >>> lexical_similarity("Likes green tea", "likes green tea.")
    1.0
    """
    return difflib.SequenceMatcher(None, _words(a), _words(b)).ratio()


@runtime_checkable
class ClusterJudge(Protocol):
    """One decision per cluster, sync and async."""

    def judge_facts(self, facts: Sequence[FactView]) -> FactVerdict: ...

    async def ajudge_facts(self, facts: Sequence[FactView]) -> FactVerdict: ...

    def summarize(self, episodes: Sequence[EpisodeView]) -> str | None: ...

    async def asummarize(self, episodes: Sequence[EpisodeView]) -> str | None: ...


class OfflineJudge:
    """The rules of the module docstring; deterministic, so a rerun decides the same."""

    def __init__(self, *, duplicate_threshold: float = 0.85) -> None:
        self.duplicate_threshold = duplicate_threshold

    def judge_facts(self, facts: Sequence[FactView]) -> FactVerdict:
        verdict = FactVerdict()
        groups: dict[str, list[str]] = {}
        leader: dict[str, str] = {}
        for i, a in enumerate(facts):
            for b in facts[i + 1 :]:
                if a.key in leader and b.key in leader:
                    continue
                if lexical_similarity(a.text, b.text) >= self.duplicate_threshold:
                    head = leader.get(a.key, a.key)
                    leader.setdefault(a.key, head)
                    leader[b.key] = head
                    groups.setdefault(head, [head]).append(b.key)
                elif a.category == b.category and _contradict(a.text, b.text):
                    verdict.contradictions.append((a.key, b.key))
        verdict.duplicates = [list(dict.fromkeys(g)) for g in groups.values()]
        merged = {k for g in verdict.duplicates for k in g[1:]}
        verdict.contradictions = [
            p for p in verdict.contradictions if p[0] not in merged and p[1] not in merged
        ]
        return verdict

    async def ajudge_facts(self, facts: Sequence[FactView]) -> FactVerdict:
        return self.judge_facts(facts)

    def summarize(self, episodes: Sequence[EpisodeView]) -> str | None:
        if not episodes:
            return None
        shared = set(episodes[0].topics).intersection(*(e.topics for e in episodes[1:]))
        topic = sorted(shared)[0] if shared else "one subject"
        parts = "; ".join(e.summary.rstrip(".") for e in episodes[:5])
        more = f" (and {len(episodes) - 5} more)" if len(episodes) > 5 else ""
        return f"Came back to {topic} in {len(episodes)} conversations: {parts}{more}."[:2000]

    async def asummarize(self, episodes: Sequence[EpisodeView]) -> str | None:
        return self.summarize(episodes)


def _contradict(a: str, b: str) -> bool:
    wa, wb = _words(a), _words(b)
    if len(wa) < 3 or len(wb) < 3:
        return False
    na, nb = bool(_NEGATIONS & set(wa)), bool(_NEGATIONS & set(wb))
    if na != nb:  # one denies what the other states about the same object
        rest_a = [w for w in wa if w not in _NEGATIONS]
        rest_b = [w for w in wb if w not in _NEGATIONS]
        return difflib.SequenceMatcher(None, rest_a, rest_b).ratio() >= 0.6
    # Same opening ("lives in", "works at"), a different object: one slot, two values.
    return wa[:2] == wb[:2] and wa[2:] != wb[2:] and len(set(wa[2:]) & set(wb[2:])) == 0


# --- the model judge ---------------------------------------------------------------------------


class _Verdict(BaseModel):
    duplicates: list[list[int]] = Field(
        default_factory=list, description="groups of fact numbers that say the same thing"
    )
    contradictions: list[list[int]] = Field(
        default_factory=list, description="pairs of fact numbers that cannot both be true"
    )


class _Summary(BaseModel):
    summary: str = Field(description="one durable fact about the user these conversations show")


FACTS_PROMPT = (
    "You maintain a user's long-term memory. Below are related facts, numbered. List the groups "
    "of numbers that state the same thing (near-duplicates) and the pairs that contradict each "
    "other. Use only the numbers shown; leave lists empty when nothing applies."
)
EPISODES_PROMPT = (
    "You maintain a user's long-term memory. Below are summaries of several conversations on "
    "one subject. Write ONE short fact about the user that they show together (a lasting "
    "interest, habit or goal), in the third person, without dates."
)


class ModelJudge:
    """A chat model as the judge: one ``with_structured_output`` call per cluster; numbers
    stand for keys in the prompt, so the model cannot invent a key. Falls back to
    ``fallback`` (the offline rules) when the call fails or answers nonsense."""

    def __init__(self, model: Any, *, fallback: ClusterJudge | None = None) -> None:
        self.model = model
        self.fallback = fallback or OfflineJudge()
        self._facts = model.with_structured_output(_Verdict)
        self._episodes = model.with_structured_output(_Summary)

    @staticmethod
    def _facts_prompt(facts: Sequence[FactView]) -> list[Any]:
        lines = "\n".join(f"{i}. [{f.category}] {f.text}" for i, f in enumerate(facts, 1))
        return [SystemMessage(FACTS_PROMPT), HumanMessage(lines)]

    @staticmethod
    def _episodes_prompt(episodes: Sequence[EpisodeView]) -> list[Any]:
        lines = "\n".join(f"- {e.summary}" for e in episodes)
        return [SystemMessage(EPISODES_PROMPT), HumanMessage(lines)]

    @staticmethod
    def _verdict(raw: Any, facts: Sequence[FactView]) -> FactVerdict:
        parsed = raw if isinstance(raw, _Verdict) else _Verdict.model_validate(raw)

        def key(n: int) -> str:
            if not 1 <= n <= len(facts):
                raise ValueError(f"the model named fact {n}, which does not exist")
            return facts[n - 1].key

        verdict = FactVerdict(
            duplicates=[list(dict.fromkeys(key(n) for n in g)) for g in parsed.duplicates],
            contradictions=[(key(p[0]), key(p[1])) for p in parsed.contradictions if len(p) == 2],
        )
        verdict.duplicates = [g for g in verdict.duplicates if len(g) > 1]
        return verdict

    @staticmethod
    def _summary(raw: Any) -> str | None:
        parsed = raw if isinstance(raw, _Summary) else _Summary.model_validate(raw)
        text = " ".join(parsed.summary.split())
        return text[:2000] or None

    def judge_facts(self, facts: Sequence[FactView]) -> FactVerdict:
        try:
            with metered_call("judge", self.model):
                raw = self._facts.invoke(self._facts_prompt(facts))
            return self._verdict(raw, facts)
        except Exception:
            logger.warning("consolidation model failed; offline rules decide", exc_info=True)
            return self.fallback.judge_facts(facts)

    async def ajudge_facts(self, facts: Sequence[FactView]) -> FactVerdict:
        try:
            with metered_call("judge", self.model):
                raw = await self._facts.ainvoke(self._facts_prompt(facts))
            return self._verdict(raw, facts)
        except Exception:
            logger.warning("consolidation model failed; offline rules decide", exc_info=True)
            return await self.fallback.ajudge_facts(facts)

    def summarize(self, episodes: Sequence[EpisodeView]) -> str | None:
        try:
            with metered_call("consolidate", self.model):
                raw = self._episodes.invoke(self._episodes_prompt(episodes))
            return self._summary(raw)
        except Exception:
            logger.warning("consolidation model failed; offline rules decide", exc_info=True)
            return self.fallback.summarize(episodes)

    async def asummarize(self, episodes: Sequence[EpisodeView]) -> str | None:
        try:
            with metered_call("consolidate", self.model):
                raw = await self._episodes.ainvoke(self._episodes_prompt(episodes))
            return self._summary(raw)
        except Exception:
            logger.warning("consolidation model failed; offline rules decide", exc_info=True)
            return await self.fallback.asummarize(episodes)
