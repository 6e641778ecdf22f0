"""The episodes of :class:`~langmem_vault.memory._vault.MemoryVault`: add, and read the most
relevant to a query or the most recent."""

from __future__ import annotations

import builtins
import uuid
from typing import Any

from langgraph.store.base import Item, SearchOp

from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._models import Episode
from langmem_vault.memory._recall.retrieval import newest_plan
from langmem_vault.memory._vault_base import Memory, VaultBase

__all__ = ["VaultEpisodes"]

_List = builtins.list


class VaultEpisodes(VaultBase):
    """The vault's episodes (what happened in a conversation, summarised)."""

    def _add_episode_plan(self, episode: Episode) -> StorePlan[Memory[Episode]]:
        key = str(uuid.uuid4())
        episode = yield from self._find(episode)
        yield Batch(self._put(self.ns.episodes, key, episode))
        return Memory(key, episode)

    def add_episode(self, summary: str, **fields: Any) -> Memory[Episode]:
        """Store an episode (``importance``, ``thread_id``, ``outcome``, ``topics``,
        ``entities``...; without ``entities`` the vault's ``entity_finder`` names them in the
        summary, and the store's entity index links them as a fact's)."""
        episode = Episode(summary=summary, **fields)
        return self._run(self._add_episode_plan(episode))

    async def aadd_episode(self, summary: str, **fields: Any) -> Memory[Episode]:
        """Async :meth:`add_episode`."""
        episode = Episode(summary=summary, **fields)
        return await self._arun(self._add_episode_plan(episode))

    def _episodes_plan(self, query: str | None, limit: int) -> StorePlan[_List[Memory[Episode]]]:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if query:
            (found,) = yield Batch([SearchOp(self.ns.episodes, query=query, limit=limit)])
            items: _List[Item] = list(found)
        else:
            items = yield from newest_plan(self.ns.episodes, "ended_at", limit)
        values = yield from self._with_usage(items)
        return [
            Memory(i.key, Episode.from_store(v), getattr(i, "score", None))
            for i, v in zip(items, values, strict=True)
        ]

    def episodes(self, query: str | None = None, *, limit: int = 10) -> _List[Memory[Episode]]:
        """Episodes: most relevant to ``query``, or most recent first without one."""
        return self._run(self._episodes_plan(query, limit))

    async def aepisodes(
        self, query: str | None = None, *, limit: int = 10
    ) -> _List[Memory[Episode]]:
        """Async :meth:`episodes`."""
        return await self._arun(self._episodes_plan(query, limit))
