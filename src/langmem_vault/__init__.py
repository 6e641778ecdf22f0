"""langmem-vault: persistent memory for LangGraph apps, as graph wiring on Postgres + pgvector.

>>> from langmem_vault import VaultStore
>>> with VaultStore.from_conn_string() as store:  # doctest: +SKIP
...     store.setup()
"""

from langmem_vault.store import AsyncVaultStore, InvalidValueError, SearchRanking, VaultStore

__all__ = ["AsyncVaultStore", "InvalidValueError", "SearchRanking", "VaultStore"]
__version__ = "0.1.0"
