"""The checks applied in code to the extraction model's answer, not only asked in the prompt.

- a standing instruction needs an evidence quote found in a *human* message of the span, so
  assistant and tool messages can never create one;
- a fact whose evidence is not in a human message has its confidence capped (0.7 when it is
  quoted from an assistant or tool message, 0.5 when it is not quoted at all), so reconcile
  keeps it pending confirmation instead of trusting it;
- aliases resolve only to the facts that were shown; values are clamped into range;
- the dates a fact holds from and to are resolved against when the span was said (its last
  message's time, else now: :mod:`langmem_vault.memory._dates`); one that is no date is
  dropped, and so is an end before the start;
- a fact joining several statements ("Lives in Porto and is allergic to peanuts") is refused:
  one fact per statement, so consent or an update touching one never takes the others along
  (:mod:`~langmem_vault.extraction._clauses` decides, with spaCy's tagger).

>>> from langchain_core.messages import HumanMessage
>>> from langmem_vault.extraction._schema import AliasFact
>>> proposal = ExtractionProposal(facts=[AliasFact(text="Lives in Lyon", evidence="Paris")])
>>> checked = check_proposal(proposal, [HumanMessage("I live in Lyon")], AliasMap())
>>> checked.extraction.facts[0].confidence
0.5
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import ValidationError

from langmem_vault._nlp import load_spacy
from langmem_vault.extraction._aliases import AliasMap
from langmem_vault.extraction._clauses import split_statements
from langmem_vault.extraction._messages import message_text, span_times
from langmem_vault.extraction._schema import AliasFact, ExtractionProposal
from langmem_vault.memory._dates import resolve_date
from langmem_vault.memory._entities import ENTITY_KINDS, Entity, Relation, norm_name
from langmem_vault.memory._models import (
    CATEGORIES,
    Extraction,
    ProposedEpisode,
    ProposedFact,
    ProposedInstruction,
    utcnow,
)

logger = logging.getLogger("langmem_vault.extract")

#: Confidence caps for facts whose evidence is not in what the user said.
NON_HUMAN_EVIDENCE_CAP = 0.7
MISSING_EVIDENCE_CAP = 0.5
#: Quotes shorter than this cannot support an instruction ("always" alone matches anything).
MIN_INSTRUCTION_EVIDENCE = 8


_NORM = re.compile(r"[^\w']+")


def _norm(text: str) -> str:
    return " ".join(_NORM.sub(" ", text.lower().replace("\u2019", "'")).split())


def _found_in(quote: str, texts: Sequence[str]) -> bool:
    needle = _norm(quote)
    return bool(needle) and any(needle in _norm(t) for t in texts)


@dataclass
class Checked:
    """The validated :class:`Extraction` and what was refused, with reasons."""

    extraction: Extraction
    rejected: list[str] = field(default_factory=list)


def check_proposal(
    proposal: ExtractionProposal, messages: Sequence[BaseMessage], aliases: AliasMap
) -> Checked:
    """Resolve aliases, enforce the evidence rules and clamp values into a valid Extraction."""
    human = [message_text(m) for m in messages if isinstance(m, HumanMessage)]
    other = [message_text(m) for m in messages if not isinstance(m, HumanMessage)]
    rejected: list[str] = []
    facts: list[ProposedFact] = []
    times = span_times(messages)
    said = times[1] if times else utcnow()
    for fact in proposal.facts:
        if _joins_statements(fact.text):
            rejected.append(f"fact {fact.text!r}: joins several statements; one fact each")
            continue
        same_as, supersedes = aliases.resolve(fact.same_as), aliases.resolve(fact.supersedes)
        for name, alias, key in (
            ("same_as", fact.same_as, same_as),
            ("supersedes", fact.supersedes, supersedes),
        ):
            if alias and key is None:
                rejected.append(f"fact {fact.text!r}: {name} alias {alias!r} was never given")
        confidence = min(max(fact.confidence, 0.0), 1.0)
        if not _found_in(fact.evidence, human):
            cap = (
                NON_HUMAN_EVIDENCE_CAP if _found_in(fact.evidence, other) else MISSING_EVIDENCE_CAP
            )
            confidence = min(confidence, cap)
        entities, relations = _connections(fact)
        start, end = resolve_date(fact.valid_from, said), resolve_date(fact.valid_to, said)
        if start is not None and end is not None and end < start:
            end = None
        try:
            facts.append(
                ProposedFact(
                    text=fact.text,
                    category=fact.category if fact.category in CATEGORIES else "general",  # type: ignore[arg-type]
                    confidence=confidence,
                    evidence=fact.evidence[:2000] or None,
                    tags=fact.tags[:20],
                    same_as=same_as,
                    supersedes=supersedes,
                    entities=entities,
                    relations=relations,
                    valid_from=start,
                    valid_to=end,
                )
            )
        except ValidationError as exc:
            rejected.append(f"fact {fact.text!r}: {_first_error(exc)}")
    instructions: list[ProposedInstruction] = []
    for ins in proposal.instructions:
        evidence = ins.evidence.strip()
        if len(_norm(evidence)) < MIN_INSTRUCTION_EVIDENCE or not _found_in(evidence, human):
            rejected.append(
                f"instruction {ins.text!r}: its evidence is not a quote of a user message"
            )
            continue
        try:
            instructions.append(
                ProposedInstruction(
                    text=ins.text, priority=min(max(ins.priority, 1), 10), condition=ins.condition
                )
            )
        except ValidationError as exc:
            rejected.append(f"instruction {ins.text!r}: {_first_error(exc)}")
    episode = None
    if proposal.episode is not None:
        ep = proposal.episode
        try:
            episode = ProposedEpisode(
                summary=ep.summary,
                importance=min(max(ep.importance, 0.0), 1.0),
                outcome=(ep.outcome or None) and ep.outcome[:500],
                topics=ep.topics[:20],
            )
        except ValidationError as exc:
            rejected.append(f"episode: {_first_error(exc)}")
    for reason in rejected:
        logger.warning("extract: refused %s", reason)
    return Checked(Extraction(facts=facts, episode=episode, instructions=instructions), rejected)


# Only a fact with a place to cut is parsed ("Lives in Lyon" never loads spaCy).
_MAY_JOIN = re.compile(r"[,;\n]|\s[-\u2013\u2014]\s|\b(?:and|but|also|plus)\b", re.IGNORECASE)


# A quote of the user ('User said: "..."') is one statement however it reads.
_QUOTED = re.compile(r'"[^"]*"')


def _connections(fact: AliasFact) -> tuple[list[Entity], list[Relation]]:
    """A fact's entities and relations, clamped: an unknown kind is a thing, an invalid one
    or a relation to a name the fact does not list is left out (never the whole fact)."""
    entities: dict[str, Entity] = {}
    for said in fact.entities[:20]:
        kind = said.kind.lower() if said.kind.lower() in ENTITY_KINDS else "thing"
        try:
            entity = Entity(name=said.name, kind=kind, aliases=said.aliases)  # type: ignore[arg-type]
        except ValidationError:
            continue
        entities.setdefault(norm_name(entity.name), entity)
    relations = []
    for rel in fact.relations[:20]:
        if {norm_name(rel.subject), norm_name(rel.object)} <= set(entities):
            try:
                relations.append(Relation.model_validate(rel.model_dump()))
            except ValidationError:
                continue
    return list(entities.values()), relations


def _joins_statements(text: str) -> bool:
    text = _QUOTED.sub('""', text)
    return bool(_MAY_JOIN.search(text)) and len(split_statements(text, load_spacy())) > 1


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
