"""Usage counters of memories, kept in records of their own instead of in memory values.

Injecting a memory counts an access and stamps the time; a model citing a fact counts a
citation. These change on every turn, so they do not live in the memory's value: that value
(and its ``updated_at``) changes only when its content does, and "newest" keeps meaning
newest written. Each memory ``(namespace, key)`` has one usage record at
``usage_namespace(namespace)``, same key::

    ("langmem_vault", "usage", "memories", "u1", "semantic"), key
    {"access_count": 3, "last_accessed": "...", "citations": 1, "last_cited": "..."}

The record mirrors the memory's namespace, so any template works, no memory search (a prefix
search of the memory namespace) ever returns a usage record, and erasing a user's prefix
``p`` also erases ``usage_namespace(p)``.

Writes are increments. On a store with atomic increments (``VaultStore``,
``AsyncVaultStore``: one ``INSERT ... ON CONFLICT DO UPDATE``) concurrent processes never
lose one. Any other BaseStore (InMemoryStore, langgraph's PostgresStore) gets a read, add and
put, serialised within this process by a lock per store object; two processes writing the
same record there at the same instant can still lose an increment.

Readers merge the record into the value (:func:`with_usage`): counts add to any legacy counts
in the value, the later access stamp wins, and utility is the value's base utility with the
record's signals folded in (citations, injections that were not cited, explicit feedback;
see :mod:`langmem_vault.memory._utility`). Storing signal counts (not the utility) keeps every
write a pure addition, so concurrent writes commute.

>>> merged = with_usage({"kind": "semantic", "utility": 0.5}, {"access_count": 2, "citations": 1})
>>> merged["access_count"], merged["utility"]
(2, 0.55)
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchItem, SearchOp

from langmem_vault.db._steps import arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._recall.scoring import as_datetime
from langmem_vault.memory._utility import current_utility
from langmem_vault.store._mirrors import Mirrored, MirrorSearchOp

__all__ = [
    "USAGE_ROOT",
    "UTILITY_STEP",
    "AtomicCounters",
    "Target",
    "arecord_usage",
    "read_usage_plan",
    "record_usage",
    "split_usage",
    "usage_increments",
    "usage_namespace",
    "usage_search_op",
    "with_usage",
]

USAGE_ROOT = ("langmem_vault", "usage")
#: how far one citation moves utility (before momentum; see memory.utility.UtilityPolicy)
UTILITY_STEP = 0.1

Target = tuple[tuple[str, ...], str]
Increment = tuple[tuple[str, ...], str, Mapping[str, Any]]


def usage_namespace(namespace: Sequence[str]) -> tuple[str, ...]:
    """Where the usage records of the memories in ``namespace`` live.

    >>> usage_namespace(("memories", "u1", "episodes"))
    ('langmem_vault', 'usage', 'memories', 'u1', 'episodes')
    """
    return (*USAGE_ROOT, *namespace)


@runtime_checkable
class AtomicCounters(Protocol):
    """A store that adds to counter records atomically (VaultStore, AsyncVaultStore)."""

    def increment(self, increments: Iterable[Increment]) -> int: ...

    async def aincrement(self, increments: Iterable[Increment]) -> int: ...


def usage_increments(
    injected: Sequence[Target],
    cited: Sequence[Target],
    now: datetime,
    uncited: Sequence[Target] = (),
) -> list[Increment]:
    """The increments for one turn: an access per injected memory, a citation per cited one,
    and an ``uncited`` mark per fact that was shown to a citing model and not used."""
    stamp = now.isoformat()
    out: list[Increment] = []
    for ns, key in dict.fromkeys(injected):
        out.append((usage_namespace(ns), key, {"access_count": 1, "last_accessed": stamp}))
    for ns, key in dict.fromkeys(cited):
        out.append((usage_namespace(ns), key, {"citations": 1, "last_cited": stamp}))
    for ns, key in dict.fromkeys(uncited):
        out.append((usage_namespace(ns), key, {"uncited": 1}))
    return out


def _later(a: Any, b: Any) -> Any:
    first, second = as_datetime(a), as_datetime(b)
    if first is None:
        return b
    return a if second is None or first >= second else b


def _add(stored: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    # The rule VaultStore applies in SQL (store/_counters.py): numbers add, timestamps rise.
    merged = dict(stored)
    for name, amount in fields.items():
        if isinstance(amount, str):
            merged[name] = _later(merged.get(name), amount)
        else:
            old = merged.get(name)
            base = old if isinstance(old, int | float) and not isinstance(old, bool) else 0
            merged[name] = base + amount
    return merged


def _increment_plan(increments: Sequence[Increment]) -> StorePlan[int]:
    """Read, add, put: the fallback for stores without atomic increments."""
    rows: dict[Target, dict[str, Any]] = {}
    for ns, key, fields in increments:
        rows[(ns, key)] = _add(rows.get((ns, key), {}), fields)
    if not rows:
        return 0
    found = yield Batch([GetOp(ns, key, refresh_ttl=False) for ns, key in rows])
    puts: list[PutOp] = []
    for (ns, key), item in zip(rows, found, strict=True):
        stored = item.value if isinstance(item, Item) else {}
        puts.append(PutOp(ns, key, _add(stored, rows[(ns, key)]), index=False))
    yield Batch(puts)
    return len(puts)


def record_usage(store: BaseStore, increments: Sequence[Increment]) -> int:
    """Apply usage increments to ``store``; returns how many records were touched."""
    if not increments:
        return 0
    if isinstance(store, AtomicCounters):
        return store.increment(increments)
    with _fallback_lock(store):
        return run_steps(_increment_plan(increments), store)


async def arecord_usage(store: BaseStore, increments: Sequence[Increment]) -> int:
    """Async :func:`record_usage`."""
    if not increments:
        return 0
    if isinstance(store, AtomicCounters):
        return await store.aincrement(increments)
    async with _afallback_lock(store):
        return await arun_steps(_increment_plan(increments), store)


def read_usage_plan(targets: Iterable[Target]) -> StorePlan[dict[Target, dict[str, Any]]]:
    """The usage records of ``targets`` (one batch of gets); memories never used are absent."""
    keys = list(dict.fromkeys((tuple(ns), key) for ns, key in targets))
    if not keys:
        return {}
    found = yield Batch([GetOp(usage_namespace(ns), key, refresh_ttl=False) for ns, key in keys])
    return {k: dict(i.value) for k, i in zip(keys, found, strict=True) if isinstance(i, Item)}


def usage_search_op(op: SearchOp) -> MirrorSearchOp:
    """``op`` with each result's usage record read in the search's own statement, saving the
    round trip of :func:`read_usage_plan`. Only for stores that run it
    (:func:`~langmem_vault.store._mirrors.runs_mirror_search`: VaultStore, AsyncVaultStore);
    :func:`split_usage` reads its result.

    >>> usage_search_op(SearchOp(("memories", "u1", "semantic"))).mirror
    ('langmem_vault', 'usage')
    """
    return MirrorSearchOp(op, USAGE_ROOT)


def split_usage(found: Sequence[Mirrored]) -> tuple[list[SearchItem], dict[Target, dict[str, Any]]]:
    """The items of a :func:`usage_search_op`, and their usage records as
    :func:`read_usage_plan` returns them (memories never used are absent)."""
    usage = {
        (tuple(m.item.namespace), m.item.key): dict(m.mirror.value)
        for m in found
        if m.mirror is not None
    }
    return [m.item for m in found], usage


def with_usage(value: Mapping[str, Any], usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """A memory value with its usage merged in (the value itself is not changed).

    Instructions count injections as ``usage_count``; facts and episodes as
    ``access_count`` with ``last_accessed``. Values written before usage records existed
    may hold counts of their own: they are added to, not replaced.
    """
    merged = dict(value)
    if not usage:
        return merged
    accesses = int(usage.get("access_count", 0))
    if value.get("kind") == "instruction" or "usage_count" in value:
        merged["usage_count"] = int(value.get("usage_count") or 0) + accesses
    else:
        merged["access_count"] = int(value.get("access_count") or 0) + accesses
        latest = _later(value.get("last_accessed"), usage.get("last_accessed"))
        if latest is not None:
            merged["last_accessed"] = latest
    if "utility" in value:
        merged["utility"] = current_utility(float(value["utility"]), usage)
    return merged


# -- the in-process lock of the fallback -------------------------------------------------------
# inject and respond each own a recorder (a worker thread or tasks): without a lock their
# read-add-put of the same record could interleave and drop an increment.

_locks: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_unreferenceable = threading.Lock()  # for store objects that cannot be weakly referenced
_registry = threading.Lock()


def _lock_for(store: Any) -> threading.Lock:
    with _registry:
        try:
            lock = _locks.get(store)
            if lock is None:
                lock = _locks[store] = threading.Lock()
        except TypeError:
            return _unreferenceable
        return lock


@contextmanager
def _fallback_lock(store: Any) -> Iterator[None]:
    with _lock_for(store):
        yield


@asynccontextmanager
async def _afallback_lock(store: Any) -> AsyncIterator[None]:
    # Polled, not to_thread(lock.acquire): the event loop never blocks, and a cancelled
    # waiter never leaves a worker thread holding the lock. Writes are short.
    lock = _lock_for(store)
    while not lock.acquire(blocking=False):
        await asyncio.sleep(0.001)
    try:
        yield
    finally:
        lock.release()
