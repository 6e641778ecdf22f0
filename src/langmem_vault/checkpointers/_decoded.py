"""A per-process cache of decoded list elements (a thread's messages), for repeated reads.

Turning 400 stored messages back into LangChain message objects (msgpack, then pydantic
validation per message) is most of a ``get_tuple`` at turn 200, and a chat reads the same
thread turn after turn: every read rebuilds the same objects. Elements are content-addressed
(named by a hash of their type and bytes), so a decoded element can be kept by that hash and
is valid for as long as anyone stores those bytes, in any thread.

The cache never hands out an object it holds: callers may mutate what they get (langgraph's
``add_messages`` sets missing ids in place). It keeps elements pickled, taken right after
decoding, and every hit is a fresh ``pickle.loads``: an independent deep copy. One pickle
call per element would cost about as much as decoding again, so elements are pickled in
chunks (those one read decoded, together) and a read unpickles each chunk it needs once; a
read that needed many chunks re-pickles its whole list as one, so a growing chat thread stays
a few chunks. Only pydantic models (LangChain messages are) and plain builtins are kept;
pickle round-trips them exactly. The pickles never leave the process.

An element is only kept the second time it is decoded: pickling costs about a fifth of
decoding, and a thread read once (a one-off lookup, a process serving many threads) should
not pay it. A chat decodes each message twice, then reads it from the cache.

>>> from langchain_core.messages import HumanMessage
>>> cache = DecodedCache(max_bytes=1 << 20)
>>> pair = [HumanMessage("hi", id="1"), HumanMessage("yo", id="2")]
>>> cache.put_many([b"h1", b"h2"], pair)  # first sight: only noted
>>> cache.get_many([b"h2"])[0][0] is MISSING
True
>>> cache.put_many([b"h1", b"h2"], pair)
>>> a, touched = cache.get_many([b"h2", b"h3"])
>>> a[0] == HumanMessage("yo", id="2"), a[1] is MISSING, touched
(True, True, 1)
>>> cache.get_many([b"h2"])[0][0] is cache.get_many([b"h2"])[0][0]
False
"""

from __future__ import annotations

import itertools
import pickle
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

# Enough for about 200 threads of 400 short messages; bounded in bytes, not entries.
DEFAULT_MAX_BYTES = 32 << 20
# A read that unpickles more chunks than this re-pickles its list as one chunk.
MAX_CHUNKS_PER_READ = 8
MISSING: Any = object()
_PLAIN = (str, int, float, bool, type(None), bytes, dict, list, tuple)


class _Chunk:
    __slots__ = ("data", "keys", "live")

    def __init__(self, data: bytes, keys: tuple[bytes, ...]) -> None:
        self.data = data
        self.keys = keys
        self.live = 0  # keys the index still points here for


class DecodedCache:
    """Least-recently-used chunks of pickled decoded elements, bounded by total size.

    Thread-safe: a sync saver may be shared by many threads.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise ValueError(f"read_cache_bytes must be an int >= 0, got {max_bytes!r}")
        self.max_bytes = max_bytes
        self.size = 0
        self._chunks: OrderedDict[int, _Chunk] = OrderedDict()
        self._index: dict[bytes, tuple[int, int]] = {}  # key -> (chunk id, position)
        self._ids = itertools.count()
        # Keys decoded once, not kept yet (about 60 bytes each: a small share of max_bytes).
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._max_seen = max(max_bytes // 256, 1024)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._index)

    def get_many(self, keys: Sequence[bytes]) -> tuple[list[Any], int]:
        """Fresh copies of the elements under ``keys`` (:data:`MISSING` where unknown), and
        how many chunks that took."""
        wanted: dict[int, bytes] = {}
        where: list[tuple[int, int] | None] = []
        with self._lock:
            if not self._index:  # empty (a cold process): no lookups
                return [MISSING] * len(keys), 0
            for key in keys:
                at = self._index.get(key)
                where.append(at)
                if at is not None and at[0] not in wanted:
                    chunk = self._chunks[at[0]]
                    wanted[at[0]] = chunk.data
                    self._chunks.move_to_end(at[0])
        loaded = {chunk_id: pickle.loads(data) for chunk_id, data in wanted.items()}
        out = [MISSING if at is None else loaded[at[0]][at[1]] for at in where]
        # An element used twice in one list must not come back as one shared object.
        seen: set[int] = set()
        for pos, value in enumerate(out):
            if value is not MISSING:
                if id(value) in seen:
                    out[pos] = pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
                seen.add(id(value))
        return out, len(loaded)

    def put_many(self, keys: Sequence[bytes], values: Sequence[Any]) -> None:
        """Keep a snapshot of ``values`` (taken now, before the caller can change them) as one
        chunk; nothing is kept if one of them is not a plain value or pydantic model."""
        if not self.max_bytes or not keys:
            return
        with self._lock:
            index, seen = self._index, self._seen
            fresh = [k for k in keys if k not in index and k not in seen]
            seen.update(dict.fromkeys(fresh))
            while len(seen) > self._max_seen:
                seen.popitem(last=False)
        # First sight of all (a cold read): only noted, so the values need no check.
        if len(fresh) == len(keys):
            return
        if not all(isinstance(v, BaseModel) or type(v) in _PLAIN for v in values):
            return
        if fresh:
            first_sight = set(fresh)
            kept = [(k, v) for k, v in zip(keys, values, strict=True) if k not in first_sight]
            keys, values = [k for k, _ in kept], [v for _, v in kept]
        try:
            data = pickle.dumps(list(values), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # an unpicklable field: decode these every time instead
            return
        if len(data) > self.max_bytes // 4:
            return
        with self._lock:
            chunk_id = next(self._ids)
            chunk = self._chunks[chunk_id] = _Chunk(data, tuple(keys))
            self.size += len(data)
            for pos, key in enumerate(keys):
                self._seen.pop(key, None)
                old = self._index.get(key)
                self._index[key] = (chunk_id, pos)
                chunk.live += 1
                if old is not None:
                    self._release(old[0])
            while self.size > self.max_bytes:
                self._drop(next(iter(self._chunks)))

    def clear(self) -> None:
        with self._lock:
            self._chunks.clear()
            self._index.clear()
            self._seen.clear()
            self.size = 0

    def _release(self, chunk_id: int) -> None:
        chunk = self._chunks.get(chunk_id)
        if chunk is not None:
            chunk.live -= 1
            if chunk.live <= 0:
                self._drop(chunk_id)

    def _drop(self, chunk_id: int) -> None:
        chunk = self._chunks.pop(chunk_id)
        self.size -= len(chunk.data)
        if chunk.live:
            for key in chunk.keys:
                at = self._index.get(key)
                if at is not None and at[0] == chunk_id:
                    del self._index[key]
