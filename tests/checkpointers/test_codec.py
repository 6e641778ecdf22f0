"""The byte-level helpers: msgpack framing, compression, id ranges."""

from __future__ import annotations

from typing import Any

import ormsgpack
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langmem_vault.checkpointers._codec import (
    ELEMENTS_TYPE,
    Element,
    decode_ranges,
    decode_value,
    element_hash,
    encode_ranges,
    encode_value,
)
from langmem_vault.checkpointers._compression import pack, pack_json, unpack, unpack_json
from langmem_vault.checkpointers._msgpack_frames import join_array, split_array
from langmem_vault.checkpointers._pages import PAGE_SIZE, ReadElements, to_seal

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
    assert read.hashes(list(by_id)) == [e.hash for e in by_id.values()]
    assert [read.raw(i) for i in by_id] == [(e.type, e.blob) for e in by_id.values()]
    ids = [i for i in by_id if i != 3] + [3, 3]  # any order, an element twice
    expected = [serde.loads_typed(read.raw(i)) for i in ids]
    got = decode_value(serde, ELEMENTS_TYPE, None, encode_ranges(ids), read)
    assert got == expected and len(got) == 80


def test_a_page_of_mixed_types_stays_loose() -> None:

    elements = {
        i: Element(bytes([i]) * 16, "msgpack" if i != 5 else "json", b"x") for i in range(1, 33)
    }
    assert to_seal(elements, sealed=()) == []
    elements[5] = Element(b"5" * 16, "msgpack", b"y")
    assert len(to_seal(elements, sealed=())) == 1


def _read_elements(count: int, sealed: set[int]) -> tuple[ReadElements, dict[int, Element]]:
    """Elements 1..count of a list, pages whose first id is in ``sealed`` stored as pages and
    the others loose; with their serialized form by id."""
    serde = JsonPlusSerializer()
    messages = [HumanMessage(f"m{i} " * (i % 5 + 1), id=f"m{i}") for i in range(count)]
    frames = split_array(serde.dumps_typed(messages)[1])
    assert frames is not None
    by_id = {i + 1: Element(element_hash("msgpack", f), "msgpack", f) for i, f in enumerate(frames)}
    read = ReadElements()
    pages = [p for p in to_seal(by_id, sealed=[]) if p.first_id in sealed]
    for p in pages:
        read.add_page(p.first_id, p.type, p.blob, list(p.sizes), p.hashes)
    in_pages = {i for p in pages for i in range(p.first_id, p.last_id + 1)}
    for i, e in by_id.items():
        if i not in in_pages:
            read.add_loose(i, *pack(e.type, e.blob), e.hash)
    return read, by_id


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=100).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.sets(st.sampled_from([1, 33, 65])),
            st.lists(st.integers(min_value=1, max_value=n), max_size=120),
        )
    )
)
def test_a_read_joins_any_ids_as_one_msgpack_array(case: tuple[int, set[int], list[int]]) -> None:
    # Runs of consecutive ids inside a page are taken as one slice: any order, repeats,
    # runs crossing a page's end or broken by a loose element give the same array.
    count, sealed, ids = case
    read, by_id = _read_elements(count, sealed)
    assert read.msgpack_array(ids) == join_array([by_id[i].blob for i in ids])
    assert read.hashes(ids) == [by_id[i].hash for i in ids]
    sorted_ids = sorted(by_id)
    assert read.msgpack_array(sorted_ids) == join_array([by_id[i].blob for i in sorted_ids])


def test_a_read_with_an_element_of_another_serde_type_is_not_joined() -> None:
    serde = JsonPlusSerializer()
    read, by_id = _read_elements(40, {1})
    read.add_loose(41, "json", b'"x"', b"h" * 16)
    read.add_loose(42, "msgpack", b"\xa1y")  # read without its hash
    assert read.msgpack_array([1, 2, 41]) is None
    assert read.msgpack_array([1, 2, 42]) == join_array([by_id[1].blob, by_id[2].blob, b"\xa1y"])
    assert read.hashes([1, 42]) is None
    expected = [serde.loads_typed(read.raw(i)) for i in (3, 41, 4)]
    assert decode_value(serde, ELEMENTS_TYPE, None, encode_ranges([3, 41, 4]), read) == expected
