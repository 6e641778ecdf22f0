"""One graph turn's OpenTelemetry spans (SDK in-memory exporter), sync and async, on
InMemoryStore and VaultStore: each memory stage and model call, with counts and tokens, and
the user id only as a keyed hash."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from langmem_vault.extraction._schema import AliasFact, ExtractionProposal
from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory._recall.accounting import METRICS
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline._model import RecallChatModel
from langmem_vault.telemetry import hash_user
from tests.support.models import MeteredModel

USER = "dana@example.com"
CONFIG = {"configurable": {"user_id": USER, "thread_id": "t1"}}
SAID = "I live in Lyon and I work at Acme."


def _graph(store: BaseStore) -> Any:
    fact = AliasFact(text="User lives in Lyon", category="location", evidence="I live in Lyon")
    model = MeteredModel(script=[ExtractionProposal(facts=[fact])], tokens_in=321, tokens_out=45)
    graph = build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=model,
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=1),
    )
    return graph


def _seed(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id=USER)
    vault.remember("User likes green tea", category="preference", source="manual")
    vault.remember("User has a dog named Rex", category="relationship", source="manual")


def _by_name(exporter: InMemorySpanExporter) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, span)
    return found


def _check(spans: InMemorySpanExporter, store: BaseStore) -> None:
    found = _by_name(spans)
    inject = found["langmem_vault.inject"].attributes
    assert inject["langmem_vault.candidates"] >= 2
    assert inject["langmem_vault.injected"] == 2  # the two seeded facts
    assert inject["langmem_vault.duration_ms"] > 0
    extract = found["langmem_vault.extract"].attributes
    assert extract["gen_ai.usage.input_tokens"] == 321
    assert extract["gen_ai.usage.output_tokens"] == 45
    assert extract["langmem_vault.model_calls"] == 1
    assert extract["langmem_vault.extracted"] == 1
    call = found["chat scripted-metered"]
    assert call.attributes["gen_ai.operation.name"] == "chat"
    assert call.attributes["gen_ai.request.model"] == "scripted-metered"
    assert call.attributes["langmem_vault.operation"] == "extract"
    assert call.attributes["gen_ai.usage.input_tokens"] == 321
    # the model call is a child of the extract stage
    assert call.parent.span_id == found["langmem_vault.extract"].context.span_id
    assert {"langmem_vault.reconcile", "langmem_vault.compact"} <= set(found)
    if type(store).__name__.endswith("VaultStore"):  # our store traces its searches
        search = found["langmem_vault.search"]
        assert search.parent.span_id == found["langmem_vault.inject"].context.span_id
        assert search.attributes["langmem_vault.queries"] == 1
    # the user only as a keyed hash, never in clear
    assert inject["langmem_vault.user.hash"] == hash_user(USER)
    for span in spans.get_finished_spans():
        assert USER not in {str(v) for v in span.attributes.values()}, span.name


def test_one_turn_spans(store: BaseStore, spans: InMemorySpanExporter) -> None:
    _seed(store)
    graph = _graph(store)
    graph.invoke({"messages": [HumanMessage(SAID)]}, CONFIG)
    METRICS.flush()
    _check(spans, store)


async def test_one_turn_spans_async(astore: BaseStore, spans: InMemorySpanExporter) -> None:
    await MemoryVault(astore, user_id=USER).aremember(
        "User likes green tea", category="preference", source="manual"
    )
    await MemoryVault(astore, user_id=USER).aremember(
        "User has a dog named Rex", category="relationship", source="manual"
    )
    graph = _graph(astore)
    await graph.ainvoke({"messages": [HumanMessage(SAID)]}, CONFIG)
    await METRICS.aflush()
    _check(spans, astore)


def test_a_stage_that_raises_ends_its_span_with_the_error(spans: InMemorySpanExporter) -> None:
    import pytest
    from opentelemetry.trace import StatusCode

    from langmem_vault.telemetry._tracing import stage_span

    with pytest.raises(ValueError), stage_span("inject", user_id="u1") as span:
        span.add(candidates=4)
        raise ValueError("bad turn")
    (ended,) = spans.get_finished_spans()
    assert ended.name == "langmem_vault.inject"
    assert ended.status.status_code is StatusCode.ERROR
    assert ended.status.description == "ValueError: bad turn"
    assert [event.name for event in ended.events] == ["exception"]
    assert ended.attributes is not None
    assert ended.attributes["langmem_vault.candidates"] == 4
    assert ended.attributes["langmem_vault.stage"] == "inject"
