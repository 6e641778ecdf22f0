"""Connections, the embedded server, the sans-IO runtime (steps and their two drivers) and
migrations.

Mostly internal: the store, the saver, the job queue and the audit log open their own pools
(``from_conn_string``). Users need a shared pool (:func:`open_pool` / :func:`aopen_pool`, one
pool for several components) and the embedded server's errors; the rest is imported from its
module by the rooms above.

>>> from langmem_vault.db import EmbeddedServerError, ServerCrashedError
>>> issubclass(ServerCrashedError, EmbeddedServerError)
True
"""

from langmem_vault.db._connection import aopen_pool, open_pool
from langmem_vault.db._embedded import DataDirError, EmbeddedServerError, ServerCrashedError

__all__ = ["DataDirError", "EmbeddedServerError", "ServerCrashedError", "aopen_pool", "open_pool"]
