"""A user's memory listing, page by page in SQL: what ``list_memories`` runs on VaultStore.

The page is a :class:`~langmem_vault.store._pages.PageOp` over the user's namespaces of the
kinds asked for, newest first by the time each memory was stored, then key: an ordered walk
of an index that reads the rows it returns, whatever the user holds. Only the page's
memories are opened (private text decrypted) and their usage records read.

``status`` is judged in SQL: its rule (``STATUS_RULES``) is data read in Python and in SQL
alike (store/_labels.py), so a listing by kind and status is cut in SQL, offset included.
A listing by kind alone counts its total in SQL, sent with the page: at most ``TOTAL_LIMIT``
matches (one more, to know there are more: ``total_capped``), or every one when asked; an
index-only count of 10,000 entries cost 2 ms a page, ten times the page. With a status the
count judges every row it counts, so it is made only when asked (``exact_total``: every
match, in SQL). :func:`counts_plan` counts every status at once (the dashboard's tabs): one
statement that reads only the rows whose status may not be "active" (a status of their own, an
end time) and counts the rest, up to ``TOTAL_LIMIT``, in an index.

The other derived fields (``category``, ``tags``, ``since``/``until``) are the records' own
(:meth:`MemoryQuery.matches`, one rule for every surface), so those listings walk the index in
chunks (with the status in SQL) and keep the matches: a page costs the rows up to its last
match. Their ``total`` is counted only when the query asks (``exact_total``, on a page asked
for without a cursor), by walking on to the end (at most ``max_rows`` rows read, then
``truncated``).

The cursor (``MemoryPage.next``, passed back as ``after``) is opaque: the stored time and key
of the page's last memory, so a page's boundary stays put while memories are added.

>>> decode_cursor(encode_cursor((datetime(2026, 1, 2, tzinfo=UTC), "k1")))
(datetime.datetime(2026, 1, 2, 0, 0, tzinfo=datetime.timezone.utc), 'k1')
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import Item

from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._recall.usage import USAGE_ROOT, read_usage_plan
from langmem_vault.service._errors import InvalidInput
from langmem_vault.service._records import (
    STATUS_RULES,
    TOTAL_LIMIT,
    MemoryPage,
    MemoryQuery,
    StatusCounts,
    record_of,
)
from langmem_vault.store._pages import CountOp, PageCursor, PageOp

__all__ = ["counts_plan", "decode_cursor", "encode_cursor", "listing_plan"]

#: rows read by a filtered walk's first step (times the page size) and at most by any step;
#: each step reads twice as many as the one before, so a filter most rows pass costs one
#: step and a rare one few round trips
FIRST_CHUNK, MAX_CHUNK = 2, 1000
#: (namespace, item, usage record or None) -> the opened value
Opener = Callable[[tuple[str, ...], Item, Any], dict[str, Any]]


def encode_cursor(cursor: PageCursor) -> str:
    """The opaque ``after`` token of a page's end."""
    raw = json.dumps([cursor[0].isoformat(), cursor[1]]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str) -> PageCursor:
    """The page end an ``after`` token names; :class:`InvalidInput` on ``after`` if none."""
    try:
        at, key = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        when = datetime.fromisoformat(at)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise InvalidInput("after", f"is not a cursor from a page's next: {exc}") from None
    if not isinstance(key, str) or when.tzinfo is None:
        raise InvalidInput("after", "is not a cursor from a page's next")
    return when.astimezone(UTC), key


def listing_plan(
    spaces: Sequence[tuple[str, tuple[str, ...]]],
    query: MemoryQuery,
    user_id: str,
    open_value: Opener,
    max_rows: int,
) -> StorePlan[MemoryPage]:
    """The page of ``query`` over ``spaces`` ((kind, namespace) pairs) in SQL."""
    kind_of = {ns: kind for kind, ns in spaces}
    after = None if query.after is None else decode_cursor(query.after)
    now = datetime.now(UTC)
    op: Any = PageOp(tuple(kind_of), query.limit, after, query.offset)  # Batch takes Any op
    if query.status is not None:
        labels = tuple(STATUS_RULES[kind] for kind in kind_of.values())
        op = op._replace(labels=labels, keep=tuple(query.status), now=now)
    if _in_sql(query):
        # The usage records come joined in the page's statement: one round trip in all.
        cap = None if query.exact_total else TOTAL_LIMIT + 1
        # A status's count judges each row it counts (1,000 rows: 1-2 ms, the page's cost
        # again): counted when asked, as the other derived filters are.
        counted = query.status is None or query.exact_total
        op = op._replace(with_total=counted, count_limit=cap, mirror=USAGE_ROOT)
        (page,) = yield Batch([op])
        items, total, more, truncated = page.items, page.total, page.next, False
        capped = total is not None and cap is not None and total > TOTAL_LIMIT
        total = min(total, TOTAL_LIMIT) if capped and total is not None else total
        usage = {
            (tuple(i.namespace), i.key): m.value
            for i, m in zip(items, page.mirrors, strict=True)
            if m is not None
        }
    else:
        items, total, more, truncated = yield from _filtered(
            op, query, user_id, kind_of, max_rows, now
        )
        capped = False
        usage = yield from read_usage_plan((tuple(i.namespace), i.key) for i in items)
    records = []
    for item in items:
        ns = tuple(item.namespace)
        value = open_value(ns, item, usage.get((ns, item.key)))
        records.append(record_of(kind_of[ns], user_id, item.key, value, now))
    return MemoryPage(
        total=total,
        limit=query.limit,
        offset=query.offset,
        items=records,
        truncated=truncated,
        total_capped=capped,
        next=None if more is None else encode_cursor(more),
    )


def counts_plan(
    spaces: Sequence[tuple[str, tuple[str, ...]]], category: str | None = None
) -> StorePlan[StatusCounts]:
    """How many memories of ``spaces`` ((kind, namespace) pairs; with ``category``, the facts
    of that category) have each status: one statement, reading the rows a status other than
    active is possible for (store/0010's index), counting the others in an index."""
    if not spaces:
        return StatusCounts(counts={})
    op: Any = CountOp(
        tuple(ns for _, ns in spaces),
        tuple(STATUS_RULES[kind] for kind, _ in spaces),
        None if category is None else {"category": category},
        datetime.now(UTC),
        TOTAL_LIMIT + 1,  # one more, to know there are more
    )
    (counts,) = yield Batch([op])
    return StatusCounts.of(counts)


def _in_sql(query: MemoryQuery) -> bool:
    """Whether the query filters by nothing but kind (its namespaces) and status."""
    return not (
        query.category is not None
        or query.tags
        or query.since is not None
        or query.until is not None
    )


def _filtered(
    op: PageOp,
    query: MemoryQuery,
    user_id: str,
    kind_of: dict[tuple[str, ...], str],
    max_rows: int,
    now: datetime,
) -> StorePlan[tuple[list[Item], int | None, PageCursor | None, bool]]:
    """Walk the index in chunks, keeping the matches (judged on the stored values: every
    field a filter reads is stored in clear, so nothing is decrypted to judge it)."""
    skip, wanted = query.offset, query.limit
    counting = query.exact_total and query.after is None
    kept: list[Item] = []
    ends: list[PageCursor] = []
    matched = read = 0
    chunk: Any = op._replace(offset=0)
    size = FIRST_CHUNK * (skip + wanted)
    while True:
        # Never more than max_rows rows in all, whatever the user holds.
        (page,) = yield Batch([chunk._replace(limit=min(size, MAX_CHUNK, max_rows - read))])
        size *= 2
        read += len(page.items)
        for item, cursor in zip(page.items, page.cursors, strict=True):
            kind = kind_of[tuple(item.namespace)]
            if query.matches(record_of(kind, user_id, item.key, item.value, now)):
                matched += 1
                if matched > skip and len(kept) < wanted:
                    kept.append(item)
                    ends.append(cursor)
        total = matched if counting else None
        end = ends[-1] if len(kept) == wanted else page.next
        if page.next is None:
            return kept, total, end if matched > skip + wanted else None, False
        if not counting and len(kept) == wanted:
            return kept, None, end, False
        if read >= max_rows:
            return kept, total, end, True
        chunk = chunk._replace(after=page.next)
