"""The memories inject put in front of the model, as data rather than prose.

Inject renders its selection as text (``state["memory_context"]``) for the model to read, and
also keeps it as a list of :class:`InjectedMemory` (``state["memory_items"]``). The respond
node attaches that list to its system message under ``additional_kwargs[INJECTED_KEY]`` (chat
model integrations ignore keys they do not know), so code that must act on the memories,
such as the offline ``RecallChatModel``, reads them there instead of parsing the wording of
the text, which is free to change.

>>> from langchain_core.messages import HumanMessage, SystemMessage
>>> fact = fact_entry("M1", {"text": "User lives in Lyon", "category": "personal"})
>>> system = SystemMessage("...", additional_kwargs={INJECTED_KEY: [fact]})
>>> [m["text"] for m in injected_memories([system, HumanMessage("Where do I live?")])]
['User lives in Lyon']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired

from langchain_core.messages import BaseMessage, SystemMessage

# pydantic (LangGraph's JSON schemas of the state, Studio's forms) needs this TypedDict on 3.11
from typing_extensions import TypedDict

from langmem_vault.memory._models import Instruction

__all__ = [
    "INJECTED_KEY",
    "InjectedMemory",
    "episode_entry",
    "fact_entry",
    "injected_memories",
    "instruction_entry",
]

#: the key of a system message's ``additional_kwargs`` that holds the injected memories
INJECTED_KEY = "langmem_vault_memories"


class InjectedMemory(TypedDict):
    """One memory shown to the model this turn (JSON-ready: it lives in the graph state)."""

    kind: Literal["instruction", "fact", "episode"]
    #: the citation label ("M1", ...); "" for instructions, which are not cited
    alias: str
    #: a fact's or instruction's text, an episode's summary
    text: str
    #: a fact's category; "" otherwise
    category: str
    #: an instruction's priority; 0 otherwise
    priority: int
    #: a fact that waits for the user's confirmation
    pending: bool
    #: the store key of a fact or episode (the injection trace links to it)
    key: NotRequired[str]
    #: why it was picked: relevance, confidence, recency, utility and the total score
    #: (``memory.scoring.score_parts``), kept for the injection trace
    scores: NotRequired[dict[str, float | None]]


def instruction_entry(instruction: Instruction) -> InjectedMemory:
    """The entry of an injected standing instruction."""
    return InjectedMemory(
        kind="instruction",
        alias="",
        text=instruction.text,
        category="",
        priority=instruction.priority,
        pending=False,
    )


def _traced(
    entry: InjectedMemory, key: str | None, scores: Mapping[str, float | None] | None
) -> InjectedMemory:
    if key is not None:
        entry["key"] = key
    if scores is not None:
        entry["scores"] = dict(scores)
    return entry


def fact_entry(
    alias: str,
    value: Mapping[str, Any],
    *,
    key: str | None = None,
    scores: Mapping[str, float | None] | None = None,
) -> InjectedMemory:
    """The entry of an injected fact, from its stored value (``key`` and ``scores``, when
    given, are kept for the injection trace)."""
    entry = InjectedMemory(
        kind="fact",
        alias=alias,
        text=str(value.get("text", "")),
        category=str(value.get("category", "general")),
        priority=0,
        pending=value.get("status") == "pending_confirmation",
    )
    return _traced(entry, key, scores)


def episode_entry(
    alias: str,
    value: Mapping[str, Any],
    *,
    key: str | None = None,
    scores: Mapping[str, float | None] | None = None,
) -> InjectedMemory:
    """The entry of an injected episode, from its stored value."""
    entry = InjectedMemory(
        kind="episode",
        alias=alias,
        text=str(value.get("summary", "")),
        category="",
        priority=0,
        pending=False,
    )
    return _traced(entry, key, scores)


def injected_memories(messages: Sequence[BaseMessage]) -> list[InjectedMemory]:
    """The memories attached to the system messages of a prompt (none when nothing is)."""
    found: list[InjectedMemory] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            found.extend(message.additional_kwargs.get(INJECTED_KEY) or [])
    return found
