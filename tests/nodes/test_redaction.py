"""PII redaction is applied on the write paths: extraction proposals, compaction summaries
and the turns compaction archives, before anything is stored."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.store.memory import InMemoryStore

from langmem_vault.extraction._redaction import redact_extraction
from langmem_vault.extraction._schema import AliasEpisode, AliasFact, ExtractionProposal
from langmem_vault.extraction._span import aextract_span, extract_span
from langmem_vault.memory._models import Extraction, ProposedFact
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.nodes._compact import CompactSummary, create_compact_node
from langmem_vault.privacy._redaction.policy import RedactionPolicy
from tests.support.messages import ai, human
from tests.support.models import ScriptedModel

CONFIG = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
NS = MemoryNamespaces().resolve(CONFIG)
EMAIL_QUOTE = "My email is jane.doe@example.com."
SISTER_QUOTE = "My sister Anna Weber lives nearby."
SAID = f"{EMAIL_QUOTE} {SISTER_QUOTE}"


def proposal() -> ExtractionProposal:
    return ExtractionProposal(
        facts=[
            AliasFact(
                text="User's email is jane.doe@example.com", evidence=EMAIL_QUOTE, confidence=0.9
            ),
            AliasFact(text="User's sister is Anna Weber", evidence=SISTER_QUOTE, confidence=0.9),
        ],
        episode=AliasEpisode(summary="Shared jane.doe@example.com as contact"),
    )


@pytest.mark.parametrize("use_async", [False, True])
async def test_extraction_is_redacted_before_it_is_stored(use_async: bool) -> None:
    store, model = InMemoryStore(), ScriptedModel(default=proposal())
    msgs = [human(SAID), ai("Noted.")]
    if use_async:
        checked = await aextract_span(store, model, msgs, namespaces=NS)
    else:
        checked = extract_span(store, model, msgs, namespaces=NS)
    email, sister = checked.extraction.facts
    assert email.text == "User's email is <EMAIL>" and "@" not in (email.evidence or "")
    assert not email.private
    # A person's name is kept, and the fact stays public under the default policy.
    assert "Anna Weber" in sister.text and not sister.private
    assert checked.extraction.episode is not None
    assert checked.extraction.episode.summary == "Shared <EMAIL> as contact"


def test_redaction_can_be_turned_off() -> None:
    store, model = InMemoryStore(), ScriptedModel(default=proposal())
    checked = extract_span(store, model, [human(SAID)], namespaces=NS, redaction=None)
    assert checked.extraction.facts[0].text == "User's email is jane.doe@example.com"


@pytest.mark.parametrize("use_async", [False, True])
async def test_compaction_summary_and_archive_are_redacted(use_async: bool) -> None:
    store = InMemoryStore()

    def summarise(prompt: list[BaseMessage]) -> CompactSummary:
        return CompactSummary(
            running_summary="User gave jane.doe@example.com",
            segment_summary="Contact: jane.doe@example.com",
        )

    node = create_compact_node(
        ScriptedModel(default=summarise),
        max_tokens=60,
        keep_last_exchanges=1,
        token_counter=lambda ms: sum(len(str(m.content)) for m in ms),
        store=store,
    )
    messages: list[Any] = [human(SAID), ai("Noted."), human("Thanks"), ai("Welcome")]
    state = {"messages": messages}
    if use_async:
        update = await node.ainvoke(state, CONFIG)
    else:
        update = node.invoke(state, CONFIG)
    assert update["running_summary"] == "User gave <EMAIL>"
    [episode] = store.search(NS.episodes)
    assert episode.value["summary"] == "Contact: <EMAIL>"
    archived = " ".join(m["data"]["content"] for m in episode.value["messages"])
    assert "<EMAIL>" in archived and "jane.doe" not in archived


def test_sensitive_topics_make_a_fact_private_and_names_do_not() -> None:
    facts = [
        ProposedFact(text="User's name is Dana", evidence="My name is Dana."),
        ProposedFact(text="User lives in Rotterdam", evidence="I live in Rotterdam."),
        ProposedFact(text="User's sister is Priya", evidence="My sister is called Priya."),
        ProposedFact(text="User takes insulin twice a day"),
        ProposedFact(text="User's mortgage is with ING"),
    ]
    out = redact_extraction(Extraction(facts=facts))
    assert [f.private for f in out.facts] == [False, False, False, True, True]
    strict = redact_extraction(Extraction(facts=facts), RedactionPolicy.strict())
    assert all(f.private for f in strict.facts)
    # the topics are the policy's to choose
    relaxed = RedactionPolicy(private_topics=frozenset({"financial"}))
    assert [f.private for f in redact_extraction(Extraction(facts=facts), relaxed).facts] == [
        False,
        False,
        False,
        False,
        True,
    ]
