"""Pages of a listing cut in SQL: the items of some namespaces in creation order, on an index.

A ``SearchOp`` without a query has no order a caller can page by across writes (VaultStore's
is the most recently updated first, InMemoryStore's the insertion order), so a listing that
wants a stable order had to read every match and sort it. A :class:`PageOp` asks for one page
of the items of ``namespaces`` (exact namespaces, not prefixes) in creation order, newest or
oldest first: an item's creation time is its value's own ``created_at`` when that holds a
timestamp (a memory keeps the time it was made, through an export and an import), else the
time it was first stored; the key breaks ties. Each namespace is an ordered walk of
``store_items_prefix_created_idx`` (on the ``page_at`` column: store/0007) from the cursor,
cut at the page size, so a page reads the rows it returns (one more, to learn whether a next
page exists), whatever the namespaces hold.

Paging by ``after`` (the :attr:`Page.next` cursor of the page before) keeps page boundaries
where they were when items are added or removed elsewhere in the order; ``offset`` is for a
jump to page N: it skips the rows before the page in the index alone (no row read) unless a
filter must read them. ``with_total=True`` also counts the matches (a second
statement, sent in the same round trip: an index-only count when there is no filter), every
one, or at most ``count_limit`` (the count then reads at most that many index entries, so its
cost no longer grows with the namespaces' size).
``labels`` gives each namespace a :data:`~langmem_vault.store._labels.Labeling` (a label
derived from an item's value, in SQL) and ``keep`` the labels a page keeps: the filter is in
the walk, so a page and its offset are cut on it in SQL (the walk then reads the rows it
passes over, as any filter's does). A :class:`CountOp` counts the items of namespaces by
label, every label in one statement.
Reads do not refresh TTLs (as ``GetOp(refresh_ttl=False)``).

VaultStore and AsyncVaultStore run it in ``batch``, beside any other ops; other stores do not
know it (check with :func:`runs_pages`).

>>> op = PageOp((("memories", "u1", "semantic"),), limit=2)
>>> op.newest_first, op.after
(True, None)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from langgraph.store.base import Item

from langmem_vault.store._filters import FilterBuilder
from langmem_vault.store._labels import Labeling
from langmem_vault.store._validation import (
    InvalidValueError,
    check_key,
    check_namespace,
    check_page,
)

__all__ = ["CountOp", "Page", "PageCursor", "PageOp", "runs_pages"]

#: where a page ends: the creation time and key of its last item
PageCursor = tuple[datetime, str]
MAX_NAMESPACES = 16


class PageOp(NamedTuple):
    """One page of the items of ``namespaces`` matching ``filter`` (a search filter), in
    creation order; its result in ``batch`` is a :class:`Page`."""

    namespaces: tuple[tuple[str, ...], ...]
    limit: int = 10
    after: PageCursor | None = None
    offset: int = 0
    newest_first: bool = True
    filter: dict[str, Any] | None = None
    with_total: bool = False
    #: with ``with_total``: count at most this many matches (None: all)
    count_limit: int | None = None
    #: also read each item's mirror (store/_mirrors.py: its usage record), in the same statement
    mirror: tuple[str, ...] | None = None
    #: each namespace's labeling (store/_labels.py), in the order of ``namespaces``
    labels: tuple[Labeling, ...] | None = None
    #: with ``labels``: keep only the items whose label is one of these
    keep: tuple[str, ...] | None = None
    #: the time the labels' ``Past`` conditions compare with (None: the statement's now())
    now: datetime | None = None


class CountOp(NamedTuple):
    """How many items of ``namespaces`` matching ``filter`` have each label (each namespace
    labelled by its labeling in ``labels``); its result in ``batch`` is a dict of label to
    count (labels no item has are absent; items no rule labels count under None).

    One statement: the items a rule other than the default may label (the labeling's
    ``candidates_sql``, found on store/0010's partial index) are read and labelled; the
    default label's count is the rest, counted in an index without reading the items, exact
    up to ``limit`` (None: all; a count of ``limit`` or more means at least ``limit``). A count
    then costs the user's items that carry a status or an end time, not all of them.
    Namespaces whose labelings have different defaults are walked whole, every item labelled.
    """

    namespaces: tuple[tuple[str, ...], ...]
    labels: tuple[Labeling, ...]
    filter: dict[str, Any] | None = None
    now: datetime | None = None
    #: count the default label exactly up to this many (None: all)
    limit: int | None = None


class Page(NamedTuple):
    """A page: its items, the cursor of the next page (None on the last one), when counted
    how many items match in all (at most the op's ``count_limit``), and each item's own cursor
    (a page may end after any)."""

    items: list[Item]
    next: PageCursor | None
    total: int | None = None
    cursors: tuple[PageCursor, ...] = ()
    #: each item's mirror or None, when the op asked for them
    mirrors: tuple[Item | None, ...] | None = None


def runs_pages(store: object) -> bool:
    """Whether ``store.batch`` runs :class:`PageOp` (VaultStore, AsyncVaultStore); read from
    the class, as :func:`~langmem_vault.store._mirrors.runs_mirror_search` is.

    >>> from langgraph.store.memory import InMemoryStore
    >>> runs_pages(InMemoryStore())
    False
    """
    return getattr(type(store), "supports_pages", False) is True


def _check_scope(op: PageOp | CountOp) -> None:
    name = type(op).__name__
    if not isinstance(op.namespaces, tuple) or not 1 <= len(op.namespaces) <= MAX_NAMESPACES:
        raise InvalidValueError(
            f"{name}.namespaces must be a tuple of 1..{MAX_NAMESPACES} namespaces, "
            f"got {op.namespaces!r}"
        )
    for ns in op.namespaces:
        check_namespace(ns)
    if op.labels is not None and (
        not isinstance(op.labels, tuple) or len(op.labels) != len(op.namespaces)
    ):
        raise InvalidValueError(f"{name}.labels must hold one labeling per namespace")
    if op.now is not None and (not isinstance(op.now, datetime) or op.now.tzinfo is None):
        raise InvalidValueError(f"{name}.now must be an aware datetime, got {op.now!r}")
    FilterBuilder().add(op.filter)


def check_count_op(op: CountOp) -> None:
    """The op's checks, before any I/O."""
    if op.labels is None:
        raise InvalidValueError("CountOp.labels must hold one labeling per namespace")
    _check_scope(op)
    if op.limit is not None:
        check_page("limit", op.limit)
        if op.limit < 1:
            raise InvalidValueError(f"CountOp.limit must be >= 1, got {op.limit}")


def check_page_op(op: PageOp) -> None:
    """The op's checks, before any I/O."""
    _check_scope(op)
    if op.keep is not None and (op.labels is None or not all(isinstance(k, str) for k in op.keep)):
        raise InvalidValueError("PageOp.keep must be a tuple of labels, with labels")
    check_page("limit", op.limit)
    check_page("offset", op.offset)
    if op.count_limit is not None:
        check_page("count_limit", op.count_limit)
        if op.count_limit < 1:
            raise InvalidValueError(f"PageOp.count_limit must be >= 1, got {op.count_limit}")
    if op.limit < 1:
        raise InvalidValueError(f"PageOp.limit must be >= 1, got {op.limit}")
    if op.after is not None:
        at, key = op.after if isinstance(op.after, tuple) and len(op.after) == 2 else (None, None)
        if not isinstance(at, datetime) or at.tzinfo is None:
            raise InvalidValueError(f"PageOp.after must be (aware datetime, key), got {op.after!r}")
        check_key(key)
    if op.mirror is not None:
        if not isinstance(op.mirror, tuple) or not op.mirror:
            raise InvalidValueError(
                f"PageOp.mirror must be a non-empty namespace tuple, got {op.mirror!r}"
            )
        check_namespace(op.mirror)
