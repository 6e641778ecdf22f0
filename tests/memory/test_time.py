"""Time: when a memory was said and when it holds (docs/time.md), on real stores.

Relative dates resolve against when they were said; supersede closes the old fact at the new
one's start; a question's time filters and ranks by validity (a superseded fact answers an
as-of question); inject shows the dates; values stored before any of this keep working.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.base import BaseStore

from langmem_vault.extraction._reconcile import aapply_extraction, apply_extraction
from langmem_vault.extraction._span import aextract_span, extract_span
from langmem_vault.memory._dates import statement_validity
from langmem_vault.memory._models import Extraction, ProposedFact, SemanticFact
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._recall.time_filter import TimeWindow, read_query_time
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes import ObservedAtError, create_extract_node
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.offline import OfflineExtractor
from langmem_vault.store import VaultStore
from tests.support.messages import proposal
from tests.support.models import ScriptedModel
from tests.support.stores import USER

NS = MemoryNamespaces().resolve(USER)
SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


def _day(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def _said(text: str, at: datetime) -> HumanMessage:
    return HumanMessage(text, additional_kwargs={"timestamp": at.isoformat()})


def _facts(store: BaseStore) -> dict[str, SemanticFact]:
    return {i.key: SemanticFact.from_store(i.value) for i in store.search(NS.semantic, limit=100)}


def _by_text(store: BaseStore, text: str) -> SemanticFact:
    return next(f for f in _facts(store).values() if f.text == text)


# --- relative dates, resolved against when they were said ---------------------------------


@pytest.mark.parametrize(
    ("said", "valid_from", "valid_to"),
    [
        ("I went to the museum last Tuesday", _day(2023, 5, 2), None),
        ("We met two years ago", _day(2021), None),
        ("I start my new job next month", _day(2023, 6), None),
        ("I've played chess since 2019", _day(2019), None),
        ("I adopted a dog in May 2023", _day(2023, 5), None),
        ("My sister visited yesterday", _day(2023, 5, 7), None),
        ("I lived in Porto from 2015 to 2019", _day(2015), _day(2019)),
        ("I worked at Acme until 2020", None, _day(2020)),
        ("I learnt to swim when I was 12", None, None),
        ("I may move to Oslo", None, None),
        ("My birthday is June 3rd", None, None),
    ],
)
def test_relative_dates_resolve_against_when_they_were_said(
    said: str, valid_from: datetime | None, valid_to: datetime | None
) -> None:
    assert statement_validity(said, SAID) == (valid_from, valid_to)


def test_the_same_words_said_another_year_mean_another_date() -> None:
    assert statement_validity("I moved last year", _day(2020, 6)).valid_from == _day(2019)
    assert statement_validity("I moved last year", SAID).valid_from == _day(2022)


def test_offline_extraction_dates_the_fact_and_drops_the_date_from_its_text(
    store: BaseStore,
) -> None:
    checked = extract_span(
        store, OfflineExtractor(), [_said("I moved to Lyon in 2021", SAID)], namespaces=NS
    )
    apply_extraction(store, checked.extraction, namespaces=NS)
    lyon = _by_text(store, "User lives in Lyon")
    assert (lyon.valid_from, lyon.valid_to, lyon.observed_at) == (_day(2021), None, SAID)


async def test_a_session_date_dates_undated_messages_async(astore: BaseStore) -> None:
    # No time on the message: the session date the app passes is when it was said.
    checked = await aextract_span(
        astore,
        OfflineExtractor(),
        [HumanMessage("I got a puppy yesterday")],
        namespaces=NS,
        observed_at=SAID,
    )
    assert checked.extraction.observed_at == SAID
    await aapply_extraction(astore, checked.extraction, namespaces=NS)
    items = await astore.asearch(NS.semantic, limit=10)
    (puppy,) = [SemanticFact.from_store(i.value) for i in items]
    assert (puppy.valid_from, puppy.observed_at) == (_day(2023, 5, 7), SAID)


def test_the_model_fills_the_dates_in_its_single_call(store: BaseStore) -> None:
    lyon = {"text": "User lives in Lyon", "evidence": "I moved to Lyon", "confidence": 0.9}
    model = ScriptedModel(default=proposal(facts=[lyon | {"valid_from": "last year"}]))
    checked = extract_span(store, model, [_said("I moved to Lyon last year", SAID)], namespaces=NS)
    assert model.calls == 1
    assert "User (2023-05-08): I moved to Lyon last year" in str(model.prompts[0][-1].content)
    assert "valid_from" in str(model.prompts[0][0].content)
    (fact,) = checked.extraction.facts
    assert (fact.valid_from, fact.valid_to) == (_day(2022), None)  # against the message's date
    # An answer that is no date is dropped, and so is an end before the start.
    model = ScriptedModel(
        default=proposal(facts=[lyon | {"valid_from": "2021-03", "valid_to": "2019"}])
    )
    (fact,) = extract_span(store, model, [_said("x", SAID)], namespaces=NS).extraction.facts
    assert (fact.valid_from, fact.valid_to) == (_day(2021, 3), None)


async def test_the_extract_node_reads_the_session_date_from_the_run_config(
    astore: BaseStore,
) -> None:
    node = create_extract_node(OfflineExtractor(), mode="inline", every_n_messages=1, store=astore)
    config: Any = {"configurable": {**USER["configurable"], "thread_id": "t1"}}
    state = {"messages": [HumanMessage("I started at Acme last month", id="m1")]}
    await node.ainvoke(state, {"configurable": {**config["configurable"], "observed_at": SAID}})
    (item,) = await astore.asearch(NS.semantic, limit=10)
    fact = SemanticFact.from_store(item.value)
    assert (fact.observed_at, fact.valid_from) == (SAID, _day(2023, 4))
    bad = {"configurable": {**config["configurable"], "observed_at": "soon"}}
    with pytest.raises(ObservedAtError, match="observed_at"):
        await node.ainvoke({"messages": [HumanMessage("I like tea", id="m2")]}, bad)


# --- supersede closes validity; an as-of question reads it ------------------------------


def _porto_then_lyon(store: BaseStore, lyon: str) -> None:
    for text, at in (("I live in Porto", _day(2019, 3)), (lyon, _day(2022, 2))):
        checked = extract_span(store, OfflineExtractor(), [_said(text, at)], namespaces=NS)
        apply_extraction(store, checked.extraction, namespaces=NS)


def test_supersede_closes_the_old_fact_at_the_new_ones_start(store: BaseStore) -> None:
    _porto_then_lyon(store, "I moved to Lyon in 2021")
    keys = {fact.text: key for key, fact in _facts(store).items()}
    porto, lyon = _by_text(store, "User lives in Porto"), _by_text(store, "User lives in Lyon")
    assert porto.superseded_by == keys["User lives in Lyon"]
    assert (porto.status, porto.valid_to) == ("superseded", _day(2021))  # kept, closed
    assert (lyon.status, lyon.valid_from) == ("active", _day(2021))


async def test_supersede_without_a_date_closes_when_the_new_fact_was_said(
    astore: BaseStore,
) -> None:
    porto_said = Extraction(facts=[ProposedFact(text="Lives in Porto")], observed_at=_day(2019))
    (porto_key,) = (await aapply_extraction(astore, porto_said, namespaces=NS)).pending
    lyon = ProposedFact(text="Lives in Lyon", confidence=0.9, supersedes=porto_key)
    await aapply_extraction(astore, Extraction(facts=[lyon], observed_at=SAID), namespaces=NS)
    items = {i.value["text"]: i.value for i in await astore.asearch(NS.semantic, limit=10)}
    porto = SemanticFact.from_store(items["Lives in Porto"])
    assert (porto.status, porto.valid_to) == ("superseded", SAID)


def _where_i_lived(store: BaseStore, query: str, **when: Any) -> list[str]:
    asked = read_query_time(query, **when)
    # Candidates come from search as usual, closed facts included; the window decides.
    hits = store.search(NS.semantic, query="where does the user live", limit=10)
    if asked.window is None:
        return [h.value["text"] for h in hits if h.value.get("status") == "active"]
    return [h.value["text"] for h in asked.window.order(hits, lambda h: h.value)]


def test_an_as_of_question_is_answered_from_a_superseded_facts_validity(
    store: BaseStore,
) -> None:
    # "I live in Porto" said in 2019, "I moved to Lyon" (no date) said in February 2022.
    _porto_then_lyon(store, "I moved to Lyon")
    assert _by_text(store, "User lives in Porto").valid_to == _day(2022, 2)
    now = _day(2026)
    assert _where_i_lived(store, "Where do I live?", as_of=_day(2020))[0] == "User lives in Porto"
    assert _where_i_lived(store, "Where did I live in 2020?", now=now)[0] == "User lives in Porto"
    assert _where_i_lived(store, "Where do I live?", as_of=_day(2023)) == ["User lives in Lyon"]
    assert _where_i_lived(store, "Where do I live?") == ["User lives in Lyon"]


async def test_an_as_of_question_async(astore: BaseStore) -> None:
    for text, at in (("I live in Porto", _day(2019, 3)), ("I moved to Lyon in 2021", _day(2022))):
        checked = await aextract_span(astore, OfflineExtractor(), [_said(text, at)], namespaces=NS)
        await aapply_extraction(astore, checked.extraction, namespaces=NS)
    window = read_query_time("Where did I live in 2020?", now=_day(2026)).window
    assert window is not None
    hits = await astore.asearch(NS.semantic, query="where does the user live", limit=10)
    assert [h.value["text"] for h in window.order(hits, lambda h: h.value)] == [
        "User lives in Porto"
    ]


def test_the_sql_window_admits_and_ranks_as_python_does(
    pg_uri: str, schema: str, index: dict[str, Any]
) -> None:
    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        _porto_then_lyon(store, "I moved to Lyon")
        store.put(NS.semantic, "legacy", {"text": "Likes tea", "created_at": "2024-01-01T00:00Z"})
        items = store.search(NS.semantic, limit=10)
        for asked in (
            read_query_time("Where do I live?", as_of=_day(2020)),
            read_query_time("What happened in 2024?", now=_day(2026)),
            read_query_time("What did I do after 2022?", now=_day(2026)),
        ):
            window = asked.window
            assert window is not None
            where, rank, params = window.sql("value")
            with psycopg.connect(pg_uri) as conn:
                rows = conn.execute(
                    f"SELECT key, {rank} FROM {schema}.store_items "
                    f"WHERE prefix = %(ns)s AND {where}",
                    {**params, "ns": ".".join(NS.semantic)},
                ).fetchall()
            in_sql = {key: float(fit) for key, fit in rows}
            in_python = {i.key: window.fit(i.value) for i in items if window.admits(i.value)}
            assert in_sql == in_python and in_sql


# --- inject shows the dates; old values keep working ------------------------------------


def test_inject_shows_dates_compactly_and_none_when_unknown(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    vault.remember("Lives in Lyon", category="personal", valid_from=_day(2023, 5))
    vault.remember("Works at Acme", category="company", valid_from=_day(2021), valid_to=_day(2030))
    vault.remember("Likes green tea", category="preference", observed_at=_day(2024, 6, 3))
    store.put(NS.semantic, "old", {"kind": "semantic", "text": "Plays the cello"})  # no dates
    node = create_inject_node(store=store).node
    config = {"configurable": {**USER["configurable"], "thread_id": "t1"}}
    block = node.invoke({"messages": []}, config)["memory_context"]
    lines = {line.split("] ", 1)[1] for line in block.splitlines() if line.startswith("- [M")}
    assert lines == {
        "Lives in Lyon (personal; since May 2023)",
        "Works at Acme (company; 2021\u20132030)",
        "Likes green tea (preference; said 3 June 2024)",
        "Plays the cello (general)",
    }


async def test_values_stored_before_time_existed_keep_working(astore: BaseStore) -> None:
    # A fact as stored before this change: valid_from was when it was learnt, no observed_at.
    legacy = {
        "kind": "semantic",
        "text": "Lives in Porto",
        "category": "personal",
        "confidence": 0.9,
        "created_at": "2019-03-01T00:00:00Z",
        "updated_at": "2019-03-01T00:00:00Z",
        "valid_from": "2019-03-01T00:00:00Z",
        "status": "active",
    }
    await astore.aput(NS.semantic, "old", legacy)
    vault = MemoryVault(astore, user_id="u1")
    (old,) = await vault.alist()
    assert (old.value.observed_at, old.value.said_at()) == (None, _day(2019, 3))
    assert TimeWindow.at(_day(2020)).admits(legacy)
    assert not TimeWindow.at(_day(2018)).admits(legacy)
    moved = Extraction(
        facts=[ProposedFact(text="Lives in Lyon", confidence=0.9, supersedes="old")],
        observed_at=_day(2022),
    )
    await aapply_extraction(astore, moved, namespaces=NS)
    closed = (await vault.aget("old")).value  # type: ignore[union-attr]
    assert (closed.status, closed.valid_to) == ("superseded", _day(2022))


def test_the_examples_of_docs_time_md_run() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "time.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    assert len(blocks) == 3
    for block in blocks:
        exec(compile(block, "docs/time.md", "exec"), {})
