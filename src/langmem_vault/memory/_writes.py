"""The one rule for how a memory is written: which fields are indexed, whether it is sealed,
and whether an index it had before must be dropped.

Every write path of a memory (the :class:`~langmem_vault.memory._vault.MemoryVault` facade,
reconcile, import, restore after a soft erase, key rotation) builds its ``PutOp`` here, so the
privacy guarantees hold whichever path wrote the memory:

- a **private** fact is never indexed: no embedding, no full-text vector. Its put carries
  ``index=[]``, which drops an index the memory had before (``index=False`` would keep it:
  that is how a restored private fact stayed searchable by its words). With a keyring its
  ``text`` and ``evidence`` are sealed (AES-256-GCM, see :mod:`langmem_vault.memory._sealing`).
  The owner's assistant still recalls it: inject ranks the owner's private facts in process
  (see :mod:`langmem_vault.memory._recall.private_recall`);
- a **retired** memory (a superseded or closed fact, an inactive instruction) is never
  embedded anew: a rewrite that keeps what the index holds keeps the old index (cheap, and
  recall filters by status); a write that may change it (an import, an edit) drops it;
- any other memory is indexed on its kind's fields (``text``; ``summary`` for an episode)
  when the write may change what the index holds (new text, a privacy or status change), and
  keeps its index otherwise (a counter-only rewrite, ``reindex=False``);
- every write carries the TTL of the memory's ``layer`` (:mod:`langmem_vault.memory._layers`:
  2 hours short-term, 7 days working, none long-term), so the store expires it and a
  promotion's rewrite clears the expiry;
- every key follows the key rule (:mod:`langmem_vault.memory._keys`): an identifier, never a
  path.

>>> from langmem_vault.memory._models import SemanticFact
>>> ns = ("memories", "u1", "semantic")
>>> memory_put(ns, "k", SemanticFact(text="Likes tea")).index
['text']
>>> memory_put(ns, "k", SemanticFact(text="Sees a therapist", private=True)).index
[]
>>> memory_put(ns, "k", SemanticFact(text="Likes tea"), reindex=False).index
False
>>> memory_put(ns, "k", SemanticFact(text="Likes tea", layer="working")).ttl
10080.0

Its connections (``memory._entities``) follow the same rule: :func:`memory_ops` adds to the
put a ``LinkOp`` that indexes the entities and relations the value names, or removes the
ones indexed before when the memory is private or retired. A batch is atomic on VaultStore,
so the memory and its links are written together or not at all (other stores skip the op).

>>> from langmem_vault.memory._entities import Entity
>>> fact = SemanticFact(text="My sister is Priya", entities=[Entity(name="Priya")])
>>> [op.entities for op in memory_ops(ns, "k", fact)[1:]]
[(EntityLink(name='Priya', kind='thing', aliases=()),)]
>>> [op.entities for op in memory_ops(ns, "k", fact.model_copy(update={"private": True}))[1:]]
[()]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langgraph.store.base import PutOp

from langmem_vault.db._store_plans import StoreOp
from langmem_vault.memory._entities import entity_links, relation_links
from langmem_vault.memory._keys import check_key
from langmem_vault.memory._layers import DEFAULT_LAYERS, LayerPolicy
from langmem_vault.memory._models import MemoryModel
from langmem_vault.memory._sealing import Keyring, encrypt_fact, is_sealed
from langmem_vault.store._entities import LinkOp

__all__ = ["Kind", "index_for", "is_private", "link_op", "memory_ops", "memory_put"]

Kind = Literal["semantic", "instruction", "episode"]

_FIELDS: dict[str, list[str]] = {
    "semantic": ["text"],
    "instruction": ["text"],
    "episode": ["summary"],
}


def is_private(value: Mapping[str, Any]) -> bool:
    """Whether a stored memory value is private (flagged, or carrying a sealed envelope)."""
    return bool(value.get("private")) or is_sealed(value)


def _retired(kind: str, value: Mapping[str, Any]) -> bool:
    if kind == "instruction":
        return value.get("active", True) is False
    if kind == "semantic":
        return bool(value.get("status", "active") == "superseded")
    return False


def index_for(
    kind: Kind | str, value: Mapping[str, Any], *, reindex: bool = True
) -> list[str] | Literal[False]:
    """The ``index`` argument of a memory's put: fields to index, ``[]`` to drop any index,
    ``False`` to keep the one it has (see the module docstring for the rule)."""
    if kind == "semantic" and is_private(value):
        return []
    if _retired(kind, value):
        return [] if reindex else False
    return list(_FIELDS.get(kind, ["text"])) if reindex else False


def memory_put(
    namespace: tuple[str, ...],
    key: str,
    memory: MemoryModel | Mapping[str, Any],
    *,
    kind: Kind | str | None = None,
    keyring: Keyring | None = None,
    reindex: bool = True,
    layers: LayerPolicy = DEFAULT_LAYERS,
) -> PutOp:
    """The put that stores ``memory`` (a model, or a stored dict) under ``namespace``/``key``.

    ``kind`` defaults to the value's own ``kind`` field. ``keyring`` seals a private fact
    (a value already sealed is re-sealed under the current key); without one a private fact
    is stored as it is, unindexed. ``reindex=False`` marks a rewrite that leaves the text,
    privacy and status as they were (counters, a closing), which keeps the existing index
    instead of re-embedding. ``layers`` gives the TTL of the value's ``layer``. A key outside
    the key rule (:mod:`langmem_vault.memory._keys`) raises ``InvalidKeyError``.
    """
    check_key(key)
    value: dict[str, Any] = memory.to_store() if isinstance(memory, MemoryModel) else dict(memory)
    kind = kind or str(value.get("kind") or "semantic")
    index = index_for(kind, value, reindex=reindex)
    if kind == "semantic" and is_private(value) and keyring is not None:
        value = encrypt_fact(value, keyring, namespace, key)
    ttl = layers.ttl_minutes(value.get("layer")) if kind != "instruction" else None
    return PutOp(namespace, key, value, index=index, ttl=ttl)


def link_op(
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any],
    *,
    kind: Kind | str,
    reindex: bool = True,
    relink: bool = False,
) -> LinkOp | None:
    """The entity links a memory's write brings: the ones its value names, none for a
    private or retired memory (the links it had go), or None to leave them as they are: a
    rewrite that keeps the text (``reindex=False``), or a memory that names nothing
    (nothing to index, and none of the cost). ``relink`` replaces the links even then: an
    edit whose new text names nothing any more."""
    if is_private(value) or _retired(kind, value):
        return LinkOp(namespace, key)
    if not reindex and not relink:
        return None
    entities = entity_links(value.get("entities") or ())
    validity = (value.get("valid_from"), value.get("valid_to"))
    relations = relation_links(value.get("relations") or (), (e.name for e in entities), validity)
    if not entities and not relink:
        return None
    return LinkOp(namespace, key, entities, relations)


def memory_ops(
    namespace: tuple[str, ...],
    key: str,
    memory: MemoryModel | Mapping[str, Any],
    *,
    kind: Kind | str | None = None,
    keyring: Keyring | None = None,
    reindex: bool = True,
    relink: bool = False,
    layers: LayerPolicy = DEFAULT_LAYERS,
) -> list[StoreOp]:
    """:func:`memory_put`'s put, and the ``LinkOp`` of :func:`link_op` when there is one:
    the ops of one memory's write, for one batch."""
    value: dict[str, Any] = memory.to_store() if isinstance(memory, MemoryModel) else dict(memory)
    kind = kind or str(value.get("kind") or "semantic")
    put = memory_put(
        namespace, key, value, kind=kind, keyring=keyring, reindex=reindex, layers=layers
    )
    link = link_op(namespace, key, value, kind=kind, reindex=reindex, relink=relink)
    return [put] if link is None else [put, link]
