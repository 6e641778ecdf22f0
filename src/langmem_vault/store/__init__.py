"""VaultStore and AsyncVaultStore: langgraph BaseStores on Postgres + pgvector."""

from langmem_vault.store.aio import AsyncVaultStore
from langmem_vault.store.base import VaultStore
from langmem_vault.store.ranking import SearchRanking
from langmem_vault.store.validation import InvalidValueError

__all__ = ["AsyncVaultStore", "InvalidValueError", "SearchRanking", "VaultStore"]
