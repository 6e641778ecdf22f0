"""Cut a serialized msgpack array into its elements' bytes, and join them back.

Serializing a 400-message list once and cutting it is five times faster than serializing
each message on its own, and loading the re-joined array is twice as fast as loading 400
small blobs. msgpack is context-free, so an element's bytes inside the array are exactly the
bytes of the element alone. Only the framing is read here: lengths, never values.

>>> split_array(bytes([0x92, 0x01, 0xA1, 0x61]))
[b'\\x01', b'\\xa1a']
>>> join_array([b"\\x01", b"\\xa1a"])
b'\\x92\\x01\\xa1a'
"""

from __future__ import annotations

from collections.abc import Sequence

# Fixed total sizes (header included) of the scalar formats, by first byte.
_FIXED = {
    0xC0: 1, 0xC2: 1, 0xC3: 1,  # nil, false, true
    0xCA: 5, 0xCB: 9,  # float 32/64
    0xCC: 2, 0xCD: 3, 0xCE: 5, 0xCF: 9,  # uint 8/16/32/64
    0xD0: 2, 0xD1: 3, 0xD2: 5, 0xD3: 9,  # int 8/16/32/64
    0xD4: 3, 0xD5: 4, 0xD6: 6, 0xD7: 10, 0xD8: 18,  # fixext 1/2/4/8/16
}  # fmt: skip
# Variable-length payloads: (bytes of the length field, extra header bytes after it).
_SIZED = {
    0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0),  # bin 8/16/32
    0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),  # ext 8/16/32 (one type byte)
    0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0),  # str 8/16/32
}  # fmt: skip


def _count(data: bytes, pos: int, size: int) -> int:
    return int.from_bytes(data[pos : pos + size], "big")


def _skip(data: bytes, pos: int) -> int:
    """Position just after the object starting at ``pos`` (iterative: no recursion limit)."""
    pending = 1
    while pending:
        pending -= 1
        b = data[pos]
        if b <= 0x7F or b >= 0xE0:  # positive / negative fixint
            pos += 1
        elif b <= 0x8F:  # fixmap
            pending += 2 * (b & 0x0F)
            pos += 1
        elif b <= 0x9F:  # fixarray
            pending += b & 0x0F
            pos += 1
        elif b <= 0xBF:  # fixstr
            pos += 1 + (b & 0x1F)
        elif b in _FIXED:
            pos += _FIXED[b]
        elif b in _SIZED:
            width, extra = _SIZED[b]
            pos += 1 + width + extra + _count(data, pos + 1, width)
        elif b in (0xDC, 0xDD):  # array 16/32
            width = 2 if b == 0xDC else 4
            pending += _count(data, pos + 1, width)
            pos += 1 + width
        elif b in (0xDE, 0xDF):  # map 16/32
            width = 2 if b == 0xDE else 4
            pending += 2 * _count(data, pos + 1, width)
            pos += 1 + width
        else:
            raise ValueError(f"not msgpack: byte 0x{b:02x} at {pos}")
        if pos > len(data):
            raise ValueError("truncated msgpack")
    return pos


def split_array(data: bytes) -> list[bytes] | None:
    """The bytes of each element of the msgpack array ``data``; None if it is not one."""
    if not data:
        return None
    b = data[0]
    if 0x90 <= b <= 0x9F:
        n, pos = b & 0x0F, 1
    elif b == 0xDC:
        n, pos = _count(data, 1, 2), 3
    elif b == 0xDD:
        n, pos = _count(data, 1, 4), 5
    else:
        return None
    out = []
    try:
        for _ in range(n):
            end = _skip(data, pos)
            out.append(data[pos:end])
            pos = end
    except (ValueError, IndexError):
        return None
    return out if pos == len(data) else None


def array_header(n: int) -> bytes:
    """The header of a msgpack array of ``n`` elements (its elements' bytes follow it)."""
    if n < 16:
        return bytes([0x90 | n])
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def join_array(parts: Sequence[bytes]) -> bytes:
    """The msgpack array whose elements are the already-serialized ``parts``."""
    return array_header(len(parts)) + b"".join(parts)
