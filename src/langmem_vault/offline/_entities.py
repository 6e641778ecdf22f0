"""The entities and relations a fact names, offline: spaCy's parser and NER plus role patterns.

Names are the proper nouns of the text (spaCy's PROPN runs) and its named entities; a name
said with a role becomes that entity's alias, in the first person: "my sister Priya",
"Priya, my sister", "my sister is Priya", "User's boss Tom" (the offline extractor's facts
are in the third person) all make Priya's or Tom's alias "my sister"/"my boss"; "a cat,
Mochi" or "a cat named Mochi" make Mochi a pet ("my cat"). The roles and pets are the offline
extractor's own (``patterns.toml``, parts ``RELATIONS`` and ``PETS``). Relations come from
the dependency parse: a verb whose subject and object (or the object of its preposition)
are both names, (Priya, recommended, Dune), (Tom, works at, Acme).

The small English model mislabels many names (Priya as an organisation, Lyon as a person):
a role or pet pattern decides the kind first, then "in/to/from X" (a place), then NER.

>>> entities, relations = find_entities("My sister Priya works at Acme.")
>>> [(e.name, e.kind, e.aliases) for e in entities]
[('Priya', 'person', ['my sister']), ('Acme', 'organisation', [])]
>>> [(r.subject, r.predicate, r.object) for r in relations]
[('Priya', 'works at', 'Acme')]
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources
from typing import Any

from langmem_vault._nlp import load_spacy
from langmem_vault.memory._entities import Entity, EntityKind, Relation
from langmem_vault.store._entities import norm_name

__all__ = ["find_entities"]

_NER_KINDS: dict[str, EntityKind] = {
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "organisation",
    "PRODUCT": "thing",
    "WORK_OF_ART": "thing",
    "EVENT": "thing",
    "LAW": "thing",
}
_NOT_NAMES = frozenset({"user", "i", "i'm", "me", "my", "we", "our", "said"})
_PLACE_PREPS = frozenset({"in", "to", "from", "near"})
_OBJECTS = frozenset({"dobj", "attr", "oprd", "dative", "acomp"})
# A name: capitalised words, at most three ("New York", "Anna Maria Lopez").
_NAME = r"(?P<name>[A-Z][\w'-]+(?: [A-Z][\w'-]+){0,2})"


@cache
def _patterns() -> tuple[re.Pattern[str], ...]:
    parts = tomllib.loads(
        resources.files("langmem_vault.offline").joinpath("patterns.toml").read_text("utf-8")
    )["parts"]
    owner = r"(?i:my|our|user's|the user's)"
    role = rf"(?P<role>(?i:{parts['MOD']}(?:{parts['RELATIONS']})))"
    pet = rf"(?P<pet>(?i:{parts['PETS']}))"
    return (
        # my sister Priya / my sister is Priya / my sister's name is Priya / User's boss Tom
        re.compile(
            rf"\b{owner} {role}(?:(?i:'s name is| is called| is named| is|,| named| called))?"
            rf" {_NAME}"
        ),
        # Priya, my sister
        re.compile(rf"{_NAME}, {owner} {role}\b"),
        # a cat, Mochi / a cat named Mochi / my cat is Mochi
        re.compile(
            rf"\b(?i:a|an|my|our|user's) {pet}(?:(?i:'s name is| is called| is named| is|,|"
            rf" named| called)) ?{_NAME}"
        ),
    )


def _roles(text: str) -> dict[str, tuple[EntityKind, str]]:
    """Names said with a role or as a pet: norm name -> (kind, alias)."""
    found: dict[str, tuple[EntityKind, str]] = {}
    for pattern in _patterns():
        for match in pattern.finditer(text):
            name = match["name"]
            if norm_name(name.split()[0]) in _NOT_NAMES:
                continue
            groups = match.groupdict()
            if groups.get("pet"):
                found.setdefault(norm_name(name), ("pet", "my " + norm_name(groups["pet"])))
            else:
                found.setdefault(norm_name(name), ("person", "my " + norm_name(groups["role"])))
    return found


def _spans(doc: Any) -> list[Any]:
    """Name spans: named entities of the kinds above, then PROPN runs no entity covers."""
    spans = [e for e in doc.ents if e.label_ in _NER_KINDS]
    covered = {t.i for span in spans for t in span}
    run: list[Any] = []
    for token in [*doc, None]:
        if token is not None and token.pos_ == "PROPN" and token.i not in covered:
            run.append(token)
            continue
        if run:
            spans.append(doc[run[0].i : run[-1].i + 1])
            run = []
    spans.sort(key=lambda s: s.start)
    return [s for s in spans if norm_name(s.text) and norm_name(s[0].text) not in _NOT_NAMES]


def _kind(span: Any, roles: dict[str, tuple[EntityKind, str]]) -> EntityKind:
    if norm_name(span.text) in roles:
        return roles[norm_name(span.text)][0]
    head = span.root.head
    if span.root.dep_ == "pobj" and head.lower_ in _PLACE_PREPS:
        return "place"
    if span.label_ in _NER_KINDS:
        return _NER_KINDS[span.label_]
    # a proper noun that does something ("Caroline went..."), which NER missed: a person
    return "person" if span.root.dep_ in ("nsubj", "nsubjpass") else "thing"


def _relations(doc: Any, names: dict[int, str]) -> list[Relation]:
    """(subject, verb [prep], object) where both ends are names (token index -> name)."""
    out: list[Relation] = []

    def name_in(token: Any) -> str | None:
        # the token or a name beside it ("my sister Priya"), not its whole subtree: "chess
        # with Gina" does not make Gina what was played
        near = [token, *(c for c in token.children if c.dep_ in ("appos", "compound", "flat"))]
        return next((names[t.i] for t in near if t.i in names), None)

    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        subject = name_in(subjects[0]) if subjects else None
        if subject is None:
            continue
        said = verb.lemma_ or verb.lower_  # the bundled pipeline has no lemmatizer
        objects = [(said, c) for c in verb.children if c.dep_ in _OBJECTS]
        objects += [
            (f"{said} {prep.lower_}", c)
            for prep in verb.children
            if prep.dep_ == "prep"
            for c in prep.children
            if c.dep_ == "pobj"
        ]
        for predicate, token in objects:
            obj = name_in(token)
            if obj is not None and norm_name(obj) != norm_name(subject):
                out.append(Relation(subject=subject, predicate=predicate, object=obj))
    return out


def find_entities(text: str) -> tuple[list[Entity], list[Relation]]:
    """The entities ``text`` names (first-seen order) and the relations between them."""
    doc = load_spacy()(text)
    roles = _roles(text)
    entities: dict[str, Entity] = {}
    names: dict[int, str] = {}
    for span in _spans(doc):
        norm = norm_name(span.text)
        if norm not in entities:
            said_as = [roles[norm][1]] if norm in roles else []
            entities[norm] = Entity(name=span.text, kind=_kind(span, roles), aliases=said_as)
        names.update({t.i: entities[norm].name for t in span})
    for norm, (kind, alias) in roles.items():  # a role's name the parse did not take as one
        if norm not in entities:
            entities[norm] = Entity(name=norm.title(), kind=kind, aliases=[alias])
    relations = list(
        {(r.subject, r.predicate, r.object): r for r in _relations(doc, names)}.values()
    )
    return list(entities.values()), relations
