"""The ground every room of :class:`~langmem_vault.memory._vault.MemoryVault` stands on: one
user's namespaces, the one write rule, and the drivers that run a store plan sync or async.

The facade is split by job: :class:`VaultBase` here (construction, guards, drivers), the
standing instructions (``memory._vault_instructions``), the episodes
(``memory._vault_episodes``) and the facts with recall (``memory._vault``). Each operation is
one sans-IO store plan (``_*_plan``) and two thin drivers, ``x`` and ``ax``.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langgraph.store.base import BaseStore, Item

from langmem_vault.db._steps import Call, arun_steps, run_steps
from langmem_vault.db._store_plans import StoreOp, StorePlan
from langmem_vault.memory._entities import EntityFinder
from langmem_vault.memory._models import Episode, MemoryModel, SemanticFact
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces
from langmem_vault.memory._recall.scoring import DEFAULT_WEIGHTS, ScoringWeights
from langmem_vault.memory._recall.usage import read_usage_plan, with_usage
from langmem_vault.memory._sealing import Keyring, default_keyring
from langmem_vault.memory._writes import memory_ops

__all__ = ["Memory", "VaultBase"]

M = TypeVar("M", bound=MemoryModel)
N = TypeVar("N", SemanticFact, Episode)
T = TypeVar("T")
_List = builtins.list


@dataclass(frozen=True)
class Memory(Generic[M]):
    """A stored memory: its store key, typed value and (for recall) its score."""

    key: str
    value: M
    score: float | None = None


class VaultBase:
    """One user's namespaces in a store, and the drivers of the vault's store plans (the
    constructor's arguments: :class:`~langmem_vault.memory._vault.MemoryVault`)."""

    def __init__(
        self,
        store: BaseStore,
        *,
        user_id: str | None = None,
        config: Mapping[str, Any] | None = None,
        namespaces: MemoryNamespaces | None = None,
        weights: ScoringWeights = DEFAULT_WEIGHTS,
        keyring: Keyring | None = None,
        entity_finder: EntityFinder | None = None,
    ) -> None:
        configurable = dict((config or {}).get("configurable") or {})
        if user_id is not None:
            if configurable.get("user_id") not in (None, user_id):
                raise PermissionError(
                    f"user_id {user_id!r} differs from config's {configurable['user_id']!r}"
                )
            configurable["user_id"] = user_id
        self.store = store
        self.user_id: str | None = configurable.get("user_id")
        self.namespaces = namespaces or MemoryNamespaces()
        self.ns: ResolvedNamespaces = self.namespaces.resolve({"configurable": configurable})
        self.weights = weights
        # Without an explicit keyring, $LANGMEM_VAULT_KEY (when set) seals private facts.
        self.keyring = keyring if keyring is not None else default_keyring()
        self.entity_finder = entity_finder

    # -- guards and drivers --------------------------------------------------------------

    def _put(
        self,
        ns: tuple[str, ...],
        key: str,
        value: MemoryModel,
        *,
        reindex: bool = True,
        relink: bool = False,
    ) -> _List[StoreOp]:
        # One write rule (memory.writes): sealing with this vault's keyring, the layer's TTL,
        # the entity links.
        return memory_ops(
            ns,
            key,
            value,
            keyring=self.keyring,
            reindex=reindex,
            relink=relink,
            layers=self.weights.layers,
        )

    def _find(self, memory: N) -> StorePlan[N]:
        """``memory`` (a fact, or an episode) with the entities the vault's finder names in
        its text (CPU-bound: a worker thread when async), unless it has some already."""
        finder = self.entity_finder
        if finder is None or memory.entities:
            return memory
        text = memory.summary if isinstance(memory, Episode) else memory.text
        entities, relations = yield Call(
            lambda: finder(text), lambda: asyncio.to_thread(finder, text)
        )
        return memory.model_copy(update={"entities": entities, "relations": relations})

    def _run(self, plan: StorePlan[T]) -> T:
        return run_steps(plan, self.store)

    async def _arun(self, plan: StorePlan[T]) -> T:
        return await arun_steps(plan, self.store)

    def _with_usage(self, items: Sequence[Item]) -> StorePlan[_List[dict[str, Any]]]:
        """The items' values with their usage counts merged in (one batch of gets)."""
        usage = yield from read_usage_plan((tuple(i.namespace), i.key) for i in items)
        return [with_usage(i.value, usage.get((tuple(i.namespace), i.key))) for i in items]
