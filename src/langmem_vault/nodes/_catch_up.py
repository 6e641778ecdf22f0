"""Inject after extract caught up: on a thread's first turn, the user's other threads' short
tails are extracted (or their jobs run) before inject reads the memory."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from langmem_vault.nodes._common import MemoryNode
from langmem_vault.nodes._extract import DROPPED_KEY, _ExtractNode

#: how long a new thread's first turn waits for the user's caught-up tails (background mode)
DEFAULT_CATCH_UP_SECONDS = 5.0

__all__ = ["DEFAULT_CATCH_UP_SECONDS", "CatchUpThenInject"]


class CatchUpThenInject:
    """An inject node that first lets ``extract`` catch up with the user's other threads (on a
    thread's first turn), so their short tails are in the memory it injects. The graph
    builders and the agent middleware (``before_agent``) inject through it; a graph wired by
    hand does the same:

    >>> from langmem_vault.nodes import create_inject_node
    >>> from langmem_vault.nodes._common import MemoryNode
    >>> from langmem_vault.nodes._extract import create_extract_node
    >>> from langmem_vault.offline._extractor import OfflineExtractor
    >>> extract = create_extract_node(OfflineExtractor(), mode="inline")
    >>> inject = create_inject_node()
    >>> MemoryNode(CatchUpThenInject(inject.node, extract), name="inject").name
    'inject'
    """

    def __init__(
        self, inject: Any, extract: MemoryNode, *, wait_seconds: float = DEFAULT_CATCH_UP_SECONDS
    ) -> None:
        self.inject = inject
        self.extract: _ExtractNode = extract.node
        self.wait_seconds = wait_seconds

    def invoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        dropped: list[str] = []
        self.extract.catch_up(state, config, wait_seconds=self.wait_seconds, dropped=dropped)
        update: dict[str, Any] = self.inject.invoke(state, config)
        return {**update, DROPPED_KEY: dropped}  # the turn's count starts here

    async def ainvoke(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        dropped: list[str] = []
        await self.extract.acatch_up(state, config, wait_seconds=self.wait_seconds, dropped=dropped)
        update: dict[str, Any] = await self.inject.ainvoke(state, config)
        return {**update, DROPPED_KEY: dropped}
