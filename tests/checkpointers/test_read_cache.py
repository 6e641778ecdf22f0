"""The decoded-message cache: repeated reads decode each stored message once, and hand out
copies that callers may change without changing what the next read returns."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver
from langmem_vault.checkpointers._decoded import MISSING, DecodedCache
from tests.checkpointers.test_compact_storage import message, put_messages
from tests.support.savers import AnySaver, call, config


class CountingSerde(JsonPlusSerializer):
    """Counts the list elements the saver asks it to decode."""

    def __init__(self) -> None:
        super().__init__()
        self.decoded = 0

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        value = super().loads_typed(data)
        self.decoded += len(value) if isinstance(value, list) else 1
        return value


@pytest.fixture(params=["sync", "async"])
async def counted(request: pytest.FixtureRequest, pg_uri: str, schema: str) -> Any:
    serde = CountingSerde()
    if request.param == "sync":
        with VaultSaver.from_conn_string(pg_uri, schema=schema, serde=serde, pool_size=2) as s:
            s.setup()
            yield s, serde
    else:
        async with AsyncVaultSaver.from_conn_string(
            pg_uri, schema=schema, serde=serde, pool_size=2
        ) as a:
            await a.setup()
            yield a, serde


async def messages_of(saver: AnySaver, cfg: Any) -> list[Any]:
    got = await call(saver, "get_tuple", cfg)
    return list(got.checkpoint["channel_values"]["messages"])


async def test_a_growing_thread_decodes_each_message_twice_at_most(counted: Any) -> None:
    saver, serde = counted
    t = f"t-{uuid.uuid4().hex[:8]}"
    history = [message(i) for i in range(40)]
    await put_messages(saver, t, [history[:30]])
    # A message is kept the second time it is decoded (a thread read once costs nothing).
    for _ in range(2):
        serde.decoded = 0
        assert await messages_of(saver, config(t)) == history[:30]
        assert serde.decoded == 30
    # The next turns' reads decode only the new messages, and still return them all.
    await put_messages(saver, t, [history[:30], history[:32]])
    for _ in range(2):
        serde.decoded = 0
        assert await messages_of(saver, config(t)) == history[:32]
        assert serde.decoded == 2
    serde.decoded = 0
    listed = await call(saver, "list", config(t), limit=1)
    assert listed[0].checkpoint["channel_values"]["messages"] == history[:32]
    assert serde.decoded == 0


async def test_callers_get_copies_they_may_change(counted: Any) -> None:
    saver, _ = counted
    t = f"t-{uuid.uuid4().hex[:8]}"
    stored = [
        HumanMessage("hello " * 20),  # no id: add_messages sets one in place
        AIMessage("answer " * 20, id="a1", response_metadata={"model": "m", "n": [1, 2]}),
        HumanMessage("hello " * 20),  # the same bytes again: one element, used twice
    ]
    await put_messages(saver, t, [stored])
    for _ in range(3):
        got = await messages_of(saver, config(t))
        assert got == stored
        assert got[0] is not got[2]
        got[0].id = "set-by-caller"
        got[1].content = "changed"
        got[1].response_metadata["n"].append(3)
        got[2].additional_kwargs["x"] = 1
    assert await messages_of(saver, config(t)) == stored


async def test_the_cache_can_be_turned_off(pg_uri: str, schema: str) -> None:
    serde = CountingSerde()
    with VaultSaver.from_conn_string(
        pg_uri, schema=schema, serde=serde, read_cache_bytes=0
    ) as saver:
        saver.setup()
        t = f"t-{uuid.uuid4().hex[:8]}"
        history = [message(i) for i in range(20)]
        await put_messages(saver, t, [history])
        for _ in range(2):
            assert await messages_of(saver, config(t)) == history
        assert serde.decoded == 40
    with pytest.raises(ValueError, match="read_cache_bytes must be an int >= 0"):
        VaultSaver.from_conn_string(pg_uri, schema=schema, read_cache_bytes=-1).__enter__()


def test_the_cache_stays_within_its_bound_and_evicts_oldest_first() -> None:
    one = [HumanMessage(f"message {i} " * 10, id=str(i)) for i in range(8)]
    probe = DecodedCache()
    for _ in range(2):
        probe.put_many([b"k0", b"k1"], one[:2])
    cache = DecodedCache(max_bytes=probe.size * 4 + 1)  # room for about four chunks of two
    for i in range(0, 8, 2):
        for _ in range(2):  # kept on second sight
            cache.put_many([b"k%d" % i, b"k%d" % (i + 1)], one[i : i + 2])
    cache.get_many([b"k0"])  # k0/k1 used last: the k2/k3 chunk is now the oldest
    for _ in range(2):
        cache.put_many([b"k8", b"k9"], one[:2])
    assert cache.size <= cache.max_bytes
    got, _ = cache.get_many([b"k0", b"k2", b"k8"])
    assert got[0] == one[0] and got[1] is MISSING and got[2] == one[0]


def test_only_values_that_pickle_exactly_are_kept() -> None:
    cache = DecodedCache()
    for _ in range(2):  # the first sight only notes the keys; the second would keep them
        cache.put_many([b"a", b"b"], [HumanMessage("hi"), object()])
        cache.put_many([b"c"], [lambda: 1])
    assert len(cache) == 0
    # A re-chunked key leaves its old chunk once no key points there.
    for _ in range(2):
        cache.put_many([b"a"], [HumanMessage("hi")])
    assert len(cache._chunks) == 1 and len(cache) == 1
    for _ in range(2):
        cache.put_many([b"a", b"b"], [HumanMessage("hi"), HumanMessage("yo")])
    assert len(cache._chunks) == 1 and len(cache) == 2
