"""Failed extraction jobs for the dead-letter tests: enqueued for a user, claimed and failed
on their one attempt (what a worker whose model raises leaves behind)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.extraction._payload import EXTRACT_JOB, payload_builder
from langmem_vault.jobs import AsyncJobQueue, JobQueue
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.store import AsyncVaultStore, VaultStore

ERROR = "RuntimeError: model is down"


def failed_job(queue: JobQueue, user: str, city: str, thread: str | None = None) -> int:
    """A failed job of ``user`` whose messages say they live in ``city``; returns its id."""
    ns = MemoryNamespaces().resolve({"configurable": {"user_id": user}})
    thread = thread or f"t-{user}-{city}"
    span = [
        HumanMessage(f"I live in {city}.", id=f"{thread}-h"),
        AIMessage("Noted.", id=f"{thread}-a"),
    ]
    ids = [f"{thread}-h", f"{thread}-a"]
    enqueued = queue.enqueue_span(
        EXTRACT_JOB, thread, ids, payload_builder(span, ns), max_attempts=1
    )
    assert enqueued is not None
    [job] = queue.claim([EXTRACT_JOB], worker_id="doomed", limit=1)
    assert job.id == enqueued.job_id
    assert queue.fail(job, ERROR, retry_in_seconds=0) == "failed"
    return job.id


# A VaultStore and a job queue on one pool; ``index`` is the stores fixture (tests/support/stores).


@pytest.fixture
def env(pg_uri: str, schema: str, index: Any) -> Iterator[tuple[VaultStore, JobQueue]]:
    pool = open_pool(pg_uri, max_size=8)
    store = VaultStore(pool, index=index, schema=schema)
    store.setup()
    queue = JobQueue(pool, schema=schema)
    queue.setup()
    yield store, queue
    pool.close()


@pytest.fixture
async def aenv(
    pg_uri: str, schema: str, index: Any
) -> AsyncIterator[tuple[AsyncVaultStore, AsyncJobQueue]]:
    pool = await aopen_pool(pg_uri, max_size=8)
    store = AsyncVaultStore(pool, index=index, schema=schema)
    await store.setup()
    queue = AsyncJobQueue(pool, schema=schema)
    await queue.setup()
    yield store, queue
    await pool.close()
