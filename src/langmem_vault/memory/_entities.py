"""The entities a memory names and the relations between them, as a memory's value holds them.

A fact's value carries its connections (``SemanticFact.entities``, ``.relations``): who or
what it names (a person, place, organisation, pet or thing), the aliases an entity goes by in
it ("my sister" for Priya) and relations such as (Priya, recommended, Dune). The value is the
source of truth, so export, import, restore and key rotation carry them as they carry the
text; a private fact's are sealed with its text (``memory.sealing``). The store's entity
tables (``store._entities``) are an index of them, written by the one write rule
(:func:`langmem_vault.memory._writes.memory_ops`): never for a private or retired memory.

>>> e = Entity(name=" Priya ", kind="person", aliases=["My Sister", "my sister"])
>>> e.name, e.aliases
('Priya', ['my sister'])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from langmem_vault.store._entities import ENTITY_KINDS, EntityLink, RelationLink, norm_name

__all__ = [
    "ENTITY_KINDS",
    "Entity",
    "EntityFinder",
    "EntityKind",
    "Relation",
    "entity_links",
    "mentioned_in",
    "norm_name",
    "relation_links",
]

EntityKind = Literal["person", "place", "organisation", "pet", "thing"]
MAX_NAME = 200
MAX_ALIASES = 10
MAX_PREDICATE = 100


def _name(value: str) -> str:
    cleaned = " ".join(value.split()).strip(" .,;:!?\"'")
    if not cleaned:
        raise ValueError("must not be empty")
    return cleaned


def _aliases(values: list[str]) -> list[str]:
    return list(dict.fromkeys(norm_name(v) for v in values if norm_name(v)))[:MAX_ALIASES]


Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(_name)]


class Entity(BaseModel):
    """Someone or something a memory names: its name, kind and aliases (lower-cased)."""

    model_config = ConfigDict(extra="ignore")

    name: Name
    kind: EntityKind = "thing"
    aliases: Annotated[list[str], AfterValidator(_aliases)] = Field(default_factory=list)


class Relation(BaseModel):
    """``subject`` ``predicate`` ``object``, two entities of the same memory by name, valid
    from/to when the memory says so."""

    model_config = ConfigDict(extra="ignore")

    subject: Name
    predicate: Annotated[str, Field(min_length=1, max_length=MAX_PREDICATE), AfterValidator(_name)]
    object: Name
    valid_from: datetime | None = None
    valid_to: datetime | None = None


#: names the entities of a text and the relations between them (offline: spaCy,
#: ``langmem_vault.offline.find_entities``)
EntityFinder = Callable[[str], tuple[list[Entity], list[Relation]]]


def mentioned_in(
    text: str, entities: Sequence[Entity], relations: Sequence[Relation] = ()
) -> tuple[list[Entity], list[Relation]]:
    """The entities whose name ``text`` still contains (an alias is not enough: the name is
    what the entity stores), and the relations between them: what survives a redaction or an
    edit of the text (a name redaction took out is not kept beside it).

    >>> named = [Entity(name="Priya"), Entity(name="Dune")]
    >>> kept, _ = mentioned_in("<PERSON> recommended Dune", named)
    >>> [e.name for e in kept]
    ['Dune']
    """
    said = norm_name(text)
    kept = [e for e in entities if re.search(rf"\b{re.escape(norm_name(e.name))}\b", said)]
    names = {norm_name(e.name) for e in kept}
    rels = [r for r in relations if {norm_name(r.subject), norm_name(r.object)} <= names]
    return kept, rels


def entity_links(entities: Iterable[Mapping[str, Any] | Entity]) -> tuple[EntityLink, ...]:
    """A value's entities as the store's links (entries that no longer validate are left out)."""
    links = []
    for raw in entities:
        try:
            e = raw if isinstance(raw, Entity) else Entity.model_validate(raw)
        except ValueError:
            continue
        links.append(EntityLink(e.name, e.kind, tuple(e.aliases)))
    return tuple(links)


def _moment(value: Any) -> datetime | None:
    """A stored bound (an ISO string in a value, or a datetime) as a datetime."""
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


def relation_links(
    relations: Iterable[Mapping[str, Any] | Relation],
    names: Iterable[str],
    validity: tuple[Any, Any] = (None, None),
) -> tuple[RelationLink, ...]:
    """A value's relations between ``names`` (its entities) as the store's links. A relation
    that states no validity of its own holds when its memory does (``validity``: the
    memory's ``valid_from`` and ``valid_to``), so an as-of walk follows it only then.

    >>> from datetime import datetime, UTC
    >>> link = relation_links([Relation(subject="Maya", predicate="works at", object="Acme")],
    ...                       ["Maya", "Acme"], ("2021-03-01T00:00:00+00:00", None))[0]
    >>> link.valid_from.year, link.valid_to
    (2021, None)
    """
    start, end = (_moment(v) for v in validity)
    known = {norm_name(n) for n in names}
    links = []
    for raw in relations:
        try:
            r = raw if isinstance(raw, Relation) else Relation.model_validate(raw)
        except ValueError:
            continue
        if {norm_name(r.subject), norm_name(r.object)} <= known:
            held = (r.valid_from, r.valid_to) if r.valid_from or r.valid_to else (start, end)
            links.append(RelationLink(r.subject, r.predicate, r.object, *held))
    return tuple(links)
