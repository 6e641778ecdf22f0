"""How inject writes what it selected: the memory section of the prompt, best first within a
token budget (instructions, then facts with their dates, then recent episodes), and the same
memories as data for the injection trace.

>>> from langmem_vault.memory._recall.scoring import ScoredMemory
>>> fact = ScoredMemory("k1", {"text": "Lives in Lyon", "category": "personal"}, 0.9)
>>> print(render([], [fact], [], max_tokens=200, count=make_token_counter(None)).context)
## What you remember about this user
Facts (cite the ones you use as [M1], [M2]):
- [M1] Lives in Lyon (personal)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

from langmem_vault.memory._models import Instruction, utcnow
from langmem_vault.memory._recall.injected import (
    InjectedMemory,
    episode_entry,
    fact_entry,
    instruction_entry,
)
from langmem_vault.memory._recall.scoring import (
    DEFAULT_WEIGHTS,
    ScoredMemory,
    ScoringWeights,
    as_datetime,
    score_parts,
)
from langmem_vault.memory._recall.time_filter import date_label

__all__ = ["PENDING", "Injection", "TokenCounter", "make_token_counter", "render"]

TokenCounter = Callable[[str], int]

HEADER = "## What you remember about this user"
INSTRUCTIONS_HEADER = (
    "Standing instructions from the user (follow them; if two conflict, the higher priority wins):"
)
FACTS_HEADER = "Facts (cite the ones you use as [M1], [M2]):"
PENDING = "pending_confirmation"
EPISODES_HEADER = "Recent conversations:"


def _default_counter(text: str) -> int:
    # langchain-core's approximation counts a plain-text system message by its length (its
    # characters and the role's), not by what they say, so one count serves every line of a
    # length. Cached per text, a fact's line missed whenever its alias moved ("[M3]" one turn,
    # "[M4]" the next): half of inject's lines a turn at 10k facts, about 5 us each to build a
    # message and count it (bench/RESULTS.md, session 18). tests/nodes/test_inject_render.py
    # checks the counts stay langchain-core's.
    return _count_of_length(len(text))


@lru_cache(maxsize=4096)
def _count_of_length(length: int) -> int:
    return count_tokens_approximately([SystemMessage("x" * length)])


def make_token_counter(counter: TokenCounter | BaseLanguageModel[Any] | None) -> TokenCounter:
    """A text -> tokens function: langchain-core's approximation, a model's, or your own."""
    if counter is None:
        return _default_counter
    if isinstance(counter, BaseLanguageModel):
        return counter.get_num_tokens
    return counter


@dataclass(frozen=True)
class Injection:
    """What inject selected for this turn."""

    context: str
    refs: dict[str, str]
    instructions: list[tuple[str, Instruction]]
    facts: list[ScoredMemory]
    episodes: list[ScoredMemory]
    preview: list[str] = field(default_factory=list)
    #: the rendered memories as data, in the order of the text (see ``memory.injected``)
    memories: list[InjectedMemory] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.instructions) + len(self.facts) + len(self.episodes)


def _fact_line(alias: str, value: Mapping[str, Any]) -> str:
    # A pending fact says so first: the model should hedge ("you mentioned...") or ask.
    mark = "(unconfirmed) " if value.get("status") == PENDING else ""
    about = str(value.get("category", "general"))
    when = date_label(value)  # "since May 2023", "said 3 Jun 2024"; nothing when unknown
    if when:
        about = f"{about}; {when}"
    return f"- [{alias}] {mark}{value.get('text', '')} ({about})"


def _episode_line(alias: str, value: Mapping[str, Any]) -> str:
    ended = as_datetime(value.get("ended_at"))
    when = ended.date().isoformat() if ended else "earlier"
    outcome = f" Outcome: {value['outcome']}." if value.get("outcome") else ""
    return f"- [{alias}] {when}: {value.get('summary', '')}{outcome}"


def render(
    instructions: Sequence[tuple[str, Instruction]],
    facts: Sequence[ScoredMemory],
    episodes: Sequence[ScoredMemory],
    *,
    max_tokens: int,
    count: TokenCounter,
    now: datetime | None = None,
    weights: ScoringWeights = DEFAULT_WEIGHTS,
) -> Injection:
    """Render the memory section best-first until the token budget is spent.

    Each line is counted on its own; the sum over-estimates the block, so the block never
    exceeds ``max_tokens``. Each fact's and episode's entry keeps its key and score parts
    (``score_parts`` at ``now``) for the injection trace.
    """
    moment = now or utcnow()
    lines: list[str] = []
    used = 0
    refs: dict[str, str] = {}
    kept_i: list[tuple[str, Instruction]] = []
    kept_f: list[ScoredMemory] = []
    kept_e: list[ScoredMemory] = []
    memories: list[InjectedMemory] = []

    def fits(*new: str) -> bool:
        nonlocal used
        cost = sum(count(line) for line in new)
        if used + cost > max_tokens:
            return False
        used += cost
        lines.extend(new)
        return True

    if not fits(HEADER):
        return Injection("", {}, [], [], [])
    pending_header: str | None = INSTRUCTIONS_HEADER
    for key, instruction in instructions:
        line = f"- (priority {instruction.priority}) {instruction.text}"
        if not fits(*([pending_header] if pending_header else []), line):
            break
        pending_header = None
        kept_i.append((key, instruction))
        memories.append(instruction_entry(instruction))
    pending_header = FACTS_HEADER
    for memory in facts:
        alias = f"M{len(refs) + 1}"
        line = _fact_line(alias, memory.value)
        if not fits(*([pending_header] if pending_header else []), line):
            break
        pending_header = None
        refs[alias] = memory.key
        kept_f.append(memory)
        parts = score_parts(memory, moment, weights)
        memories.append(fact_entry(alias, memory.value, key=memory.key, scores=parts))
    pending_header = EPISODES_HEADER
    for memory in episodes:
        alias = f"M{len(refs) + 1}"
        line = _episode_line(alias, memory.value)
        if not fits(*([pending_header] if pending_header else []), line):
            break
        pending_header = None
        refs[alias] = memory.key
        kept_e.append(memory)
        parts = {"score": round(memory.score, 4)}
        memories.append(episode_entry(alias, memory.value, key=memory.key, scores=parts))
    if not (kept_i or kept_f or kept_e):
        return Injection("", {}, [], [], [])
    preview = [i.text for _, i in kept_i] + [str(m.value.get("text", "")) for m in kept_f]
    preview += [str(m.value.get("summary", "")) for m in kept_e]
    return Injection(
        context="\n".join(lines),
        refs=refs,
        instructions=kept_i,
        facts=kept_f,
        episodes=kept_e,
        preview=[p if len(p) <= 80 else p[:77] + "..." for p in preview[:5]],
        memories=memories,
    )
