"""Entity expansion: the memories linked to the people, places and things a query names.

A question such as "what did my sister recommend?" shares no word with the fact "Priya
recommended Dune.". Expansion finds the entities the query names, by an exact name or alias
("my sister" is Priya's alias since "My sister is Priya.") or, with a store index, by a name
whose embedding is near the query's; then the memories that mention them (hop 0) and the
memories of their neighbours one relation away (hop 1: "Dune is by Frank Herbert" through
(Priya, recommended, Dune)). All of it is one ``ExpandOp`` (``store._entities``): one SQL
statement, a recursive walk, which can travel in the same batch, and so the same round trip,
as the query's hybrid search. Its rows are :class:`~langmem_vault.store._entities.Expanded`:
the item, its hop count and the names that led to it.

The entity index is VaultStore's (AsyncVaultStore's); on any other store expansion finds
nothing, and a recall built on it falls back to search alone.

>>> query_terms("What did my sister's friend recommend?")[:4]
('what', 'did', 'my', 'sister')
>>> "my sister" in query_terms("What did my sister's friend recommend?")
True
>>> query_terms("tea " + "x" * 5000)
('tea',)
>>> from langgraph.store.memory import InMemoryStore
>>> expand(InMemoryStore(), [("memories", "u1", "semantic")], "what did my sister recommend?")
[]

On Postgres (``store`` a VaultStore, facts remembered with their entities):

>>> from langmem_vault.memory import MemoryVault, expand
>>> from langmem_vault.offline import find_entities
>>> vault = MemoryVault(store, user_id="u1", entity_finder=find_entities)  # doctest: +SKIP
>>> vault.remember("My sister is Priya.").value.entities[0].aliases  # doctest: +SKIP
['my sister']
>>> _ = vault.remember("Priya recommended Dune.")  # doctest: +SKIP
>>> hits = expand(store, [vault.ns.semantic], "what did my sister recommend?")  # doctest: +SKIP
>>> sorted((h.item.value["text"], h.hop) for h in hits)  # doctest: +SKIP
[('My sister is Priya.', 0), ('Priya recommended Dune.', 0)]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from langgraph.store.base import BaseStore

from langmem_vault.db._steps import arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.store._entities import MAX_NAME, MAX_TERMS, Expanded, ExpandOp

__all__ = ["Expanded", "aexpand", "expand", "expand_plan", "expansion_op", "query_terms"]

#: names and aliases are at most this many words ("my best friend", "New York City")
MAX_TERM_WORDS = 4
#: how near (cosine similarity) an entity's name must embed to the query to count
DEFAULT_NEAR = 0.75
_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_POSSESSIVE = re.compile(r"['\u2019]s$")


def query_terms(query: str, *, max_words: int = MAX_TERM_WORDS) -> tuple[str, ...]:
    """The lower-cased word runs of ``query`` (1 to ``max_words`` words, possessives off)
    that an entity's name or alias could be, in order, at most ``MAX_TERMS``."""
    words = [_POSSESSIVE.sub("", w.lower()) for w in _WORD.findall(query)]
    terms: dict[str, None] = {}
    for size in range(1, max_words + 1):
        for start in range(len(words) - size + 1):
            term = " ".join(words[start : start + size])
            if len(term) <= MAX_NAME:  # no entity's name is longer: any text may be asked
                terms[term] = None
    return tuple(terms)[:MAX_TERMS]


def expansion_op(
    namespaces: Sequence[tuple[str, ...]],
    query: str,
    *,
    limit: int = 20,
    hops: int = 1,
    near: float | None = DEFAULT_NEAR,
    as_of: datetime | None = None,
) -> ExpandOp:
    """The op that expands ``query`` over the entities of ``namespaces`` (a user's facts,
    episodes...): put it in the batch of the query's search to share its round trip (and
    its query embedding). ``near=None`` matches names exactly only; ``as_of`` follows only
    the relations valid then."""
    return ExpandOp(
        tuple(tuple(ns) for ns in namespaces),
        query_terms(query),
        query if near is not None else None,
        DEFAULT_NEAR if near is None else near,
        hops,
        limit,
        as_of,
    )


def expand_plan(
    namespaces: Sequence[tuple[str, ...]],
    query: str,
    *,
    limit: int = 20,
    hops: int = 1,
    near: float | None = DEFAULT_NEAR,
    as_of: datetime | None = None,
) -> StorePlan[list[Expanded]]:
    """Expansion as a store plan (one batch): fewest hops first, then most names matched,
    then newest."""
    op = expansion_op(namespaces, query, limit=limit, hops=hops, near=near, as_of=as_of)
    (hits,) = yield Batch([op])
    return list(hits)


def expand(
    store: BaseStore,
    namespaces: Sequence[tuple[str, ...]],
    query: str,
    *,
    limit: int = 20,
    hops: int = 1,
    near: float | None = DEFAULT_NEAR,
    as_of: datetime | None = None,
) -> list[Expanded]:
    """The memories of ``namespaces`` linked to what ``query`` names (see the module)."""
    plan = expand_plan(namespaces, query, limit=limit, hops=hops, near=near, as_of=as_of)
    return run_steps(plan, store)


async def aexpand(
    store: BaseStore,
    namespaces: Sequence[tuple[str, ...]],
    query: str,
    *,
    limit: int = 20,
    hops: int = 1,
    near: float | None = DEFAULT_NEAR,
    as_of: datetime | None = None,
) -> list[Expanded]:
    """Async :func:`expand`."""
    plan = expand_plan(namespaces, query, limit=limit, hops=hops, near=near, as_of=as_of)
    return await arun_steps(plan, store)
