"""``RecallChatModel``: a tiny offline chat model that answers from the injected memories.

It stands in for an LLM in the demo and in tests: it reads the memories inject selected from
the system message's structured field (``additional_kwargs[INJECTED_KEY]``, which the respond
node and :func:`~langmem_vault.nodes._respond.memory_system_message` fill), never the wording of
the rendered text; without that field it knows nothing. It answers a question with the
remembered facts that share words with it (citing them as ``[M1]``), acknowledges statements,
and follows a few kinds of standing instruction ("end your answers with X", "start with X",
"answer in uppercase"). No network, no weights, deterministic.

>>> from langchain_core.messages import HumanMessage, SystemMessage
>>> from langmem_vault.memory._recall.injected import INJECTED_KEY, fact_entry
>>> lyon = fact_entry("M1", {"text": "User lives in Lyon", "category": "personal"})
>>> system = SystemMessage("(any text)", additional_kwargs={INJECTED_KEY: [lyon]})
>>> RecallChatModel().invoke([system, HumanMessage("Where do I live?")]).content
'From what you told me: you live in Lyon [M1].'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langmem_vault.memory._recall.injected import InjectedMemory, injected_memories

__all__ = ["RecallChatModel"]

_WORD = re.compile(r"[a-z0-9']+")
_STOP = set(
    [
        "a",
        "an",
        "the",
        "i",
        "me",
        "my",
        "mine",
        "you",
        "your",
        "yours",
        "do",
        "does",
        "did",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "what",
        "where",
        "who",
        "when",
        "which",
        "why",
        "how",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "and",
        "or",
        "about",
        "tell",
        "remember",
        "know",
        "again",
        "can",
        "could",
        "would",
        "should",
        "please",
        "any",
        "anything",
        "there",
        "here",
        "that",
        "this",
        "it",
        "its",
        "user",
        "user's",
        "have",
        "has",
        "had",
    ]
)
_VERBS = {"is": "are", "has": "have", "was": "were"}
_QUESTION_START = re.compile(r"^(what|where|who|when|which|why|how|do|does|did|can|is|are)\b")


def _stem(word: str) -> str:
    word = word.removesuffix("'s")
    for suffix in ("ing", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _terms(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP}


def _second_person(fact: str) -> str:
    """'User lives in Lyon' -> 'you live in Lyon'; "User's name is Dana" -> 'your name is Dana'."""
    if fact.startswith("User's "):
        return "your " + fact[len("User's ") :]
    if fact.startswith("User "):
        verb, _, rest = fact[len("User ") :].partition(" ")
        verb = _VERBS.get(verb, verb[:-1] if verb.endswith("s") else verb)
        return f"you {verb} {rest}".strip()
    return fact[:1].lower() + fact[1:]


def _apply_instructions(answer: str, instructions: list[str]) -> str:
    for text in instructions:
        lowered = text.lower()
        if "uppercase" in lowered or "capital letters" in lowered:
            answer = answer.upper()
        end = re.search(r"\bend\b.*?\bwith\s+['\"“]?(.+?)['\"”]?\.?$", text, re.IGNORECASE)
        if end and not answer.endswith(end.group(1)):
            answer = f"{answer} {end.group(1)}"
        start = re.search(r"\b(?:start|begin)\b.*?\bwith\s+['\"“]?(.+?)['\"”]?\.?$", text, re.I)
        if start and not answer.startswith(start.group(1)):
            answer = f"{start.group(1)} {answer}"
    return answer


class RecallChatModel(BaseChatModel):
    """Answers from the memories attached to its system message (offline, deterministic)."""

    max_facts: int = 3

    @property
    def _llm_type(self) -> str:
        return "langmem-vault-recall"

    def answer(self, memories: Sequence[InjectedMemory], question: str) -> str:
        """The reply to ``question`` given the injected memories."""
        instructions = [m["text"] for m in memories if m["kind"] == "instruction"]
        asked = question.strip().endswith("?") or bool(_QUESTION_START.match(question.lower()))
        if not asked:
            return _apply_instructions("Thanks, noted.", instructions)
        wanted = _terms(question)
        scored = []
        facts = [m for m in memories if m["kind"] == "fact"]
        for order, fact in enumerate(facts):
            overlap = len(wanted & _terms(fact["text"]))
            if overlap:
                said = _second_person(fact["text"]) + (" (unconfirmed)" if fact["pending"] else "")
                scored.append((-overlap, order, fact["alias"], said))
        scored.sort()
        if not scored:
            return _apply_instructions("I don't know that yet.", instructions)
        parts = [f"{said} [{alias}]" for _, _, alias, said in scored[: self.max_facts]]
        return _apply_instructions("From what you told me: " + "; ".join(parts) + ".", instructions)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        question = next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        reply = AIMessage(content=self.answer(injected_memories(messages), question))
        return ChatResult(generations=[ChatGeneration(message=reply)])
