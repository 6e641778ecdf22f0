"""Failed extraction jobs for the dead-letter tests: enqueued for a user, claimed and failed
on their one attempt (what a worker whose model raises leaves behind)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langmem_vault.extraction.payload import EXTRACT_JOB, payload_builder
from langmem_vault.jobs import JobQueue
from langmem_vault.memory.namespaces import MemoryNamespaces

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
