"""Compress small serialized values (one message, one write) with a preset dictionary.

Postgres only compresses values in rows over about 2 kB, so a message stored on its own row
would never be compressed. Most of a serialized message is boilerplate (class path, field
names); a preset deflate dictionary holding that boilerplate halves a typical message. The
dictionary is frozen here, named by the ``z1:`` type prefix: changing it means a new prefix,
never editing this one, or stored values could no longer be read.

>>> kind, packed = pack("msgpack", b"x" * 200)
>>> kind, unpack(kind, packed) == ("msgpack", b"x" * 200)
('z1:msgpack', True)
"""

from __future__ import annotations

import json
import zlib
from typing import Any

PREFIX = "z1:"
MIN_BYTES = 64
# Serialized empty LangChain messages (JsonPlusSerializer, langgraph-checkpoint 4.3), the
# commonest last: deflate finds the nearest match cheapest.
_DICTIONARY = b"".join(
    [
        b"\xadfinish_reason\xa4stop\xaamodel_name\xa9tool_call\xa4args\xacinput_tokens"
        b"\xadoutput_tokens\xactotal_tokens\xa4text\xa8tool_use\xa5input",
        b"\xc7\x89\x05\x94\xbelangchain_core.messages.system\xadSystemMessage\x86\xa7content"
        b"\xa0\xb1additional_kwargs\x80\xb1response_metadata\x80\xa4type\xa6system\xa4name"
        b"\xc0\xa2id\xa1x\xb3model_validate_json",
        b"\xc7\xb0\x05\x94\xbclangchain_core.messages.tool\xabToolMessage\x89\xa7content\xa0"
        b"\xb1additional_kwargs\x80\xb1response_metadata\x80\xa4type\xa4tool\xa4name\xc0\xa2id"
        b"\xa1x\xactool_call_id\xa6call_x\xa8artifact\xc0\xa6status\xa7success"
        b"\xb3model_validate_json",
        b"\xc8\x01'\x05\x94\xbalangchain_core.messages.ai\xa9AIMessage\x89\xa7content\xa0"
        b"\xb1additional_kwargs\x80\xb1response_metadata\x82\xadfinish_reason\xa4stop"
        b"\xaamodel_name\xa1m\xa4type\xa2ai\xa4name\xc0\xa2id\xa9lc_run--x\xaatool_calls\x91"
        b"\x84\xa4name\xa1f\xa4args\x80\xa2id\xa6call_x\xa4type\xa9tool_call"
        b"\xb2invalid_tool_calls\x90\xaeusage_metadata\x83\xacinput_tokens\x01"
        b"\xadoutput_tokens\x01\xactotal_tokens\x02\xb3model_validate_json",
        b"\xc7\x86\x05\x94\xbdlangchain_core.messages.human\xacHumanMessage\x86\xa7content"
        b"\xa0\xb1additional_kwargs\x80\xb1response_metadata\x80\xa4type\xa5human\xa4name"
        b"\xc0\xa2id\xa1x\xb3model_validate_json",
    ]
)


def pack(type_: str, blob: bytes) -> tuple[str, bytes]:
    """``(type, blob)`` to store: compressed (``z1:`` + type) when that is smaller."""
    if len(blob) < MIN_BYTES:
        return type_, blob
    z = zlib.compressobj(6, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY)
    packed = z.compress(blob) + z.flush()
    return (PREFIX + type_, packed) if len(packed) < len(blob) else (type_, blob)


def unpack(type_: str, blob: bytes | None) -> tuple[str, bytes]:
    """Inverse of :func:`pack`."""
    if not type_.startswith(PREFIX):
        return type_, blob if blob is not None else b""
    z = zlib.decompressobj(-15, _DICTIONARY)
    return type_[len(PREFIX) :], z.decompress(blob or b"") + z.flush()


# For checkpoint bodies (compact JSON): the keys and channel names every checkpoint repeats.
_BODY_DICTIONARY = (
    b'"pending_sends":[],"updated_channels":null,"channel_values":{},'
    b'"__input__":{},"__interrupt__":"branch:to:","__start__":"__start__":{"__start__":"0000000'
    b'"messages":"0000000,"versions_seen":{"__input__":{},"__start__":{"__start__":"0000000'
    b'{"ts":"20'
)
_RAW, _DEFLATED = b"j", b"z"


def pack_json(value: Any) -> bytes:
    """Compact JSON, deflated with a preset dictionary when that is smaller.

    >>> unpack_json(pack_json({"ts": "2026", "versions_seen": {"a": {"b": 1}}}))
    {'ts': '2026', 'versions_seen': {'a': {'b': 1}}}
    """
    # ensure_ascii: a lone surrogate in a str would not encode as UTF-8.
    raw = json.dumps(value, separators=(",", ":")).encode()
    z = zlib.compressobj(6, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, _BODY_DICTIONARY)
    packed = z.compress(raw) + z.flush()
    return _DEFLATED + packed if len(packed) < len(raw) else _RAW + raw


def unpack_json(data: bytes) -> Any:
    """Inverse of :func:`pack_json`."""
    data = bytes(data)
    if data[:1] == _DEFLATED:
        z = zlib.decompressobj(-15, _BODY_DICTIONARY)
        return json.loads(z.decompress(data[1:]) + z.flush())
    return json.loads(data[1:])
