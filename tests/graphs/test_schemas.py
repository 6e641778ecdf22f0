"""The graph's JSON schemas, which LangGraph Studio turns into its form: messages in, a user id
in the run context, the internal hand-over key neither in nor out."""

from __future__ import annotations

from langgraph.store.memory import InMemoryStore

from langmem_vault import build_memory_graph
from langmem_vault.offline import OfflineExtractor, RecallChatModel


def test_input_is_messages_and_context_has_a_user_id() -> None:
    graph = build_memory_graph(RecallChatModel(), extractor=OfflineExtractor(use_spacy=False))
    assert sorted(graph.get_input_jsonschema()["properties"]) == ["messages"]
    context = graph.get_context_jsonschema()
    assert context is not None and context["properties"]["user_id"]["type"] == "string"
    output = graph.get_output_jsonschema()["properties"]
    assert {"memory_context", "memory_refs", "memory_items", "cited"} <= set(output)
    assert "extraction" not in output


def test_user_id_from_the_run_context_alone() -> None:
    store = InMemoryStore()
    graph = build_memory_graph(
        RecallChatModel(), store=store, extractor=OfflineExtractor(use_spacy=False)
    )
    cfg = {"configurable": {"thread_id": "t1", "extract_now": True}}
    out = graph.invoke({"messages": [("user", "I live in Lyon.")]}, cfg, context={"user_id": "u7"})
    assert "extraction" not in out and "memory_context" in out
    texts = [item.value["text"] for item in store.search(("memories", "u7", "semantic"))]
    assert texts == ["User lives in Lyon"]
