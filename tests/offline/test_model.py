"""RecallChatModel answers from the memories inject selected (a structured list), never by
parsing the rendered memory section, so a change to inject's wording cannot break it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory._recall.injected import INJECTED_KEY, InjectedMemory
from langmem_vault.nodes import _inject_render as inject_render
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel
from tests.support.stores import thread

LYON: InjectedMemory = {
    "kind": "fact",
    "alias": "M1",
    "text": "User lives in Lyon",
    "category": "personal",
    "priority": 0,
    "pending": False,
}
CHEERS: InjectedMemory = {
    "kind": "instruction",
    "alias": "",
    "text": "Always end your answers with 'Cheers!'",
    "category": "",
    "priority": 5,
    "pending": False,
}


def _ask(system: SystemMessage, question: str) -> str:
    return str(RecallChatModel().invoke([system, HumanMessage(question)]).content)


def test_answers_from_the_structured_memories_whatever_the_text() -> None:
    system = SystemMessage(
        "Memories are attached in a format no regex here knows.",
        additional_kwargs={INJECTED_KEY: [CHEERS, LYON]},
    )
    assert (
        _ask(system, "Where do I live?") == "From what you told me: you live in Lyon [M1]. Cheers!"
    )
    assert _ask(system, "I like tea.") == "Thanks, noted. Cheers!"


def test_without_the_structured_memories_it_knows_nothing() -> None:
    # The old rendered lines alone are not read: no parsing of prose as a fallback.
    system = SystemMessage(
        "Standing instructions:\n- (priority 5) Always end your answers with 'Cheers!'\n"
        "Facts (cite the ones you use as [M1], [M2]):\n- [M1] User lives in Lyon (personal)"
    )
    assert _ask(system, "Where do I live?") == "I don't know that yet."


def _reworded_fact_line(alias: str, value: Mapping[str, Any]) -> str:
    return f"* {value.get('text', '')}, filed under {value.get('category')}; cite {alias}"


@pytest.mark.parametrize("use_async", [False, True])
async def test_a_reworded_memory_section_keeps_the_answers(
    monkeypatch: pytest.MonkeyPatch, index: dict[str, Any], use_async: bool
) -> None:
    monkeypatch.setattr(inject_render, "_fact_line", _reworded_fact_line)
    graph = build_memory_graph(
        RecallChatModel(),
        store=InMemoryStore(index=index),  # type: ignore[arg-type]
        checkpointer=InMemorySaver(),
        extractor=OfflineExtractor(use_spacy=False),
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=2),
    )

    async def say(thread_id: str, text: str) -> dict[str, Any]:
        turn = {"messages": [HumanMessage(text)]}
        if use_async:
            out: dict[str, Any] = await graph.ainvoke(turn, thread("dana", thread_id))
        else:
            out = graph.invoke(turn, thread("dana", thread_id))
        return out

    await say("t1", "I live in Lyon and I work at Acme Robotics.")
    await say("t1", "ok")
    out = await say("t2", "Where do I work?")
    assert "cite M1" in out["memory_context"]  # the reworded rendering is what inject wrote
    answer = str(out["messages"][-1].content)
    assert answer == "From what you told me: you work at Acme Robotics [M1]."
    assert out["cited"] == ["M1"]
