"""The byte-level helpers: msgpack framing, compression, id ranges."""

from __future__ import annotations

from typing import Any

import ormsgpack
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langmem_vault.checkpointers.codec import (
    ELEMENTS_TYPE,
    decode_ranges,
    decode_value,
    encode_ranges,
    encode_value,
)
from langmem_vault.checkpointers.compression import pack, pack_json, unpack, unpack_json
from langmem_vault.checkpointers.msgpack_frames import join_array, split_array

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=300)
    | st.binary(max_size=300)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=20) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=30,
)


@settings(max_examples=100, deadline=None)
@given(st.lists(values, max_size=40))
def test_split_then_join_gives_back_the_array_and_each_element(items: list[Any]) -> None:
    data = ormsgpack.packb(items)
    frames = split_array(data)
    assert frames is not None and len(frames) == len(items)
    assert join_array(frames) == data
    assert [ormsgpack.unpackb(f) for f in frames] == ormsgpack.unpackb(data)


def test_split_array_refuses_what_is_not_one_array() -> None:
    assert split_array(ormsgpack.packb({"a": 1})) is None
    assert split_array(ormsgpack.packb([1, 2])[:-1]) is None  # truncated
    assert split_array(ormsgpack.packb([1]) + b"\x01") is None  # trailing bytes
    assert split_array(b"") is None


@given(st.lists(st.integers(min_value=1, max_value=50), max_size=60))
def test_ranges_round_trip(ids: list[int]) -> None:
    assert decode_ranges(encode_ranges(ids)) == ids


@given(st.binary(max_size=2000))
def test_pack_round_trips_and_never_grows_much(blob: bytes) -> None:
    kind, packed = pack("msgpack", blob)
    assert unpack(kind, packed) == ("msgpack", blob)
    assert len(packed) <= len(blob)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


@given(json_values)
def test_pack_json_round_trips(value: Any) -> None:
    assert unpack_json(pack_json({"x": value})) == {"x": value}


def test_messages_shrink_with_the_preset_dictionary() -> None:
    serde = JsonPlusSerializer()
    _, blob = serde.dumps_typed(AIMessage("The readiness probe fires too early.", id="run-1"))
    kind, packed = pack("msgpack", blob)
    assert kind == "z1:msgpack" and len(packed) < len(blob) * 0.6


def test_long_lists_split_into_elements_and_decode_exactly() -> None:
    serde = JsonPlusSerializer()
    messages = [
        HumanMessage(f"question {i} " * 10, id=f"h{i}") if i % 2 else AIMessage(f"a{i} " * 20)
        for i in range(12)
    ]
    encoded = encode_value(serde, "messages", messages)
    assert encoded.type == ELEMENTS_TYPE and encoded.elements is not None
    by_id = {i + 1: pack(e.type, e.blob) for i, e in enumerate(encoded.elements)}
    ranges = encode_ranges(list(by_id))
    assert decode_value(serde, ELEMENTS_TYPE, None, ranges, by_id) == messages
