"""Sans-IO store plans: one body of logic, a sync and an async driver.

A plan is a generator that yields a list of store ops (``GetOp``, ``SearchOp``, ``PutOp``...)
and receives their results; its return value is the plan's result. ``run_store_plan`` drives it
with ``store.batch``, ``arun_store_plan`` with ``await store.abatch``, so the sync and async
paths of the facade and of reconcile can never drift apart. Each yielded list is one
``batch`` call, which VaultStore applies atomically.

>>> from langgraph.store.memory import InMemoryStore
>>> from langgraph.store.base import GetOp
>>> def plan():
...     (item,) = yield [GetOp(("a",), "k")]
...     return item
>>> run_store_plan(InMemoryStore(), plan()) is None
True
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, Op, PutOp
from langgraph.store.memory import InMemoryStore

__all__ = [
    "Step",
    "Steps",
    "StorePlan",
    "abatch_ops",
    "arun_steps",
    "arun_store_plan",
    "batch_ops",
    "run_steps",
    "run_store_plan",
]

T = TypeVar("T")
# Results are typed Any: each op kind returns a different shape and the plan knows which.
StorePlan = Generator[Sequence[Op], list[Any], T]


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


def _batch(store: BaseStore, ops: Sequence[Op]) -> list[Any]:
    if not ops:
        return []
    if isinstance(store, InMemoryStore) and any(isinstance(op, PutOp) for op in ops):
        parts = _split_for_inmemory(ops)
        if len(parts) > 1:
            # Only writes are split here (reads never share a batch with them in our plans).
            for part in parts:
                store.batch(part)
            return [None] * len(ops)
    return list(store.batch(ops))


async def _abatch(store: BaseStore, ops: Sequence[Op]) -> list[Any]:
    if not ops:
        return []
    if isinstance(store, InMemoryStore) and any(isinstance(op, PutOp) for op in ops):
        parts = _split_for_inmemory(ops)
        if len(parts) > 1:
            for part in parts:
                await store.abatch(part)
            return [None] * len(ops)
    return list(await store.abatch(ops))


#: one yielded list of ops, run as a plan driver runs it (for drivers of richer plans)
batch_ops = _batch
abatch_ops = _abatch


def run_store_plan(store: BaseStore, plan: StorePlan[T]) -> T:
    """Drive a plan with the store's sync ``batch``."""
    try:
        ops = next(plan)
        while True:
            results: list[Any] = _batch(store, ops)
            ops = plan.send(results)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun_store_plan(store: BaseStore, plan: StorePlan[T]) -> T:
    """Drive a plan with the store's async ``abatch``."""
    try:
        ops = next(plan)
        while True:
            results: list[Any] = await _abatch(store, ops)
            ops = plan.send(results)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


# --- steps: plans over several components (store, saver, audit log) --------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One call of a multi-component operation, as a sync and an async thunk.

    An operation that touches more than the store (the saver, the audit log) is written once
    as a generator of steps; :func:`run_steps` runs each step's ``sync`` thunk and
    :func:`arun_steps` awaits its ``asyn`` one, so the two drivers never drift apart.
    """

    sync: Callable[[], Any]
    asyn: Callable[[], Awaitable[Any]]

    @classmethod
    def same(cls, call: Callable[[], Any]) -> Step:
        """A step whose async twin is the same call, awaited when it returns an awaitable
        (async components keep the sync names: ``AsyncAuditLog.record``...)."""

        async def awaited() -> Any:
            outcome = call()
            return await outcome if inspect.isawaitable(outcome) else outcome

        return cls(call, awaited)

    @classmethod
    def store(cls, store: BaseStore, plan: StorePlan[Any]) -> Step:
        """A store plan as one step."""
        return cls(lambda: run_store_plan(store, plan), lambda: arun_store_plan(store, plan))


Steps = Generator[Step, Any, T]


def run_steps(steps: Steps[T]) -> T:
    """Run every step's sync thunk, sending each result back."""
    result: Any = None
    try:
        while True:
            result = steps.send(result).sync()
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun_steps(steps: Steps[T]) -> T:
    """Await every step's async thunk, sending each result back."""
    result: Any = None
    try:
        while True:
            result = await steps.send(result).asyn()
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
