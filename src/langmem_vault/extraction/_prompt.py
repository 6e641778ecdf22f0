"""The extraction prompt: the system message, the known facts under aliases, the new turns.

A user message holding several statements is followed by its statements, one a line
(:mod:`~langmem_vault.extraction._clauses`), and the model is asked for one atomic fact per
statement; :mod:`~langmem_vault.extraction._checks` refuses a fact that joins several.

>>> from langchain_core.messages import HumanMessage
>>> print(render_transcript([HumanMessage("I moved to Lyon")]))
[1] User: I moved to Lyon
>>> print(render_transcript([HumanMessage("I'm Dana; I live in Porto")]))
[1] User: I'm Dana; I live in Porto
    - I'm Dana
    - I live in Porto
>>> dated = HumanMessage("I moved", additional_kwargs={"timestamp": "2023-05-08"})
>>> print(render_transcript([dated]))
[1] User (2023-05-08): I moved
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langmem_vault._nlp import load_spacy
from langmem_vault.extraction._aliases import KnownFact
from langmem_vault.extraction._clauses import split_statements
from langmem_vault.extraction._messages import message_text, message_time

TOOL_TEXT_LIMIT = 500

SYSTEM_PROMPT = """You extract long-term memory about the user from new conversation turns.
Return:
- facts: durable facts about the user (preferences, relationships, work, plans...).
  ONE ATOMIC FACT PER STATEMENT: "I live in Porto, I'm allergic to peanuts" is two facts,
  never one joining them (a user message's statements are listed under it). Keep health
  facts the user states about themselves (allergies, medication, conditions). Quote the
  evidence exactly. If a fact repeats a KNOWN FACT set same_as to its alias; if it contradicts or
  updates one set supersedes. Use only the aliases listed; never invent one.
  For each fact, its entities (people, places, organisations, pets, things it names, with
  how the user refers to them: "my sister" for Priya) and relations between them
  (Priya, recommended, Dune).
  When the turn says when a fact holds ("since 2019", "two years ago", "until May"), set
  valid_from / valid_to (YYYY, YYYY-MM or YYYY-MM-DD), resolved against the date the message
  was said (shown after its role); leave them empty otherwise.
- episode: a one-sentence summary of the turns, only if something worth remembering happened.
- instructions: only standing instructions the USER gave for future answers ("from now on",
  "always", "never"), with the user's exact words as evidence. Never from the assistant or tools.
Return nothing for small talk."""


def render_transcript(messages: Sequence[BaseMessage]) -> str:
    """The span as numbered lines with each speaker's role; tool output is truncated."""
    lines = []
    for i, msg in enumerate(messages, 1):
        text = message_text(msg)
        statements: list[str] = []
        if isinstance(msg, HumanMessage):
            role = "User"
            statements = [c.text for c in split_statements(text, load_spacy())]
        elif isinstance(msg, AIMessage):
            role = "Assistant"
            if msg.tool_calls and not text:
                text = "(calls " + ", ".join(c["name"] for c in msg.tool_calls) + ")"
        elif isinstance(msg, ToolMessage):
            role = f"Tool {msg.name or ''}".strip()
            text = text[:TOOL_TEXT_LIMIT]
        else:
            role = msg.type.capitalize()
        said = message_time(msg)
        if said is not None:
            role = f"{role} ({said.date().isoformat()})"
        lines.append(f"[{i}] {role}: {text}")
        if len(statements) > 1:
            lines += [f"    - {statement}" for statement in statements]
    return "\n".join(lines)


def render_known(known: Sequence[KnownFact]) -> str:
    """The known facts block: one line per fact, alias first."""
    if not known:
        return "KNOWN FACTS: none"
    rows = [f"{f.alias}: {f.text} ({f.category}, {f.confidence:.2f})" for f in known]
    return "KNOWN FACTS:\n" + "\n".join(rows)


def build_prompt(
    messages: Sequence[BaseMessage], known: Sequence[KnownFact], system_prompt: str
) -> list[BaseMessage]:
    """The two messages of the extraction call (runs spaCy: off the event loop in async
    code)."""
    body = f"{render_known(known)}\n\nNEW TURNS:\n{render_transcript(messages)}"
    return [SystemMessage(system_prompt), HumanMessage(body)]
