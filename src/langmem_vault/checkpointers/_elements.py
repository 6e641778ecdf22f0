"""Handing out per-thread element ids without holding a lock across round trips.

Element ids come from ``saver_threads.next_elem``; ``epoch`` (random, set when the row is
created) tells a thread apart from a deleted and recreated one of the same id. A writer
learns the thread's (epoch, counter) and the ids of the elements it reuses, either from
:data:`KNOWN_SQL` or from what it learnt on its previous write to the thread
(:class:`ElementCache`), and numbers its new elements from the counter. The statement that
stores them starts with :data:`GUARD_CTES`: it moves the counter only if (epoch, counter) are
still the ones the writer knew, and stores anything only if that held and every new element
really was new. Otherwise nothing but harmless counter moves happened, and the writer asks
:data:`KNOWN_SQL` and tries again. Every element insert moves the counter and every deletion
of elements bumps it, so a cache that passes the guard is exact. Each statement is atomic by
itself, so no BEGIN/COMMIT round trips are needed, and with a warm cache a put is one
statement.

The same statement stores the pages its list completes (:mod:`pages`). Moving elements into a
page changes no id, so it does not move the counter: a writer may believe a page is still
loose after another stored it, and then stores it again, which is dropped as the same page.
"Really was new" is checked against loose rows (their unique hash index): an element that
sits in a page and that the writer never asked about (another process wrote it before this
writer learnt the thread, outside the lists it asked about) is stored again under a new id,
which costs its bytes once more, never a wrong message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langmem_vault.checkpointers import _codec as codec
from langmem_vault.checkpointers._compression import pack
from langmem_vault.checkpointers._config import render
from langmem_vault.checkpointers._lru import ThreadLRU
from langmem_vault.checkpointers._pages import to_seal
from langmem_vault.db._runner import Plan, Query

MAX_ATTEMPTS = 50

# The thread's epoch and counter (NULL when it has no row yet), aligned with the hashes
# given the id of each one the thread already stores, loose or in a page (NULL for new ones),
# and the first ids of its pages: one row.
KNOWN_SQL = """
WITH paged AS (
    SELECT substring(p.hashes FROM g.i * 16 + 1 FOR 16) AS hash, min(p.first_id + g.i) AS id
    FROM {schema}.saver_pages p
    CROSS JOIN LATERAL generate_series(0, p.last_id - p.first_id) AS g(i)
    WHERE p.tenant = %(tenant)s AND p.thread_id = %(thread_id)s
    GROUP BY 1
)
SELECT t.epoch, t.next_elem,
       ARRAY(SELECT coalesce(e.elem_id, p.id)
             FROM unnest(%(hashes)s::bytea[]) WITH ORDINALITY AS h(hash, n)
             LEFT JOIN {schema}.saver_elements e
               ON e.tenant = %(tenant)s AND e.thread_id = %(thread_id)s AND e.hash = h.hash
             LEFT JOIN paged p ON p.hash = h.hash
             ORDER BY h.n) AS ids,
       ARRAY(SELECT first_id FROM {schema}.saver_pages
             WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s) AS sealed
FROM (SELECT 1) AS one
LEFT JOIN {schema}.saver_threads t ON t.tenant = %(tenant)s AND t.thread_id = %(thread_id)s"""

# %(seen)s / %(epoch)s: what the writer knows of the thread (0 / NULL: it had no row); both
# NULL when nothing is allocated (then any counter will do). The row is refreshed either way.
GUARD_CTES = """
upd AS (
    UPDATE {schema}.saver_threads AS t SET
        last_activity = now(),
        user_id = coalesce(t.user_id, %(user_id)s),
        title = coalesce(t.title, %(title)s),
        message_count = coalesce(%(message_count)s, t.message_count),
        next_elem = greatest(t.next_elem, %(next_elem)s)
    WHERE t.tenant = %(tenant)s AND t.thread_id = %(thread_id)s
      AND (%(seen)s::integer IS NULL
           OR (t.next_elem = %(seen)s::integer AND t.epoch = %(epoch)s::bigint))
    RETURNING t.epoch
), ins AS (
    INSERT INTO {schema}.saver_threads
        (tenant, thread_id, user_id, title, message_count, next_elem)
    SELECT %(tenant)s, %(thread_id)s, %(user_id)s, %(title)s, coalesce(%(message_count)s, 0),
           %(next_elem)s
    WHERE coalesce(%(seen)s::integer, 0) = 0 AND NOT EXISTS (
        SELECT 1 FROM {schema}.saver_threads
        WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s)
    ON CONFLICT (tenant, thread_id) DO NOTHING
    RETURNING epoch
), guard AS (
    SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM ins) = 1 AS ok,
           coalesce((SELECT epoch FROM upd), (SELECT epoch FROM ins)) AS epoch
), new_elements AS (
    INSERT INTO {schema}.saver_elements (tenant, thread_id, elem_id, hash, type, blob)
    SELECT %(tenant)s, %(thread_id)s, x.elem_id, x.hash, x.type, x.blob
    FROM unnest(%(e_ids)s::integer[], %(e_hashes)s::bytea[], %(e_types)s::text[],
                %(e_blobs)s::bytea[]) AS x(elem_id, hash, type, blob)
    WHERE (SELECT ok FROM guard)
    ON CONFLICT DO NOTHING
    RETURNING 1
), ok AS (
    -- An element thought new but already stored (unknown to a cache) fails the write too.
    SELECT g.ok AND (SELECT count(*) FROM new_elements) = cardinality(%(e_ids)s::integer[])
           AS ok, g.epoch
    FROM guard AS g
), new_pages AS (
    -- Pages this write completes (pages.py); a page another writer stored first is the same.
    INSERT INTO {schema}.saver_pages
        (tenant, thread_id, first_id, last_id, type, hashes, sizes, blob)
    SELECT %(tenant)s, %(thread_id)s, x.first_id, x.last_id, x.type, x.hashes,
           x.sizes::integer[], x.blob
    FROM unnest(%(p_first)s::integer[], %(p_last)s::integer[], %(p_types)s::text[],
                %(p_hashes)s::bytea[], %(p_sizes)s::text[], %(p_blobs)s::bytea[])
        AS x(first_id, last_id, type, hashes, sizes, blob)
    WHERE (SELECT ok FROM ok)
    ON CONFLICT DO NOTHING
), paged_loose AS (
    -- ...and their elements' loose rows, now in those pages.
    DELETE FROM {schema}.saver_elements
    WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s
      AND elem_id = ANY(%(d_ids)s::integer[])
      AND (SELECT ok FROM ok)
)"""


@dataclass(frozen=True, slots=True)
class Known:
    """What a writer knows of a thread: its (epoch, counter), the ids of elements by hash,
    and the first ids of its pages."""

    epoch: int | None
    next_elem: int
    ids: dict[bytes, int]
    sealed: frozenset[int] = frozenset()


class ElementCache(ThreadLRU[Known]):
    """What this saver last learnt of a thread's elements, for the next write to skip
    :data:`KNOWN_SQL`, for the 128 threads it wrote last."""

    def __init__(self, max_threads: int = 128) -> None:
        super().__init__(max_threads)


@dataclass(slots=True)
class Allocation:
    """Ids for a set of elements, and the statement parameters that store the new ones and
    the pages they complete."""

    ids: dict[bytes, int] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    next_elem: int = 1
    sealed: frozenset[int] = frozenset()

    def ranges(self, elements: tuple[codec.Element, ...] | None) -> str | None:
        """The ``elems`` column value of a list made of ``elements``."""
        if elements is None:
            return None
        return codec.ranges_literal(codec.encode_ranges([self.ids[e.hash] for e in elements]))


def allocate(
    schema: str,
    tenant: str,
    thread_id: str,
    elements: Mapping[bytes, codec.Element],
    packed: dict[bytes, tuple[str, bytes]],
    known: Known | None = None,
) -> Plan[Allocation]:
    """Number ``elements``: existing ones keep their id, new ones continue the counter; the
    pages they complete are sealed.

    ``known`` is a cached :class:`Known` to trust instead of asking the database; ``packed``
    caches compressed new elements across attempts.
    """
    out = Allocation()
    seen: int | None = None
    epoch: int | None = None
    sealed: frozenset[int] = frozenset()
    if elements and known is not None:
        epoch, seen, sealed = known.epoch, known.next_elem, known.sealed
        out.ids = {h: known.ids[h] for h in elements if h in known.ids}
    elif elements:
        hashes = list(elements)
        rows = yield Query(
            render(KNOWN_SQL, schema), {"tenant": tenant, "thread_id": thread_id, "hashes": hashes}
        )
        row = (rows or [{}])[0]
        seen, epoch = int(row.get("next_elem") or 0), row.get("epoch")
        sealed = frozenset(row.get("sealed") or ())
        for digest, elem_id in zip(hashes, row.get("ids") or [], strict=True):
            if elem_id is not None:
                out.ids[digest] = int(elem_id)
    next_elem = max(seen or 0, 1)
    new = []
    for digest, element in elements.items():
        if digest not in out.ids:
            out.ids[digest] = next_elem
            next_elem += 1
            new.append(element)
    out.next_elem = next_elem
    pages = to_seal({out.ids[h]: e for h, e in elements.items()}, sealed)
    in_pages = {i for p in pages for i in range(p.first_id, p.last_id + 1)}
    loose_new = []
    for element in new:
        if out.ids[element.hash] not in in_pages:
            loose_new.append(element)
            if element.hash not in packed:
                packed[element.hash] = pack(element.type, element.blob)
    fresh = {out.ids[e.hash] for e in new}
    out.sealed = sealed | {p.first_id for p in pages}
    out.params = {
        "seen": seen,
        "epoch": epoch,
        "next_elem": next_elem,
        "e_ids": [out.ids[e.hash] for e in loose_new],
        "e_hashes": [e.hash for e in loose_new],
        "e_types": [packed[e.hash][0] for e in loose_new],
        "e_blobs": [packed[e.hash][1] for e in loose_new],
        "p_first": [p.first_id for p in pages],
        "p_last": [p.last_id for p in pages],
        "p_types": [p.type for p in pages],
        "p_hashes": [p.hashes for p in pages],
        "p_sizes": [codec.ranges_literal(p.sizes) for p in pages],
        "p_blobs": [p.blob for p in pages],
        "d_ids": sorted(in_pages - fresh),
    }
    return out


def gave_up(what: str, thread_id: str) -> RuntimeError:
    return RuntimeError(
        f"{what}: thread {thread_id!r} kept changing under this call ({MAX_ATTEMPTS} tries); "
        "is a REPEATABLE READ or SERIALIZABLE transaction wrapping the saver?"
    )
