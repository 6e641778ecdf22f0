"""How channel values become rows and back: inline primitives, blobs and list elements.

No I/O here. Values go through the saver's serde (``JsonPlusSerializer`` by default). A long
list (a thread's messages) is serialized once and cut into its elements' bytes, each named by
a hash of those bytes; the channel value then becomes a few ranges of per-thread element ids.
An append-only list of N messages therefore costs one element row per message plus two
integers per version, where PostgresSaver stores the whole list again at every step.

>>> encode_ranges([1, 2, 3, 7, 8, 2])
[1, 3, 7, 8, 2, 2]
>>> decode_ranges([1, 3, 7, 8, 2, 2])
[1, 2, 3, 7, 8, 2]
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP, PendingWrite, writes_sort_key
from langgraph.checkpoint.serde.base import SerializerProtocol

from langmem_vault.checkpointers._compression import pack, unpack
from langmem_vault.checkpointers._decoded import MAX_CHUNKS_PER_READ, MISSING, DecodedCache
from langmem_vault.checkpointers._msgpack_frames import split_array
from langmem_vault.checkpointers._msgpack_load import loads
from langmem_vault.checkpointers._pages import MSGPACK, ReadElements

# The blob type of a channel value stored as element ranges (never a serde type name).
ELEMENTS_TYPE = "vault.elements"
EMPTY_TYPE = "empty"
# A list is split into elements only when that saves space: enough bytes in total, and
# elements big enough that a row per element (about 60 bytes of overhead) is cheap.
MIN_LIST_BYTES = 512
MIN_ELEMENT_BYTES = 48
TITLE_CHARS = 80
# Exact types kept inline in the checkpoint's JSON body (JSON round-trips them exactly,
# NUL characters, big integers and non-finite floats included).
_INLINE_TYPES = (str, int, float, bool, type(None))


@dataclass(frozen=True, slots=True)
class Element:
    """One serialized list element, named by the hash of its type and bytes."""

    hash: bytes
    type: str
    blob: bytes


@dataclass(frozen=True, slots=True)
class EncodedValue:
    """A channel value ready for ``saver_blobs``: a serde blob, or a list of elements."""

    channel: str
    type: str
    blob: bytes | None
    elements: tuple[Element, ...] | None = None


def is_inline(value: Any) -> bool:
    """Whether ``value`` is stored inside the checkpoint's body rather than as a blob."""
    return type(value) in _INLINE_TYPES


def element_hash(type_: str, blob: bytes) -> bytes:
    return hashlib.blake2b(type_.encode() + b"\x00" + blob, digest_size=16).digest()


def encode_value(serde: SerializerProtocol, channel: str, value: Any) -> EncodedValue:
    """Serialize one channel value; long lists of sizeable elements become elements."""
    type_, blob = serde.dumps_typed(value)
    if type(value) is list and value and _worth_splitting(len(blob), len(value)):
        frames = split_array(blob) if type_ == MSGPACK else None
        if frames is not None and len(frames) == len(value):
            parts = [(MSGPACK, frame) for frame in frames]
        else:  # another serde (e.g. encrypted): one call per element
            parts = [serde.dumps_typed(item) for item in value]
        elements = tuple(Element(element_hash(t, b), t, b) for t, b in parts)
        return EncodedValue(channel, ELEMENTS_TYPE, None, elements)
    return EncodedValue(channel, type_, blob)


def _worth_splitting(total: int, count: int) -> bool:
    return total >= MIN_LIST_BYTES and total >= MIN_ELEMENT_BYTES * count


def encode_ranges(ids: Sequence[int]) -> list[int]:
    """Run-length encode element ids as flattened ``[start, end, start, end, ...]``."""
    out: list[int] = []
    for i in ids:
        if out and out[-1] + 1 == i:
            out[-1] = i
        else:
            out.extend((i, i))
    return out


def decode_ranges(ranges: Sequence[int]) -> list[int]:
    """Inverse of :func:`encode_ranges`."""
    ids: list[int] = []
    for k in range(0, len(ranges), 2):
        ids.extend(range(ranges[k], ranges[k + 1] + 1))
    return ids


def ranges_literal(ranges: Sequence[int]) -> str:
    """A Postgres array literal, so several ranges can travel in one ``text[]`` parameter."""
    return "{" + ",".join(map(str, ranges)) + "}"


def decode_value(
    serde: SerializerProtocol,
    type_: str,
    blob: bytes | None,
    elems: Sequence[int] | None,
    elements: ReadElements,
    cache: DecodedCache | None = None,
) -> Any:
    """Rebuild a channel value from its ``saver_blobs`` row and the thread's elements.

    With ``cache`` (and the elements' hashes, which reads fetch), elements decoded before come
    from the cache and the others are decoded (all in one serde call when they are msgpack)
    and cached.
    """
    if type_ != ELEMENTS_TYPE:
        return loads(serde, unpack(type_, blob))
    ids = decode_ranges(elems or [])
    keys = elements.hashes(ids) if cache is not None else None
    out: list[Any] = []
    touched = 0
    if keys is not None and cache is not None:
        out, touched = cache.get_many(keys)
    if not touched:  # nothing cached (a cold read): the whole list in one go
        out = _decode_elements(serde, elements, ids)
        if keys is not None and cache is not None:
            cache.put_many(keys, out)
        return out
    todo = [pos for pos, value in enumerate(out) if value is MISSING]
    if not todo:
        return out
    decoded = _decode_elements(serde, elements, [ids[pos] for pos in todo])
    for pos, value in zip(todo, decoded, strict=True):
        out[pos] = value
    if keys is not None and cache is not None:
        if touched + 1 > MAX_CHUNKS_PER_READ:  # re-chunk: the next read unpickles once
            cache.put_many(keys, out)
        else:
            cache.put_many([keys[pos] for pos in todo], decoded)
    return out


def _decode_elements(serde: SerializerProtocol, elements: ReadElements, ids: list[int]) -> Any:
    """The elements ``ids``, decoded: msgpack ones as one array (one serde call)."""
    joined = elements.msgpack_array(ids)
    if joined is not None:
        return loads(serde, (MSGPACK, joined))
    return [loads(serde, part) for part in elements.raw_many(ids)]


def dump_writes(
    serde: SerializerProtocol, writes: Sequence[tuple[str, Any]]
) -> list[tuple[int, str, str, bytes]]:
    """``(idx, channel, type, blob)`` per write; special channels take their fixed index.

    Written values stay whole blobs: a node's new message usually gets its id from the
    add_messages reducer after the write is saved, so it would rarely match the element the
    next checkpoint stores, and a stray element id would split that list's id ranges.
    """
    out = []
    for idx, (channel, value) in enumerate(writes):
        type_, blob = pack(*serde.dumps_typed(value))
        out.append((WRITES_IDX_MAP.get(channel, idx), channel, type_, blob))
    return out


def load_writes(serde: SerializerProtocol, rows: Iterable[Mapping[str, Any]]) -> list[PendingWrite]:
    """Pending writes in ``writes_sort_key`` order, the order live execution applies them."""
    ordered = sorted(rows, key=lambda r: writes_sort_key(r["task_path"], r["task_id"], r["idx"]))
    return [
        (r["task_id"], r["channel"], loads(serde, unpack(r["type"], r["blob"]))) for r in ordered
    ]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return " ".join(parts)
    return ""


def _is_human(message: Any) -> bool:
    if isinstance(message, dict):
        return message.get("role") in ("user", "human") or message.get("type") == "human"
    return getattr(message, "type", None) == "human"


def thread_title(messages: Sequence[Any]) -> str | None:
    """The first human message's text, on one line, cut to ``TITLE_CHARS`` characters."""
    for message in messages:
        if _is_human(message):
            content = message.get("content") if isinstance(message, dict) else message.content
            text = " ".join(_text_of(content).split())
            if text:
                return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
    return None
