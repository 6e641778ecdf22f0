"""``langmem-vault stats``: a turn's memory model tokens per day by operation (from a model
that reports usage, run in the graph process on the same database), their cost with a price
table, and inject's latency."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_vault.extraction._schema import AliasFact, ExtractionProposal
from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory._recall.accounting import METRICS
from langmem_vault.offline._model import RecallChatModel
from langmem_vault.service import MemoryService
from tests.cli.conftest import Cli, user
from tests.support.models import MeteredModel


def _turn(cli: Cli, uid: str) -> None:
    fact = AliasFact(text="User lives in Lyon", category="location", evidence="I live in Lyon")
    graph = build_memory_graph(
        RecallChatModel(),
        store=cli.service.store,
        checkpointer=InMemorySaver(),
        extractor=MeteredModel(script=[ExtractionProposal(facts=[fact])], tokens_in=1500),
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=1),
    )
    config: Any = {"configurable": {"user_id": uid, "thread_id": f"t-{uid}"}}
    graph.invoke({"messages": [HumanMessage("I live in Lyon.")]}, config)
    METRICS.flush()


def test_stats_show_tokens_cost_and_inject_latency(cli: Cli, tmp_path: Path) -> None:
    uid = user()
    _turn(cli, uid)
    done = cli("stats", "--user", uid, "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["total"] == 1  # the stats as before
    (row,) = report["accounting"]["tokens"]
    assert (row["operation"], row["model"]) == ("extract", "scripted-metered")
    assert (row["input_tokens"], row["output_tokens"], row["calls"]) == (1500, 20, 1)
    assert row["cost"] is None
    assert report["accounting"]["latency_ms"]["inject"]["count"] == 1

    prices = tmp_path / "prices.toml"
    prices.write_text('["scripted-metered"]\ninput = 3.0\noutput = 15.0\n')
    done = cli("stats", "--user", uid, "--prices", str(prices))
    assert done.exit_code == 0, done.output
    line = next(x for x in done.output.splitlines() if "scripted-metered" in x)
    assert "extract" in line and "1500" in line and "0.0048" in line  # 1500*3 + 20*15 per 1M
    assert "inject" in done.output


def test_a_bad_price_table_is_refused_naming_it(cli: Cli, tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('["gpt-4o-mini"]\ninput = -1\noutput = 0.6\n')
    done = cli("stats", "--user", user(), "--prices", str(prices))
    assert done.exit_code == 2
    assert "prices['gpt-4o-mini']" in done.output


def test_the_stats_table_says_when_its_counts_are_capped(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user with more memories than the service's ``max_rows`` is counted over the newest
    only: the table's title says so, as ``--json``'s ``capped`` does; not at exactly that many."""
    from langmem_vault.cli import _context

    uid = user()
    for i in range(3):
        cli.service.add_memory(uid, f"Fact number {i}")
    monkeypatch.setattr(_context, "MemoryService", partial(MemoryService, max_rows=2))
    done = cli("stats", "--user", uid)
    assert done.exit_code == 0, done.output
    assert f"memories of {uid} (capped: the 2 most recently updated of each user)" in done.output
    assert json.loads(cli("stats", "--user", uid, "--json").output)["capped"] is True
    monkeypatch.setattr(_context, "MemoryService", partial(MemoryService, max_rows=3))
    done = cli("stats", "--user", uid)
    assert done.exit_code == 0 and "capped" not in done.output, done.output
