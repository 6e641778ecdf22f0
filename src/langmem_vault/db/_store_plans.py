"""Store plans: steps of the runtime (:mod:`langmem_vault.db._steps`) run with a store.

A store plan is a generator that yields :class:`Batch` steps (a list of store ops:
``GetOp``, ``SearchOp``, ``PutOp``...) and receives their results; its return value is the
plan's result. ``run_steps(plan, store)`` runs each batch with ``store.batch``,
``arun_steps(plan, store)`` with ``await store.abatch``, so the sync and async paths of the
facade and of reconcile can never drift apart. Each batch is one ``batch`` call, which
VaultStore applies atomically. ``Within(store, plan)`` runs a store plan as one step of an
operation over several components; ``Batch(ops, store)`` names its store itself.

>>> from langgraph.store.memory import InMemoryStore
>>> from langgraph.store.base import GetOp
>>> from langmem_vault.db._steps import run_steps
>>> def plan():
...     (item,) = yield Batch([GetOp(("a",), "k")])
...     return item
>>> run_steps(plan(), InMemoryStore()) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from langgraph.store.base import BaseStore, Op, PutOp
from langgraph.store.memory import InMemoryStore

from langmem_vault.db._steps import Step, Steps

__all__ = ["Batch", "FeatureOp", "StoreOp", "StorePlan", "runs_batches_at_once"]

T = TypeVar("T")
# Steps run with a store as their context. Results are typed Any: each op kind returns a
# different shape and the plan knows which.
StorePlan = Steps[T]


class FeatureOp(Protocol):
    """An op only some stores run (``store._entities``' LinkOp, ExpandOp): the store
    attribute that says a store runs it, and its result on any other store."""

    def store_feature(self) -> str: ...

    def unsupported_result(self) -> Any: ...


#: what a Batch takes: langgraph's ops and feature ops
StoreOp = Op | FeatureOp


def _indexed_text(op: PutOp) -> list[str]:
    if op.value is None or op.index is False:
        return []
    paths = op.index if op.index is not None else ["text"]
    return [str(op.value[p]) for p in paths if isinstance(op.value.get(p), str)]


def _split_for_inmemory(ops: Sequence[Op]) -> list[list[Op]]:
    """langgraph's InMemoryStore fails a batch in which two puts index the same text
    ("Number of embeddings (1) does not match number of indices (2)"); split such batches so
    each part holds distinct texts. Other stores get the batch whole (atomic)."""
    parts: list[list[Op]] = [[]]
    seen: list[set[str]] = [set()]
    for op in ops:
        texts = set(_indexed_text(op)) if isinstance(op, PutOp) else set()
        for part, used in zip(parts, seen, strict=True):
            if not texts & used:
                part.append(op)
                used.update(texts)
                break
        else:
            parts.append([op])
            seen.append(texts)
    return parts


def _parts(store: BaseStore, ops: Sequence[Op]) -> list[list[Op]] | None:
    """The parts to send one by one, or None to send ``ops`` whole. Only writes are split
    (reads never share a batch with them in our plans), and only for InMemoryStore."""
    if isinstance(store, InMemoryStore) and any(isinstance(op, PutOp) for op in ops):
        parts = _split_for_inmemory(ops)
        if len(parts) > 1:
            return parts
    return None


def _answered(store: BaseStore, ops: Sequence[StoreOp]) -> dict[int, Any]:
    """The answers, by position, to ops of a store feature the store lacks (an op with a
    ``store_feature``, such as ``store._entities``' links): such ops are not sent, so a plan
    written for VaultStore runs on any store."""
    answered = {}
    for i, op in enumerate(ops):
        feature = getattr(op, "store_feature", None)
        if feature is not None and getattr(store, feature(), False) is not True:
            answered[i] = op.unsupported_result()  # type: ignore[union-attr]
    return answered


def _batch(store: BaseStore, ops: Sequence[StoreOp]) -> list[Any]:
    answered = _answered(store, ops)
    sent = iter(_send(store, [op for i, op in enumerate(ops) if i not in answered]))  # type: ignore[misc]
    return [answered[i] if i in answered else next(sent) for i in range(len(ops))]


async def _abatch(store: BaseStore, ops: Sequence[StoreOp]) -> list[Any]:
    answered = _answered(store, ops)
    sent = iter(await _asend(store, [op for i, op in enumerate(ops) if i not in answered]))  # type: ignore[misc]
    return [answered[i] if i in answered else next(sent) for i in range(len(ops))]


def _send(store: BaseStore, ops: Sequence[Op]) -> list[Any]:
    if not ops:
        return []
    if (parts := _parts(store, ops)) is None:
        return list(store.batch(ops))
    for part in parts:
        store.batch(part)
    return [None] * len(ops)


async def _asend(store: BaseStore, ops: Sequence[Op]) -> list[Any]:
    if not ops:
        return []
    if (parts := _parts(store, ops)) is None:
        return list(await store.abatch(ops))
    for part in parts:
        await store.abatch(part)
    return [None] * len(ops)


class Batch(Step):
    """One ``store.batch(ops)`` call (atomic on VaultStore), on ``store`` or else on the
    driver's context; sends back the ops' results."""

    __slots__ = ("ops", "store")

    def __init__(self, ops: Sequence[StoreOp], store: BaseStore | None = None) -> None:
        self.ops = ops
        self.store = store

    def run(self, ctx: Any) -> list[Any]:
        return _batch(ctx if self.store is None else self.store, self.ops)

    async def arun(self, ctx: Any) -> list[Any]:
        return await _abatch(ctx if self.store is None else self.store, self.ops)


def runs_batches_at_once(store: BaseStore) -> bool:
    """Whether two batches on ``store`` run at the same time: VaultStore's on a pool, a
    connection each (its ``concurrent_batches``). Not langgraph's PostgresStore, which holds
    one lock per store around a pipelined batch, nor a store on a single connection.

    >>> runs_batches_at_once(InMemoryStore())
    False
    """
    return getattr(store, "concurrent_batches", False) is True
