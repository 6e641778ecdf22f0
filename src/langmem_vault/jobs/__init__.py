"""Durable background jobs on Postgres (memory extraction first).

Jobs are claimed with ``FOR UPDATE SKIP LOCKED`` under a lease, retried after a crash when the
lease expires, idempotent per (thread, message range), with attempts and the last error kept.

>>> from langmem_vault.jobs import JobQueue, ExtractionWorker
>>> with JobQueue.from_conn_string(None) as queue:  # doctest: +SKIP
...     queue.setup()
...     ExtractionWorker(queue, store, "openai:gpt-4o-mini").run_pending()
"""

from typing import TYPE_CHECKING, Any

from langmem_vault.jobs.plans import Enqueued, Job
from langmem_vault.jobs.queue import AsyncJobQueue, JobQueue

if TYPE_CHECKING:
    from langmem_vault.jobs.worker import ExtractionWorker, LeaseLost

__all__ = ["AsyncJobQueue", "Enqueued", "ExtractionWorker", "Job", "JobQueue", "LeaseLost"]


def __getattr__(name: str) -> Any:
    # The worker imports the extract node, which imports the queue from this package: load the
    # worker on first use so importing either side first works.
    if name in ("ExtractionWorker", "LeaseLost"):
        from langmem_vault.jobs import worker

        return getattr(worker, name)
    raise AttributeError(f"module 'langmem_vault.jobs' has no attribute {name!r}")
