"""Connections: the store ops that write and read the entity tables (``0004_entities.sql``).

An *entity* is a person, place, organisation, pet or thing that items of a namespace name,
kept once per namespace (its *scope*) by its lower-cased name, with the *aliases* it goes by
("my sister") and an embedding of its name. A *mention* links an item to an entity it names;
a *relation* (subject, predicate, object, with optional validity) links two entities, with
the item that stated it.

- :class:`LinkOp` replaces the links of one item (its mentions, the aliases and relations it
  stated) by the ones it carries; with none, it removes them. An entity no item mentions any
  more goes with its last mention. It runs in the batch's transaction (a batch is atomic), so
  an item and its links are written together or not at all; a deleted item's links go by the
  tables' foreign keys.
- :class:`ExpandOp` reads: the items that mention the entities a query names (by name or
  alias, or by an embedding near the query's), and those of their neighbours up to ``hops``
  relations away, in one statement (``store/_entity_plans.py``). Each hit is an
  :class:`Expanded`: the item, its hop count and the names that led to it.

VaultStore and AsyncVaultStore run both in ``batch``; for any other store the batch step
(:class:`~langmem_vault.db._store_plans.Batch`) answers them without sending them (a LinkOp
with None, an ExpandOp with no hits), so plans stay store-agnostic.

>>> priya = EntityLink("Priya", "person", ("my sister",))
>>> op = LinkOp(("memories", "u1", "semantic"), "f1", (priya,))
>>> check_link(op)
>>> [e.name for e in op.entities]
['Priya']
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from langgraph.store.base import Item

from langmem_vault.store._validation import (
    InvalidValueError,
    check_key,
    check_namespace,
    check_page,
    check_text,
)

__all__ = [
    "ENTITY_KINDS",
    "EntityLink",
    "ExpandOp",
    "Expanded",
    "LinkOp",
    "RelationLink",
    "check_expand",
    "check_link",
    "norm_name",
    "runs_entity_links",
]

ENTITY_KINDS = ("person", "place", "organisation", "pet", "thing")
MAX_NAME = 200
MAX_ALIASES = 20
MAX_ENTITIES = 50
MAX_RELATIONS = 50
MAX_PREDICATE = 100
MAX_TERMS = 200
MAX_HOPS = 3
#: the store attribute that says a store runs these ops
FEATURE = "supports_entity_links"


def norm_name(name: str) -> str:
    """The form names and aliases are matched in: lower case, single spaces, no outer
    punctuation.

    >>> norm_name("  My   Sister ")
    'my sister'
    """
    return " ".join(name.lower().split()).strip(" .,;:!?\"'")


class EntityLink(NamedTuple):
    """An entity an item names: its name as written, its kind, the aliases it goes by."""

    name: str
    kind: str = "thing"
    aliases: tuple[str, ...] = ()


class RelationLink(NamedTuple):
    """``subject`` ``predicate`` ``object`` (entity names of the same item), valid from/to."""

    subject: str
    predicate: str
    object: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None


class LinkOp(NamedTuple):
    """Replace the entity links of the item at ``namespace``/``key`` (none: remove them).

    Its result in ``batch`` is None."""

    namespace: tuple[str, ...]
    key: str
    entities: tuple[EntityLink, ...] = ()
    relations: tuple[RelationLink, ...] = ()

    def store_feature(self) -> str:
        """The store attribute that says a store runs this op."""
        return FEATURE

    def unsupported_result(self) -> None:
        """The result on a store that does not run it: no links to write."""
        return None


class ExpandOp(NamedTuple):
    """Items of ``namespaces`` linked to the entities ``terms`` name (or near ``query``).

    ``terms`` are lower-cased names or aliases to match exactly (the memory layer cuts a
    query into them: :func:`langmem_vault.memory._recall.expansion.query_terms`); with
    ``query`` and a store index, entities whose name embeds within cosine similarity
    ``near`` of the query's embedding count too. ``hops`` relations are followed from them
    (relations valid at ``as_of`` only, when given). At most ``limit`` items, fewest hops
    first, then most entities matched, then newest. Its result is a list of
    :class:`Expanded`."""

    namespaces: tuple[tuple[str, ...], ...]
    terms: tuple[str, ...]
    query: str | None = None
    near: float = 0.75
    hops: int = 1
    limit: int = 20
    as_of: datetime | None = None

    def store_feature(self) -> str:
        """The store attribute that says a store runs this op."""
        return FEATURE

    def unsupported_result(self) -> list[Expanded]:
        """The result on a store that does not run it: no links, so no hits."""
        return []


class Expanded(NamedTuple):
    """One hit of an :class:`ExpandOp`: the item, relations walked (0: it names an entity
    of the query) and the names of the entities that led to it."""

    item: Item
    hop: int
    entities: tuple[str, ...]


def runs_entity_links(store: object) -> bool:
    """Whether ``store.batch`` runs :class:`LinkOp` and :class:`ExpandOp` (VaultStore,
    AsyncVaultStore, and wrappers that forward attributes to one, such as AuditedStore).

    >>> from langgraph.store.memory import InMemoryStore
    >>> runs_entity_links(InMemoryStore())
    False
    """
    return getattr(store, FEATURE, False) is True


def _check_name(name: Any, what: str, limit: int = MAX_NAME) -> str:
    if not isinstance(name, str) or not norm_name(name):
        raise InvalidValueError(f"{what} must be a non-empty string, got {name!r}")
    if len(name) > limit:
        raise InvalidValueError(f"{what} is {len(name)} characters, over the limit of {limit}")
    check_text(name, what)
    return norm_name(name)


def check_link(op: LinkOp) -> None:
    """A LinkOp's checks, before any I/O; raises :class:`InvalidValueError` naming the field."""
    check_namespace(tuple(op.namespace))
    check_key(op.key)
    if len(op.entities) > MAX_ENTITIES or len(op.relations) > MAX_RELATIONS:
        raise InvalidValueError(
            f"LinkOp.entities/relations: at most {MAX_ENTITIES}/{MAX_RELATIONS}, got "
            f"{len(op.entities)}/{len(op.relations)}"
        )
    names = set()
    for entity in op.entities:
        names.add(_check_name(entity.name, "LinkOp entity name"))
        if entity.kind not in ENTITY_KINDS:
            raise InvalidValueError(
                f"LinkOp entity kind must be one of {ENTITY_KINDS}, got {entity.kind!r}"
            )
        if len(entity.aliases) > MAX_ALIASES:
            raise InvalidValueError(f"LinkOp entity aliases: at most {MAX_ALIASES}")
        for alias in entity.aliases:
            _check_name(alias, "LinkOp entity alias")
    for relation in op.relations:
        for end in (relation.subject, relation.object):
            if _check_name(end, "LinkOp relation subject/object") not in names:
                raise InvalidValueError(
                    f"LinkOp relation names {end!r}, which is not one of the op's entities"
                )
        _check_name(relation.predicate, "LinkOp relation predicate", MAX_PREDICATE)


def check_expand(op: ExpandOp) -> None:
    """An ExpandOp's checks, before any I/O."""
    if not op.namespaces:
        raise InvalidValueError("ExpandOp.namespaces must name at least one namespace")
    for namespace in op.namespaces:
        check_namespace(tuple(namespace))
    if len(op.terms) > MAX_TERMS:
        raise InvalidValueError(f"ExpandOp.terms: at most {MAX_TERMS}, got {len(op.terms)}")
    for term in op.terms:
        _check_name(term, "ExpandOp term")
    if isinstance(op.hops, bool) or not isinstance(op.hops, int) or not 0 <= op.hops <= MAX_HOPS:
        raise InvalidValueError(
            f"ExpandOp.hops must be an int from 0 to {MAX_HOPS}, got {op.hops!r}"
        )
    check_page("limit", op.limit)
    if not isinstance(op.near, int | float) or not -1.0 <= op.near <= 1.0:
        raise InvalidValueError(f"ExpandOp.near must be a similarity in [-1, 1], got {op.near!r}")
