"""Typed node options and the defaults the builders share with the node factories."""

from __future__ import annotations

import inspect
from dataclasses import fields
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langmem_vault.graphs import (
    SAME_AS_MODEL,
    CompactOptions,
    ExtractOptions,
    InjectOptions,
    ReconcileOptions,
    RespondOptions,
    add_memory,
    build_memory_graph,
)
from langmem_vault.graphs._builder import _summarizer
from langmem_vault.nodes import (
    create_compact_node,
    create_extract_node,
    create_inject_node,
    create_reconcile_node,
    create_respond_node,
)
from langmem_vault.offline._extractor import OfflineExtractor

PAIRS = [
    (InjectOptions, create_inject_node),
    (RespondOptions, create_respond_node),
    (ExtractOptions, create_extract_node),
    (ReconcileOptions, create_reconcile_node),
    (CompactOptions, create_compact_node),
]


def _default(function: Any, name: str) -> Any:
    return inspect.signature(function).parameters[name].default


@pytest.mark.parametrize(("options", "factory"), PAIRS, ids=lambda x: x.__name__)
def test_options_are_the_factory_keywords_with_its_defaults(options: Any, factory: Any) -> None:
    made = options()
    for f in fields(options):
        assert getattr(made, f.name) == _default(factory, f.name), f.name
    with pytest.raises(AttributeError):  # frozen
        made.__setattr__(fields(options)[0].name, None)


def test_builders_and_factories_share_their_defaults() -> None:
    mode = _default(create_extract_node, "mode")
    assert mode is None  # background exactly when a queue is given
    assert _default(build_memory_graph, "extract_mode") is mode
    assert _default(add_memory, "extract_mode") is mode
    assert _default(build_memory_graph, "summarizer") is SAME_AS_MODEL
    assert _default(add_memory, "summarizer") is SAME_AS_MODEL


def test_same_as_model_means_the_chat_model_the_nodes_have() -> None:
    chat = FakeListChatModel(responses=["x"])
    assert _summarizer(SAME_AS_MODEL, chat) is chat
    assert _summarizer(SAME_AS_MODEL, "openai:gpt-4o-mini") == "openai:gpt-4o-mini"
    assert _summarizer(SAME_AS_MODEL, OfflineExtractor(use_spacy=False)) is None  # extractive
    assert _summarizer(None, chat) is None


def test_typed_options_reach_the_nodes() -> None:
    # A bad value inside typed options is refused by the factory it is meant for.
    with pytest.raises(ValueError, match="every_n_messages must be >= 1"):
        build_memory_graph(
            FakeListChatModel(responses=["x"]),
            extractor=OfflineExtractor(use_spacy=False),
            extract_options=ExtractOptions(every_n_messages=0),
        )
    with pytest.raises(ValueError, match="similar_limit must be an int >= 1, got 0"):
        create_extract_node(OfflineExtractor(use_spacy=False), similar_limit=0)
