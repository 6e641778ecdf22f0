"""Durable background jobs on Postgres (memory extraction first).

Jobs are claimed with ``FOR UPDATE SKIP LOCKED`` under a lease, retried after a crash when the
lease expires, idempotent per (thread, message range), with attempts and the last error kept.
Jobs that used all their attempts form the dead-letter list (``queue.failed()``), which
``queue.retry()`` puts back to work.

>>> from langmem_vault.jobs import JobQueue, ExtractionWorker
>>> with JobQueue.from_conn_string(None) as queue:  # doctest: +SKIP
...     queue.setup()
...     ExtractionWorker(queue, store, "openai:gpt-4o-mini").run_pending()
"""

from langmem_vault.jobs._background import BackgroundExtraction
from langmem_vault.jobs._consolidation import ConsolidationWorker
from langmem_vault.jobs._queue import AsyncJobQueue, JobQueue
from langmem_vault.jobs._worker import ExtractionWorker

# The entry points: the queue, its workers and the background extraction that owns both. What
# the queue's methods return (Job, Enqueued, FailedJobs...) stays in its module.
__all__ = [
    "AsyncJobQueue",
    "BackgroundExtraction",
    "ConsolidationWorker",
    "ExtractionWorker",
    "JobQueue",
]
