"""msgpack_load gives exactly what the serde's own loads_typed gives, for every kind of value."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

import ormsgpack
import pytest
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.serde.jsonplus import EXT_PYDANTIC_V2, JsonPlusSerializer
from langgraph.types import Send
from pydantic import BaseModel

from langmem_vault.checkpointers import _msgpack_load as msgpack_load


class Profile(BaseModel):  # not on langgraph's safe list: decided by the serde's own hook
    name: str
    tags: list[str] = []


def values() -> list[Any]:
    return [
        HumanMessage("hi", id="h1", name="ann", additional_kwargs={"k": [1, 2]}),
        HumanMessage([{"type": "text", "text": "a"}, {"type": "image", "url": "u"}], id="h2"),
        AIMessage(
            "calling",
            id="a1",
            tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}],
            usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
            response_metadata={"model_name": "m", "finish_reason": "stop"},
        ),
        AIMessage("", id="a2", additional_kwargs={"tool_calls": []}),
        AIMessageChunk("chu", id="a3"),
        ToolMessage("result", tool_call_id="c1", id="t1", artifact={"rows": 3}),
        SystemMessage("be brief"),
        RemoveMessage(id="h1"),
        Document("page", metadata={"source": "s"}),
        Profile(name="zoe", tags=["a"]),
        {"when": datetime.datetime(2026, 1, 2, 3, 4, 5), "id": uuid.UUID(int=7), "s": {1, 2}},
        Send("node", {"arg": HumanMessage("nested", id="n1")}),
        [HumanMessage(f"m{i}", id=str(i)) for i in range(40)],
    ]


@pytest.mark.parametrize("strict", [False, True])
def test_loads_equals_the_serdes_loads_typed(strict: bool) -> None:
    serde = JsonPlusSerializer(allowed_msgpack_modules=None) if strict else JsonPlusSerializer()
    for value in values():
        typed = serde.dumps_typed(value)
        assert typed[0] == "msgpack"
        expected = serde.loads_typed(typed)
        got = msgpack_load.loads(serde, typed)
        assert got == expected
        assert type(got) is type(expected)
        if isinstance(expected, list):
            assert [type(x) for x in got] == [type(x) for x in expected]


def test_broken_objects_get_the_serdes_answer() -> None:
    serde = JsonPlusSerializer()
    bad = [
        # content of a type HumanMessage refuses: langgraph falls back to model_construct
        ("langchain_core.messages.human", "HumanMessage", {"content": 5, "id": "x"}, "m"),
        # not kwargs at all: langgraph gives back the raw value
        ("langchain_core.messages.human", "HumanMessage", [1, 2], "m"),
        # a class that does not exist in a safe module
        ("langchain_core.messages.human", "NoSuchMessage", {"content": "x"}, "m"),
    ]
    for tup in bad:
        data = ormsgpack.packb(ormsgpack.Ext(EXT_PYDANTIC_V2, ormsgpack.packb(tup)))
        expected = serde.loads_typed(("msgpack", data))
        got = msgpack_load.loads(serde, ("msgpack", data))
        assert type(got) is type(expected)
        assert got == expected or (got.__dict__ == expected.__dict__)


def test_other_serdes_are_called_as_they_are() -> None:
    calls = []

    class Counting(JsonPlusSerializer):
        def loads_typed(self, data: tuple[str, bytes]) -> Any:
            calls.append(data[0])
            return super().loads_typed(data)

    serde = Counting()
    typed = serde.dumps_typed([HumanMessage("hi", id="1")])
    assert msgpack_load.loads(serde, typed) == [HumanMessage("hi", id="1")]
    assert calls == ["msgpack"]

    def hook(code: int, data: bytes) -> Any:
        return "custom"

    custom = JsonPlusSerializer(__unpack_ext_hook__=hook)
    assert msgpack_load.loads(custom, custom.dumps_typed(HumanMessage("hi"))) == "custom"
