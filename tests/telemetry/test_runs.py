"""What a LangChain callback handler (LangSmith's tracer is one) sees of a turn: each memory
stage as a run named ``langmem_vault.<stage>`` whose metadata holds its counts, under the
graph's nodes and under MemoryMiddleware's hooks in create_agent."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_vault.extraction._schema import AliasFact, ExtractionProposal
from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.integrations import MemoryMiddleware
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline._model import RecallChatModel
from tests.support.models import MeteredModel, RecallToolModel

USER = "dana"
SAID = "I live in Lyon."


class Runs(BaseCallbackHandler):
    """Every chain run started: name, metadata and parent run."""

    def __init__(self) -> None:
        self.started: list[dict[str, Any]] = []
        self.names: dict[UUID, str] = {}

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.names[run_id] = name or ""
        parent = self.names.get(parent_run_id) if parent_run_id else None
        self.started.append({"name": name, "metadata": metadata or {}, "parent": parent})

    def stage(self, stage: str) -> dict[str, Any]:
        (found,) = [r for r in self.started if r["name"] == f"langmem_vault.{stage}"]
        return found


def _store() -> InMemoryStore:
    store = InMemoryStore()
    MemoryVault(store, user_id=USER).remember("User likes green tea", source="manual")
    return store


def _extractor() -> MeteredModel:
    fact = AliasFact(text="User lives in Lyon", category="location", evidence=SAID)
    return MeteredModel(script=[ExtractionProposal(facts=[fact])], tokens_in=70, tokens_out=9)


def _graph(store: InMemoryStore) -> Any:
    return build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=_extractor(),
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=1),
    )


def _check_graph(runs: Runs) -> None:
    inject = runs.stage("inject")
    assert inject["parent"] == "inject"  # under the graph's node run
    assert inject["metadata"]["injected"] == 1
    assert inject["metadata"]["candidates"] >= 1
    assert inject["metadata"]["duration_ms"] > 0
    extract = runs.stage("extract")
    assert extract["metadata"]["input_tokens"] == 70
    assert extract["metadata"]["output_tokens"] == 9
    assert extract["metadata"]["extracted"] == 1
    assert runs.stage("reconcile")["parent"] == "reconcile"


def test_graph_turn_runs() -> None:
    runs = Runs()
    config = {"configurable": {"user_id": USER, "thread_id": "t1"}, "callbacks": [runs]}
    _graph(_store()).invoke({"messages": [HumanMessage(SAID)]}, config)
    _check_graph(runs)


async def test_graph_turn_runs_async() -> None:
    runs = Runs()
    config = {"configurable": {"user_id": USER, "thread_id": "t1"}, "callbacks": [runs]}
    await _graph(_store()).ainvoke({"messages": [HumanMessage(SAID)]}, config)
    _check_graph(runs)


def test_middleware_runs() -> None:
    store = _store()
    agent = create_agent(
        RecallToolModel(),
        [],
        middleware=[MemoryMiddleware(_extractor(), store=store)],
        checkpointer=InMemorySaver(),
        store=store,
    )
    runs = Runs()
    config = {"configurable": {"user_id": USER, "thread_id": "t1"}, "callbacks": [runs]}
    agent.invoke({"messages": [HumanMessage(SAID)]}, config)
    inject = runs.stage("inject")
    assert inject["parent"] == "MemoryMiddleware.before_agent"
    assert inject["metadata"]["injected"] == 1
    assert runs.stage("extract")["parent"] == "MemoryMiddleware.after_agent"
