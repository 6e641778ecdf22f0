"""VaultStore and AsyncVaultStore: langgraph BaseStores on Postgres + pgvector.

Names load on first use (see ``langmem_vault._lazy``), so code that needs only the store's op
types (``store.mirrors``: the memory layer and the nodes) does not load psycopg and the pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langmem_vault._lazy import LazyNames

if TYPE_CHECKING:
    from langmem_vault.store._aio import AsyncVaultStore
    from langmem_vault.store._mirrors import MirrorSearchOp
    from langmem_vault.store._pages import Page, PageOp
    from langmem_vault.store._ranking import SearchRanking
    from langmem_vault.store._sync import VaultStore
    from langmem_vault.store._validation import InvalidValueError

__all__ = [
    "AsyncVaultStore",
    "InvalidValueError",
    "MirrorSearchOp",
    "Page",
    "PageOp",
    "SearchRanking",
    "VaultStore",
]

_NAMES = LazyNames(
    globals(),
    {
        "langmem_vault.store._aio": ("AsyncVaultStore",),
        "langmem_vault.store._sync": ("VaultStore",),
        "langmem_vault.store._ranking": ("SearchRanking",),
        "langmem_vault.store._mirrors": ("MirrorSearchOp",),
        "langmem_vault.store._pages": ("Page", "PageOp"),
        "langmem_vault.store._validation": ("InvalidValueError",),
    },
)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
