"""List elements stored in pages of :data:`PAGE_SIZE` consecutive ids, and read back.

A thread's list elements (its messages) get ids from a per-thread counter (see
:mod:`~langmem_vault.checkpointers._elements`). Each is first stored as a row of its own
(``saver_elements``, "loose"). Page ``k`` holds ids ``32k+1 .. 32k+32``: the put whose list
holds all of them (the writer has their bytes at hand) writes the page row and deletes their
loose rows, in the same statement. Reading a 400-message thread then fetches about 13 page
rows and 16 loose ones instead of 400 rows, and inflates 13 blobs instead of 400. A page is
never rewritten: two writers sealing the same page write the same elements (an id names one
element for good), so the second insert is dropped and its delete finds nothing.

Pages are aligned (an id's page starts at ``(id - 1) // 32 * 32 + 1``); that and the row
format are frozen: changing either means a new table, or stored pages would be misread.

>>> page_start(1), page_start(32), page_start(33)
(1, 1, 33)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langmem_vault.checkpointers._compression import pack, unpack
from langmem_vault.checkpointers._msgpack_frames import array_header

PAGE_SIZE = 32
HASH_BYTES = 16
MSGPACK = "msgpack"
NO_RUN = -2  # ids start at 1: no id follows this one

# The loose elements and the pages holding ids of the ranges in ``r`` (tenant, thread_id, ids
# int4range), each as a per-range index scan: joined flat, the planner would rather hash the
# whole table (its row estimate for the ranges is a guess). A page spanning two ranges comes
# back once per range; readers keep one. Pages are aligned, so a page ending at or after a
# range's first id starts less than a page before it: that bound starts the index scan there,
# not at the thread's first page (a compacted long thread reads only its late ids).
LOOSE_FROM = """r CROSS JOIN LATERAL (
    SELECT e.elem_id, e.type, e.blob, e.hash FROM {schema}.saver_elements e
    WHERE e.tenant = r.tenant AND e.thread_id = r.thread_id
      AND e.elem_id >= lower(r.ids) AND e.elem_id < upper(r.ids)
    OFFSET 0
) AS e"""
PAGES_FROM = (
    """r CROSS JOIN LATERAL (
    SELECT p.first_id, p.type, p.blob, p.hashes, p.sizes FROM {schema}.saver_pages p
    WHERE p.tenant = r.tenant AND p.thread_id = r.thread_id
      AND p.first_id < upper(r.ids) AND p.last_id >= lower(r.ids)
      AND p.first_id > lower(r.ids) - """
    + str(PAGE_SIZE)
    + """
    OFFSET 0
) AS p"""
)


def page_start(elem_id: int) -> int:
    """The first id of the page ``elem_id`` belongs to."""
    return (elem_id - 1) // PAGE_SIZE * PAGE_SIZE + 1


class Serialized(Protocol):
    """One serialized element (``codec.Element``)."""

    @property
    def hash(self) -> bytes: ...
    @property
    def type(self) -> str: ...
    @property
    def blob(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class Page:
    """A page row to store: ``sizes`` and ``hashes`` in id order, ``blob`` compressed."""

    first_id: int
    type: str
    hashes: bytes
    sizes: tuple[int, ...]
    blob: bytes

    @property
    def last_id(self) -> int:
        return self.first_id + len(self.sizes) - 1


def to_seal(by_id: Mapping[int, Serialized], sealed: Iterable[int]) -> list[Page]:
    """The pages ``by_id`` (id -> element, a writer's list) completes that are not ``sealed``
    (first ids of stored pages). Elements of several types (another serde) stay loose."""
    done = set(sealed)
    counts: dict[int, int] = {}
    for elem_id in by_id:
        start = page_start(elem_id)
        if start not in done:
            counts[start] = counts.get(start, 0) + 1
    out = []
    for start, count in sorted(counts.items()):
        if count < PAGE_SIZE:
            continue
        members = [by_id[i] for i in range(start, start + PAGE_SIZE)]
        types = {m.type for m in members}
        if len(types) != 1:
            continue
        type_, blob = pack(types.pop(), b"".join(m.blob for m in members))
        hashes = b"".join(m.hash for m in members)
        out.append(Page(start, type_, hashes, tuple(len(m.blob) for m in members), blob))
    return out


class ReadElements:
    """A thread's elements as one read found them: loose rows and pages, each page inflated
    the first time one of its elements is needed (a warm read takes hashes only)."""

    __slots__ = ("_inflated", "_loose", "_pages")

    def __init__(self) -> None:
        self._loose: dict[int, tuple[str, bytes, bytes | None]] = {}
        self._pages: dict[int, tuple[str, bytes, list[int], bytes]] = {}
        self._inflated: dict[int, tuple[str, bytes, list[int]]] = {}

    @classmethod
    def of(cls, loose: Mapping[int, tuple[str, bytes]]) -> ReadElements:
        """Loose elements only, by id: ``{id: (packed type, packed blob)}``."""
        out = cls()
        for elem_id, (type_, blob) in loose.items():
            out.add_loose(elem_id, type_, blob)
        return out

    def add_loose(self, elem_id: int, type_: str, blob: bytes, hash_: bytes | None = None) -> None:
        self._loose[elem_id] = (type_, blob, hash_)

    def add_page(
        self, first_id: int, type_: str, blob: bytes, sizes: list[int], hashes: bytes
    ) -> None:
        self._pages[first_id] = (type_, blob, sizes, hashes)

    def add_row(self, row: Mapping[str, Any], id_column: str) -> None:
        """A row of a read (kind ``e``: a loose element, ``p``: a page; its id in
        ``id_column``, its hashes in ``hash``, a page's sizes in ``elems``)."""
        if row["kind"] == "e":
            self.add_loose(row[id_column], row["type"], row["blob"], row.get("hash"))
        else:
            self.add_page(row[id_column], row["type"], row["blob"], row["elems"], row["hash"])

    def hashes(self, ids: Iterable[int]) -> list[bytes] | None:
        """:meth:`hash` of each of ``ids``; None if one is unknown (a loose row read without
        its hash). One loop: a cold read asks for hundreds."""
        out = []
        loose, pages = self._loose, self._pages
        for elem_id in ids:
            found = loose.get(elem_id)
            if found is not None:
                if found[2] is None:
                    return None
                out.append(found[2])
                continue
            start = page_start(elem_id)
            k = (elem_id - start) * HASH_BYTES
            out.append(pages[start][3][k : k + HASH_BYTES])
        return out

    def raw(self, elem_id: int) -> tuple[str, bytes]:
        """``(serde type, serialized bytes)`` of one element."""
        return self.raw_many([elem_id])[0]

    def raw_many(self, ids: Iterable[int]) -> list[tuple[str, bytes]]:
        """:meth:`raw` of each of ``ids`` (one loop: a cold read asks for hundreds)."""
        out = []
        loose, inflated = self._loose, self._inflated
        for elem_id in ids:
            found = loose.get(elem_id)
            if found is not None:
                out.append(unpack(found[0], found[1]))
                continue
            start = page_start(elem_id)
            page = inflated.get(start) or self._inflate(start)
            k = elem_id - start
            out.append((page[0], page[1][page[2][k] : page[2][k + 1]]))
        return out

    def msgpack_array(self, ids: Sequence[int]) -> bytes | None:
        """The msgpack array of the elements ``ids``, when all of them are msgpack (else
        None): what :func:`~.msgpack_frames.join_array` makes of their :meth:`raw_many`, but
        each run of consecutive ids inside a page is one slice of the page, not one per id."""
        pieces: list[bytes] = []
        loose, inflated = self._loose, self._inflated
        data, offsets = b"", [0]
        start = lo = hi = 0
        last = NO_RUN  # the id the current run inside a page ends with
        for elem_id in ids:
            k = elem_id - start
            if elem_id == last + 1 and k < len(offsets) - 1:
                hi, last = offsets[k + 1], elem_id  # the run goes on in the same page
                continue
            if last != NO_RUN:
                pieces.append(data[lo:hi])
                last = NO_RUN
            found = loose.get(elem_id)
            if found is not None:
                type_, blob = unpack(found[0], found[1])
                if type_ != MSGPACK:
                    return None
                pieces.append(blob)
                continue
            start = page_start(elem_id)
            page = inflated.get(start) or self._inflate(start)
            if page[0] != MSGPACK:
                return None
            _, data, offsets = page
            k = elem_id - start
            lo, hi, last = offsets[k], offsets[k + 1], elem_id
        if last != NO_RUN:
            pieces.append(data[lo:hi])
        return array_header(len(ids)) + b"".join(pieces)

    def _inflate(self, start: int) -> tuple[str, bytes, list[int]]:
        type_, blob, sizes, _ = self._pages[start]
        serde_type, data = unpack(type_, blob)
        offsets = [0, *itertools.accumulate(sizes)]
        if offsets[-1] != len(data):
            raise ValueError(f"page {start} of a thread is damaged: sizes do not add up")
        page = self._inflated[start] = (serde_type, data, offsets)
        return page
