"""LangChain integrations: agent middleware, memory tools, a retriever over memories and
documents. Names load on first use, so importing this package pulls in none of them.

>>> from langmem_vault.integrations import MemoryMiddleware  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langmem_vault._lazy import LazyNames

if TYPE_CHECKING:
    from langmem_vault.integrations._middleware import MemoryAgentState, MemoryMiddleware
    from langmem_vault.integrations._retriever import VaultRetriever, pg_engine, render_context
    from langmem_vault.integrations._tools import (
        create_manage_memory_tool,
        create_search_memory_tool,
    )

__all__ = [
    "MemoryAgentState",
    "MemoryMiddleware",
    "VaultRetriever",
    "create_manage_memory_tool",
    "create_search_memory_tool",
    "pg_engine",
    "render_context",
]

_NAMES = LazyNames(
    globals(),
    {
        "langmem_vault.integrations._middleware": ("MemoryAgentState", "MemoryMiddleware"),
        "langmem_vault.integrations._retriever": (
            "VaultRetriever",
            "pg_engine",
            "render_context",
        ),
        "langmem_vault.integrations._tools": (
            "create_manage_memory_tool",
            "create_search_memory_tool",
        ),
    },
)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
