"""Store reads shared by the facade and inject: candidate searches, scoring, newest first.

These are plan pieces (see :mod:`langmem_vault.db._store_plans`): functions that build store ops
and read their results, so inject can put the fact, instruction and episode searches into ONE
``batch`` round trip (facts are ranked by :mod:`~.recall_plan`).

>>> op = fact_search_op(("memories", "u1", "semantic"), "tea", candidates=20)
>>> op.limit, op.query
(20, 'tea')
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import Item, SearchItem, SearchOp

from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._models import Instruction
from langmem_vault.memory._recall.scoring import (
    as_datetime,
)
from langmem_vault.memory._recall.usage import Target, with_usage

__all__ = [
    "SCAN_PAGE",
    "applicable_instructions",
    "fact_search_op",
    "fact_value",
    "newest_plan",
    "scan_op",
    "scan_plan",
]

#: items per page when a plan reads a whole namespace
SCAN_PAGE = 500


def fact_search_op(
    namespace: tuple[str, ...],
    query: str | None,
    *,
    candidates: int = 50,
) -> SearchOp:
    """Search op for candidate facts: by relevance with a query, else the store's order.

    No status filter here: on both Postgres stores a JSON filter makes the search scan and
    costs more than it saves (measured in bench/nodes_bench.py); closed and pending facts are
    dropped when recall ranks them (:func:`~.recall_plan.rank_found`).
    """
    return SearchOp(
        namespace_prefix=namespace,
        limit=candidates,
        query=query or None,
        refresh_ttl=False,
    )


def fact_value(item: Item | SearchItem) -> Mapping[str, Any] | None:
    """The item's value as a fact: ours as stored; a value written by LangMem's memory tools
    (``{"content": "..."}``, or ``{"kind": ..., "content": {"content": "..."}}``) as a fact
    with that text and the item's times; None for anything else in the namespace.

    >>> from datetime import datetime, UTC
    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> fact_value(Item(value={"content": "Likes jazz"}, key="k", namespace=("m",),
    ...                 created_at=at, updated_at=at))["text"]
    'Likes jazz'
    >>> fact_value(Item(value={"rows": [1]}, key="k", namespace=("m",),
    ...                 created_at=at, updated_at=at)) is None
    True
    """
    value = item.value
    if "text" in value or "enc" in value:
        return value
    content = value.get("content")
    if isinstance(content, Mapping):
        content = content.get("content")
    if not isinstance(content, str) or not content.strip():
        return None
    return {
        "kind": "semantic",
        "text": content,
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat(),
    }


def applicable_instructions(
    items: Iterable[Item | SearchItem],
    message: str | None,
    now: datetime,
    *,
    usage: Mapping[Target, Mapping[str, Any]] | None = None,
) -> list[tuple[str, Instruction]]:
    """Active, unexpired instructions whose condition holds, highest priority first
    (``usage``: their usage records, for ``usage_count``).

    Stored values that no longer validate are skipped rather than failing the turn.
    """
    found: list[tuple[str, Instruction]] = []
    for item in items:
        value = with_usage(item.value, (usage or {}).get((tuple(item.namespace), item.key)))
        try:
            instruction = Instruction.from_store(value)
        except ValueError:
            continue
        if instruction.applies(message, now):
            found.append((item.key, instruction))
    found.sort(key=lambda pair: (-pair[1].priority, pair[1].created_at))
    return found


def scan_op(
    namespace: tuple[str, ...],
    filter: dict[str, Any] | None = None,
    offset: int = 0,
    limit: int = SCAN_PAGE,
) -> SearchOp:
    """One page of a whole-namespace read (no query: the store's own order)."""
    return SearchOp(namespace, filter=filter, limit=limit, offset=offset, refresh_ttl=False)


def scan_plan(
    namespace: tuple[str, ...],
    filter: dict[str, Any] | None = None,
    first: Sequence[Item] | None = None,
    *,
    limit: int | None = None,
) -> StorePlan[list[Item]]:
    """Every item under ``namespace`` matching ``filter``, page by page (``first``: page one,
    when the caller already read it in a batch of its own), or the first ``limit`` of them in
    the store's order (VaultStore's: the most recently updated first): no more rows are read.
    A write between pages may shift the store's order; an item seen twice is kept once."""
    found: dict[tuple[tuple[str, ...], str], Item] = {}
    page = list(first) if first is not None else None
    offset = 0
    while True:
        size = SCAN_PAGE if limit is None else max(0, min(SCAN_PAGE, limit - offset))
        if page is None:
            if size == 0:
                return list(found.values())
            (page,) = yield Batch([scan_op(namespace, filter, offset, size)])
        for item in page:
            found.setdefault((tuple(item.namespace), item.key), item)
        if len(page) < size:
            return list(found.values())
        offset += len(page)
        page = None


def _time_of(item: Item, field: str) -> datetime:
    return as_datetime(item.value.get(field)) or datetime.min.replace(tzinfo=UTC)


def newest_plan(
    namespace: tuple[str, ...],
    field: str,
    limit: int,
    first: Sequence[Item] | None = None,
) -> StorePlan[list[Item]]:
    """The ``limit`` items with the latest ``field`` (a timestamp of the memory's own),
    newest first.

    BaseStore searches have no ordering, and stores differ: InMemoryStore returns insertion
    order, the Postgres stores the last written first. So the plan reads the whole namespace
    (one page for most users; see :func:`scan_plan`) and sorts by the memory's own time
    before cutting, which gives the same answer on every store.
    """
    items = yield from scan_plan(namespace, first=first)
    return heapq.nlargest(limit, items, key=lambda i: (_time_of(i, field), i.key))
