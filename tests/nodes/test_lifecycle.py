"""Everything that starts threads, tasks or pools stops them on close(): nothing of ours keeps
running after a graph's teardown, and nothing logs PoolClosed afterwards."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest
from langgraph.graph import START, StateGraph

from langmem_vault.db._connection import open_pool
from langmem_vault.graphs._state import MemoryState
from langmem_vault.jobs import ExtractionWorker, JobQueue
from langmem_vault.nodes._extract import create_extract_node
from langmem_vault.store import AsyncVaultStore, VaultStore
from tests.support.messages import ai, human
from tests.support.models import ScriptedModel


def ours() -> list[str]:
    return [
        t.name
        for t in threading.enumerate()
        if t.is_alive() and t.name.startswith(("extract-", "vault-", "lease-"))
    ]


def _graph(node: Any, store: Any) -> Any:
    builder = StateGraph(MemoryState)
    builder.add_node("extract", node)
    builder.add_edge(START, "extract")
    return builder.compile(store=store)


def test_extract_node_close_stops_its_worker_and_pool(
    pg_uri: str, schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        store.start_ttl_sweeper(1)
        extract = create_extract_node(ScriptedModel(), queue=pg_uri, every_n_messages=1)
        with extract:
            messages = [human("I love green tea"), ai("noted")]
            _graph(extract, store).invoke(
                {"messages": messages}, {"configurable": {"thread_id": "t", "user_id": "u"}}
            )
            assert any(name.startswith("extract-") for name in ours())
            pool = extract.node.background._queue.db.conn
        assert pool.closed  # the pool it opened from the DSN
        store.close()
        assert ours() == []
    with caplog.at_level(logging.INFO):
        time.sleep(0.3)
    assert "PoolClosed" not in caplog.text


def test_a_worker_whose_pool_closes_stops_quietly(
    pg_uri: str, schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    pool = open_pool(pg_uri, max_size=2)
    queue = JobQueue(pool, schema=schema)
    queue.setup()
    with VaultStore(pool, schema=schema) as store:
        store.setup()
        worker = ExtractionWorker(queue, store, ScriptedModel(), poll_interval=0.05)
        thread = worker.start()
        pool.close()  # the app shut down first
        thread.join(2)
        assert not thread.is_alive()
    assert "PoolClosed" not in caplog.text and "poll failed" not in caplog.text
    worker.close()


async def test_async_extract_node_aclose(pg_uri: str, schema: str) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as store:
        await store.setup()
        await store.start_ttl_sweeper(1)
        async with create_extract_node(
            ScriptedModel(), queue=pg_uri, every_n_messages=1
        ) as extract:
            messages = [human("I love green tea"), ai("noted")]
            config = {"configurable": {"thread_id": "t", "user_id": "u"}}
            await _graph(extract, store).ainvoke({"messages": messages}, config)
            worker = extract.node.background.worker
            assert worker is not None and worker.task_alive()
        assert not worker.task_alive() and extract.node.background._aqueue is None
        await store.close()
        assert store._sweeper is None
        tasks = [t.get_name() for t in asyncio.all_tasks() if not t.done()]
        assert not [n for n in tasks if n.startswith(("extract-", "vault-"))]
