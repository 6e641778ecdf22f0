"""Whatever a message holds, the turn goes on and memory keeps working (issue 22).

A property test through ``build_memory_graph`` and through ``create_agent`` +
``MemoryMiddleware``, sync and async, on VaultStore (the store whose limits refused these
messages before): a hostile message, then a turn that states a fact; no turn raises, every
memory stage reports ``ok`` (nothing was swallowed), and a new thread recalls the fact.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.integrations import MemoryMiddleware
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel

FACT = "I work at Acme Robotics."
QUESTION = "Where do I work?"
_ids = itertools.count()

# Any code point: control characters, NUL and lone surrogates included.
ANY_CHAR = st.characters(codec=None, categories=None)
EMOJI = st.sampled_from(["\U0001f600", "\U0001f389", "\u2764\ufe0f", "\U0001f1eb\U0001f1f7"])
TEXT = st.one_of(
    st.text(ANY_CHAR, max_size=40),
    st.lists(EMOJI, min_size=1, max_size=8).map("".join),
    st.just(""),
    st.just("   \n\t"),
    st.just("hello\x00world, I live in Paris"),
    # long ones: over the query limit, tens of thousands of words, megabytes
    st.sampled_from([10_001, 120_000, 2_000_000]).map(lambda n: ("I live in Lyon\x00. " * n)[:n]),
    st.just(" ".join(f"w{i}" for i in range(40_000))),
)
BLOCK = st.one_of(
    TEXT.map(lambda t: {"type": "text", "text": t}),
    st.just({"type": "image", "url": "https://example.com/cat.png"}),
    st.just({"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}),
    st.just({"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"}),
    st.just({"type": "file", "base64": "JVBERi0=", "mime_type": "application/pdf"}),
)
CONTENT = st.one_of(TEXT, st.lists(BLOCK, max_size=4))


@st.composite
def hostile_turns(draw: st.DrawFn) -> list[BaseMessage]:
    """A user message with any content, sometimes after a tool round (an AI message with only
    tool calls and its ToolMessage, both holding hostile text too)."""
    content = draw(CONTENT)
    turn: list[BaseMessage] = []
    if draw(st.booleans()):
        call = f"call-{next(_ids)}"
        args = {"q": draw(TEXT.filter(lambda t: len(t) < 100))}
        turn += [
            AIMessage("", tool_calls=[{"name": "lookup", "args": args, "id": call}]),
            ToolMessage(draw(CONTENT), tool_call_id=call, name="lookup"),
        ]
    return [*turn, HumanMessage(content)]


SETTINGS = settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)
VAULT = pytest.mark.parametrize("store", ["vault"], indirect=True)
AVAULT = pytest.mark.parametrize("astore", ["vault"], indirect=True)


def _graph(store: BaseStore) -> Any:
    return build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=OfflineExtractor(use_spacy=False),
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=2),
    )


def _agent(store: BaseStore) -> Any:
    memory = MemoryMiddleware(
        OfflineExtractor(use_spacy=False), extract=ExtractOptions(every_n_messages=2)
    )
    return create_agent(
        RecallChatModel(), [], middleware=[memory], checkpointer=InMemorySaver(), store=store
    )


def _config(user: str, thread: str) -> dict[str, Any]:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def _check(outs: list[dict[str, Any]], answer: dict[str, Any]) -> None:
    for out in [*outs, answer]:
        status = out["memory_status"]
        assert status and set(status.values()) == {"ok"}, status
    assert "Acme Robotics" in str(answer["messages"][-1].content)


def _run(runner: Any, turn: list[BaseMessage]) -> None:
    user = f"u{next(_ids)}"
    first = _config(user, "t1")
    outs = [runner.invoke({"messages": m}, first) for m in (turn, [HumanMessage(FACT)])]
    answer = runner.invoke({"messages": [HumanMessage(QUESTION)]}, _config(user, "t2"))
    _check(outs, answer)


async def _arun(runner: Any, turn: list[BaseMessage]) -> None:
    user = f"u{next(_ids)}"
    first = _config(user, "t1")
    outs = [await runner.ainvoke({"messages": m}, first) for m in (turn, [HumanMessage(FACT)])]
    answer = await runner.ainvoke({"messages": [HumanMessage(QUESTION)]}, _config(user, "t2"))
    _check(outs, answer)


@VAULT
@SETTINGS
@given(turn=hostile_turns())
def test_memory_graph_takes_any_message(store: BaseStore, turn: list[BaseMessage]) -> None:
    _run(_graph(store), turn)


@VAULT
@SETTINGS
@given(turn=hostile_turns())
def test_agent_middleware_takes_any_message(store: BaseStore, turn: list[BaseMessage]) -> None:
    _run(_agent(store), turn)


@AVAULT
@SETTINGS
@given(turn=hostile_turns())
async def test_memory_graph_takes_any_message_async(
    astore: BaseStore, turn: list[BaseMessage]
) -> None:
    await _arun(_graph(astore), turn)


@AVAULT
@SETTINGS
@given(turn=hostile_turns())
async def test_agent_middleware_takes_any_message_async(
    astore: BaseStore, turn: list[BaseMessage]
) -> None:
    await _arun(_agent(astore), turn)
