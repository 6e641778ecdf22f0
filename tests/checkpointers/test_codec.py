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
from langmem_vault.checkpointers.pages import PAGE_SIZE, ReadElements, to_seal

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
    assert decode_value(serde, ELEMENTS_TYPE, None, ranges, ReadElements.of(by_id)) == messages


def test_complete_pages_seal_and_read_back_with_loose_elements() -> None:
    serde = JsonPlusSerializer()
    messages = [HumanMessage(f"message {i} " * (i % 7 + 1), id=f"m{i}") for i in range(80)]
    encoded = encode_value(serde, "messages", messages)
    assert encoded.elements is not None
    by_id = {i + 1: e for i, e in enumerate(encoded.elements)}
    del by_id[40]  # ids 33..64 are no longer all at hand: that page stays loose
    pages = to_seal(by_id, sealed=[])
    assert [(p.first_id, p.last_id) for p in pages] == [(1, 32)]
    assert to_seal(by_id, sealed=[1]) == []  # already stored
    read = ReadElements()
    for p in pages:
        read.add_page(p.first_id, p.type, p.blob, list(p.sizes), p.hashes)
    for i, e in by_id.items():
        if i > PAGE_SIZE:
            read.add_loose(i, *pack(e.type, e.blob), e.hash)
    assert [read.hash(i) for i in by_id] == [e.hash for e in by_id.values()]
    assert [read.raw(i) for i in by_id] == [(e.type, e.blob) for e in by_id.values()]
    ids = [i for i in by_id if i != 3] + [3, 3]  # any order, an element twice
    expected = [serde.loads_typed(read.raw(i)) for i in ids]
    got = decode_value(serde, ELEMENTS_TYPE, None, encode_ranges(ids), read)
    assert got == expected and len(got) == 80


def test_a_page_of_mixed_types_stays_loose() -> None:
    from langmem_vault.checkpointers.codec import Element

    elements = {
        i: Element(bytes([i]) * 16, "msgpack" if i != 5 else "json", b"x") for i in range(1, 33)
    }
    assert to_seal(elements, sealed=()) == []
    elements[5] = Element(b"5" * 16, "msgpack", b"y")
    assert len(to_seal(elements, sealed=())) == 1
