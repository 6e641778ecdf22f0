"""Tallies of a search's items by group, counted in SQL: how many items each group holds and
the newest of their timestamps, without sending the items to the client.

A :class:`TallyOp` takes a search without a query (its namespace, filter and limit: the same
items, the store's newest first, as the search alone returns) and groups its items by the
string in ``field`` (``default`` when the field is absent; any other JSON type: no group)
and by each string of the array ``tags`` that is one of ``tag_names``; an item counts once
in a group it reaches both ways. Each group also has the newest of its items' ``stamp`` and
their mirrors' ``mirror_stamp`` (store/_mirrors.py: a memory's usage record), read as
:func:`~langmem_vault.store._labels.time_sql` reads a timestamp; a non-empty string it does
not read (Python's ``datetime.fromisoformat`` may) is returned as it is, in ``odd``, so the
caller can read it as it reads the rest.

VaultStore and AsyncVaultStore run it in ``batch`` (:func:`~langmem_vault.store._pages.runs_pages`
tells); its result is :class:`Tallies`: each group's :class:`Tally`, and how many items
the search gave (a caller that cut the search at its ``limit`` learns whether it reached
it; store/_tally_plan.py writes the statement).

>>> from langgraph.store.base import SearchOp
>>> op = TallyOp(SearchOp(("memories", "u1", "semantic")), "category", "general", "tags")
>>> op.stamp, op.mirror_stamp
('updated_at', 'last_accessed')
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from langgraph.store.base import SearchOp

from langmem_vault.store._mirrors import MirrorSearchOp, check_mirror
from langmem_vault.store._validation import InvalidValueError

__all__ = ["Tallies", "Tally", "TallyOp", "check_tally"]


class TallyOp(NamedTuple):
    """The items of ``search`` (no query) tallied by ``field`` and by ``tags`` in ``tag_names``."""

    search: SearchOp
    field: str
    default: str
    tags: str
    tag_names: tuple[str, ...] = ()
    stamp: str = "updated_at"
    #: the namespace root of each item's mirror and the mirror's timestamp field
    mirror: tuple[str, ...] = ("langmem_vault", "usage")
    mirror_stamp: str = "last_accessed"


class Tally(NamedTuple):
    """A group's item count, the newest timestamp read in SQL and the ones it could not read."""

    items: int
    newest: datetime | None
    odd: tuple[str, ...] = ()


class Tallies(NamedTuple):
    """Each group's :class:`Tally` and the number of items the search gave (in no group too)."""

    groups: dict[str, Tally]
    items: int


def check_tally(op: TallyOp) -> None:
    """The op's checks, before any I/O (its search is checked as any search is)."""
    if op.search.query:
        raise InvalidValueError("TallyOp.search must have no query")
    check_mirror(MirrorSearchOp(op.search, op.mirror))
    texts = (op.field, op.default, op.tags, op.stamp, op.mirror_stamp, *op.tag_names)
    if not all(isinstance(t, str) for t in texts):
        raise InvalidValueError("TallyOp's fields, default and tag_names must be strings")
