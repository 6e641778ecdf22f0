"""VaultSaver / AsyncVaultSaver: LangGraph checkpointers on Postgres.

Compact storage of long threads (each message stored once), a per-user thread index,
retention, and the full ``BaseCheckpointSaver`` API including ``delete_for_runs``,
``copy_thread`` and ``prune``.

>>> from langmem_vault.checkpointers import VaultSaver
>>> with VaultSaver.from_conn_string(None) as saver:  # doctest: +SKIP
...     saver.setup()
"""

from langmem_vault.checkpointers._aio import AsyncVaultSaver
from langmem_vault.checkpointers._maintenance import DeletedThreads, RetentionReport, ThreadInfo
from langmem_vault.checkpointers._owners import ThreadAccessError
from langmem_vault.checkpointers._sync import VaultSaver

__all__ = [
    "AsyncVaultSaver",
    "DeletedThreads",
    "RetentionReport",
    "ThreadAccessError",
    "ThreadInfo",
    "VaultSaver",
]
