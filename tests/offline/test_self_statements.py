"""The offline extractor keeps plain first-person statements, and the next thread's memory
answers them, on VaultStore with the default privacy (redaction and consent).

The set is bench/data/offline/self_statements.toml (70 statements, seven categories); the
harness is bench/offline_extract_bench.py, which prints the same figures per category.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from bench.offline_extract_bench import (
    answered,
    holds,
    kept_alone,
    load_statements,
    memory_graph,
    run_next_thread,
    tell,
)
from langmem_vault.extraction._aliases import AliasMap
from langmem_vault.extraction._checks import check_proposal
from langmem_vault.offline._extractor import VERBATIM_CONFIDENCE, OfflineExtractor
from langmem_vault.privacy._subject_rights.consent import ConsentSettings, filter_extraction
from langmem_vault.store import VaultStore

STATEMENTS = load_statements()


def _share(hits: Sequence[bool], rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    by: dict[str, list[bool]] = defaultdict(list)
    for row, hit in zip(rows, hits, strict=True):
        by[row["category"]].append(hit)
        by["overall"].append(hit)
    return {k: sum(v) / len(v) for k, v in by.items()}


@pytest.fixture
def vault(pg_uri: str, schema: str, index: dict[str, Any]) -> Iterator[VaultStore]:
    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        yield store


def test_the_set_is_varied_and_large_enough() -> None:
    categories = {s["category"] for s in STATEMENTS}
    assert categories == {"occupation", "family", "health", "pets", "likes", "places", "plans"}
    assert len(STATEMENTS) >= 60 and len({s["say"] for s in STATEMENTS}) == len(STATEMENTS)


def test_nine_in_ten_statements_are_kept() -> None:
    share = _share(kept_alone(STATEMENTS, OfflineExtractor()), STATEMENTS)
    assert share["overall"] >= 0.9, share
    assert min(share.values()) >= 0.8, share


def test_the_next_thread_answers_nine_in_ten(vault: VaultStore) -> None:
    # Consent for sensitive facts given, so health statements may be kept too.
    hits = run_next_thread(vault, "u", STATEMENTS, OfflineExtractor(), sensitive=True)
    share = _share(hits, STATEMENTS)
    assert share["overall"] >= 0.9, share


def test_refusing_sensitive_facts_drops_health_statements_and_nothing_else() -> None:
    extractor = OfflineExtractor()
    refuse = ConsentSettings(allow_sensitive_facts=False)
    dropped = []
    for s in STATEMENTS:
        messages = [HumanMessage(s["say"])]
        checked = check_proposal(extractor.extract(messages, []), messages, AliasMap())
        kept = filter_extraction(checked.extraction, refuse).extraction.facts
        if not any(holds(f.text, s["expect"]) for f in kept):
            dropped.append(s["say"])
    # The sentence kept verbatim carries its words, so consent reads "asthma" in it as in a
    # pattern's fact: the fallback never takes a sensitive statement past consent. The health
    # statements without a listed medical word (an ankle, lactose, gluten) are kept.
    health = [s["say"] for s in STATEMENTS if s["category"] == "health"]
    assert set(dropped) <= set(health)
    assert len(dropped) >= 6, dropped


def test_the_issue_scenario_reaches_the_next_thread(vault: VaultStore) -> None:
    said = [
        "I'm a nurse and I live in Leeds.",
        "My daughter Zoe just turned seven!",
        "I'm allergic to peanuts, so keep that in mind.",
        "Oh, and I have two cats, Pixel and Byte.",
    ]
    asked = [
        {"ask": "What is my job?", "expect": ["nurse"]},
        {"ask": "Where do I live?", "expect": ["Leeds"]},
        {"ask": "How old is my daughter?", "expect": ["Zoe"]},
        {"ask": "What are my cats called?", "expect": ["Pixel", "Byte"]},
        {"ask": "What am I allergic to?", "expect": ["peanuts"]},
    ]
    # The default settings: four statements in one thread, extracted every 4 messages, so
    # the last exchanges are a tail that the first question's new thread catches up.
    graph = memory_graph(vault, OfflineExtractor(), every_n=4)
    tell(graph, "dana", [said])
    # Default consent: the allergy is health data, kept as a private fact; all are answered.
    assert answered(graph, "dana", asked) == [True, True, True, True, True]


@pytest.mark.parametrize(
    "text",
    [
        "Can you recommend a book?",
        "What time is it in Tokyo?",
        "I think so.",
        "I'm not sure about that.",
        "I need you to book a table for two.",
        "Thanks, I appreciate your help.",
        "I did it!",
    ],
)
def test_questions_requests_and_small_talk_are_not_kept(text: str) -> None:
    assert OfflineExtractor(use_spacy=False).extract([HumanMessage(text)], []).facts == []


def test_an_unmatched_statement_is_kept_verbatim_and_unconfirmed() -> None:
    out = OfflineExtractor(use_spacy=False).extract(
        [HumanMessage("My husband and I have been together for twelve years.")], []
    )
    assert [(f.text, f.confidence) for f in out.facts] == [
        ('User said: "My husband and I have been together for twelve years."', VERBATIM_CONFIDENCE)
    ]
    assert VERBATIM_CONFIDENCE < 0.8  # below reconcile's confirm threshold: stored pending
    none = OfflineExtractor(use_spacy=False, keep_sentences=False)
    assert none.extract([HumanMessage("My parrot Kiwi can say hello.")], []).facts == []
