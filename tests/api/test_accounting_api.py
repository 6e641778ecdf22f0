"""Token and latency accounting through the REST API and the analytics page: a turn whose
extraction model reports usage, run in the graph process on the API's store, shows in the
user's analytics (tokens per day by operation, cost where priced, inject's latency), and to
no one else."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_vault.extraction._schema import AliasFact, ExtractionProposal
from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory._recall.accounting import METRICS
from langmem_vault.offline._model import RecallChatModel
from tests.api.conftest import PREFIX, Api
from tests.support.models import MeteredModel


async def _turn(api: Api, user: str) -> None:
    fact = AliasFact(text="User lives in Lyon", category="location", evidence="I live in Lyon")
    graph = build_memory_graph(
        RecallChatModel(),
        store=api.service.store,
        checkpointer=InMemorySaver(),
        extractor=MeteredModel(script=[ExtractionProposal(facts=[fact])], tokens_in=400),
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=1),
    )
    config: Any = {"configurable": {"user_id": user, "thread_id": f"t-{user}"}}
    await graph.ainvoke({"messages": [HumanMessage("I live in Lyon.")]}, config)
    await METRICS.aflush()


async def test_a_turns_tokens_and_latency_in_analytics(api: Api) -> None:
    await _turn(api, "alice")
    async with api.client("alice-key") as alice, api.client("bob-key") as bob:
        mine = (await alice.get("/analytics", params={"days": 7})).json()
        theirs = (await bob.get("/analytics")).json()
        refused = await bob.get("/analytics", params={"user_id": "alice"})
    (row,) = [t for t in mine["accounting"]["tokens"] if t["operation"] == "extract"]
    assert row["model"] == "scripted-metered"
    assert (row["input_tokens"], row["output_tokens"], row["calls"]) == (400, 20, 1)
    assert row["cost"] is None and mine["accounting"]["cost"] is None  # no price table
    assert mine["latency_ms"]["inject"]["count"] == 1  # timed in the graph process
    assert mine["latency_ms"]["inject"]["p50"] > 0
    assert theirs["accounting"]["tokens"] == [] and "inject" not in theirs["latency_ms"]
    assert refused.status_code == 403


async def test_cost_where_the_price_table_has_the_model(api: Api) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    await _turn(api, user)
    before = api.service.prices
    api.service.prices = {"scripted-metered": (2.0, 10.0)}  # USD per 1M tokens
    try:
        async with api.client("admin-key") as admin:
            report = (await admin.get("/analytics", params={"user_id": user})).json()
            page_url = f"http://test{PREFIX}/analytics"
            page = (await admin.get(page_url, params={"user_id": user})).text
    finally:
        api.service.prices = before
    (row,) = report["accounting"]["tokens"]
    assert row["cost"] == (400 * 2.0 + 20 * 10.0) / 1e6
    assert report["accounting"]["cost"] == row["cost"]
    assert "scripted-metered" in page and "0.0010" in page  # the page's tokens table
