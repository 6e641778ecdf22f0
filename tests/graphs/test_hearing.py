"""Issue 23: a one-breath introduction gives one fact per statement, all recalled in a new
thread, the health fact as a private fact; a consent refusal is counted, audited and logged,
and never takes the other statements with it; the model path asks for, and checks, one
atomic fact per statement."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_vault import build_memory_graph
from langmem_vault.db._connection import open_pool
from langmem_vault.extraction._aliases import AliasMap
from langmem_vault.extraction._checks import check_proposal
from langmem_vault.extraction._prompt import SYSTEM_PROMPT, build_prompt
from langmem_vault.extraction._schema import AliasFact, ExtractionProposal
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel
from langmem_vault.privacy._audit.log import AuditLog
from langmem_vault.privacy._audit.store import AuditedStore
from langmem_vault.privacy._subject_rights.consent import aset_consent, set_consent
from langmem_vault.service._trace import trace_of
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.models import ScriptedModel
from tests.support.stores import thread

DANA = "I'm Dana, I live in Porto, I'm allergic to peanuts, my daughter is Rita"
ASKED = {
    "What's my name?": "Dana",
    "Where do I live?": "Porto",
    "What am I allergic to?": "peanuts",
    "What's my daughter called?": "Rita",
}


def _graph(store: Any) -> Any:
    return build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=OfflineExtractor(),
        summarizer=None,
    )


@pytest.fixture
def vault(pg_uri: str, schema: str, index: dict[str, Any]) -> Any:
    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        yield store


@pytest.fixture
def audit(pg_uri: str, schema: str) -> Any:
    pool = open_pool(pg_uri, max_size=2)
    log = AuditLog(pool, schema=schema)
    log.setup()
    yield log
    pool.close()


def _index_rows(pg_uri: str, schema: str, key: str) -> int:
    with psycopg.connect(pg_uri) as conn:
        row = conn.execute(
            f"SELECT (SELECT count(*) FROM {schema}.store_vectors WHERE key = %(k)s) + "
            f"(SELECT count(*) FROM {schema}.store_items "
            f" WHERE key = %(k)s AND search_tsv IS NOT NULL)",
            {"k": key},
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_dana_gives_four_facts_all_recalled_the_allergy_private(
    vault: VaultStore, pg_uri: str, schema: str
) -> None:
    graph = _graph(vault)
    graph.invoke({"messages": [HumanMessage(DANA)]}, thread("dana", "intro"))
    for i, (question, word) in enumerate(ASKED.items()):
        state = graph.invoke({"messages": [HumanMessage(question)]}, thread("dana", f"q{i}"))
        facts = [m["text"] for m in state["memory_items"] if m["kind"] == "fact"]
        assert any(word in text for text in facts), (question, facts)
        assert word in state["messages"][-1].content  # the answer, not "I don't know"
    stored = {m.value.text: m for m in MemoryVault(vault, user_id="dana").list(status=None)}
    assert set(stored) == {
        "User's name is Dana",
        "User lives in Porto",
        "User is allergic to peanuts",
        "User's daughter is Rita",
    }
    assert {t for t, m in stored.items() if m.value.private} == {"User is allergic to peanuts"}
    assert all(m.value.status == "active" for m in stored.values())  # clear statements
    allergy = stored["User is allergic to peanuts"].key
    assert _index_rows(pg_uri, schema, allergy) == 0  # never in the full-text or vector index
    assert _index_rows(pg_uri, schema, stored["User lives in Porto"].key) > 0
    # Another user's assistant never sees it.
    other = graph.invoke({"messages": [HumanMessage("What am I allergic to?")]}, thread("sam", "q"))
    assert not any("peanut" in m["text"] for m in other["memory_items"])


def test_a_consent_refusal_is_counted_audited_and_logged(
    vault: VaultStore, audit: AuditLog, caplog: pytest.LogCaptureFixture
) -> None:
    set_consent(vault, "dana", allow_sensitive_facts=False)
    audited = AuditedStore(vault, audit=audit, component="graph")
    graph = _graph(audited)
    graph.invoke({"messages": [HumanMessage(DANA)]}, thread("dana", "intro"))
    with caplog.at_level(logging.INFO, logger="langmem_vault.extract"):
        # the one-message thread is a tail: the next thread's first turn extracts it
        state = graph.invoke({"messages": [HumanMessage("Where do I live?")]}, thread("dana", "q"))
    # the allergy, and the episode summing up the turn (it names the allergy)
    reasons = ["fact: sensitive (medical)", "episode: sensitive (medical)"]
    assert state["memory_dropped"] == reasons
    assert trace_of(state, thread_id="q").dropped == reasons
    refused = [e for e in audit.query("dana") if e.action.value == "consent"]
    assert sorted(e.detail["refused"] for e in refused) == ["episode", "fact"]
    assert all(
        e.detail["category"] == "sensitive" and e.detail["topics"] == ["medical"] for e in refused
    )
    assert "peanut" not in str([e.detail for e in refused])  # its category, never its text
    logged = [r.getMessage() for r in caplog.records if "consent refused" in r.getMessage()]
    assert logged == [f"extract: consent refused {r} for user dana" for r in reasons]
    assert all(r.levelno == logging.INFO for r in caplog.records if "consent" in r.getMessage())
    # The refused clause took nothing else with it.
    stored = {m.value.text for m in MemoryVault(vault, user_id="dana").list(status=None)}
    assert stored == {"User's name is Dana", "User lives in Porto", "User's daughter is Rita"}
    # The next turn of that thread starts its own count.
    again = graph.invoke({"messages": [HumanMessage("And my name?")]}, thread("dana", "q"))
    assert again["memory_dropped"] == []


async def test_the_async_graph_counts_the_refusal_too(pg_uri: str, schema: str, index: Any) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        await store.setup()
        await aset_consent(store, "dana", allow_sensitive_facts=False)
        graph = _graph(store)
        await graph.ainvoke({"messages": [HumanMessage(DANA)]}, thread("dana", "intro"))
        state = await graph.ainvoke(
            {"messages": [HumanMessage("Where do I live?")]}, thread("dana", "q")
        )
        assert state["memory_dropped"] == [
            "fact: sensitive (medical)",
            "episode: sensitive (medical)",
        ]
        facts = [m["text"] for m in state["memory_items"]]
        assert "User lives in Porto" in facts and not any("peanut" in t for t in facts)


def test_the_model_is_asked_for_one_fact_per_statement_and_a_joined_fact_is_refused() -> None:
    joined = AliasFact(
        text="Lives in Porto, is allergic to peanuts and has a daughter named Rita",
        category="personal",
        confidence=0.9,
        evidence=DANA,
    )
    single = AliasFact(text="Lives in Porto", confidence=0.9, evidence="I live in Porto")
    model = ScriptedModel(default=ExtractionProposal(facts=[joined, single]))
    messages = [HumanMessage(DANA)]
    prompt = build_prompt(messages, [], SYSTEM_PROMPT)
    assert "ONE ATOMIC FACT PER STATEMENT" in prompt[0].content
    assert "    - I'm allergic to peanuts\n" in prompt[1].content  # the statements listed
    proposal = model.with_structured_output(ExtractionProposal).invoke(prompt)
    checked = check_proposal(proposal, messages, AliasMap())
    assert [f.text for f in checked.extraction.facts] == ["Lives in Porto"]
    assert checked.rejected == [f"fact {joined.text!r}: joins several statements; one fact each"]
