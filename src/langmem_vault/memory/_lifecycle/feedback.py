"""Explicit feedback on memories: ``memory_feedback`` and the thumbs up/down of a turn.

An explicit signal counts more than a citation (``+0.3`` / ``-0.3`` by default, see
:class:`~langmem_vault.memory._utility.UtilityPolicy`). It is written as an addition to the
memory's usage record (``signal``, ``feedback_up``/``feedback_down``), so concurrent ratings
never lose one, and readers fold it into the utility at once. A thumbs-up is also evidence
for promotion (:mod:`langmem_vault.memory._layers`): a memory that passes the threshold is
rewritten in its new layer (long-term: no expiry) in the same call.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.memory._vault import MemoryVault
>>> store = InMemoryStore()
>>> key = MemoryVault(store, user_id="u1").remember("Likes jazz").key
>>> memory_feedback(store, key, "up", user_id="u1").utility[key]
0.65
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item

from langmem_vault.db._steps import Call, Steps, Within, arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._layers import DEFAULT_LAYERS, LayerPolicy
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._recall.usage import (
    Increment,
    arecord_usage,
    record_usage,
    usage_namespace,
)
from langmem_vault.memory._utility import DEFAULT_UTILITY, UtilityPolicy, current_utility
from langmem_vault.memory._utility import signal_amount as _amount
from langmem_vault.memory._writes import memory_put

__all__ = [
    "FeedbackResult",
    "amemory_feedback",
    "arate_turn",
    "aturn_feedback",
    "memory_feedback",
    "rate_turn",
    "turn_feedback",
    "turn_keys",
]

MAX_KEYS = 100


@dataclass(frozen=True)
class FeedbackResult:
    """What one feedback call did: the rated keys' utility now, keys not found, promotions."""

    signal: float
    utility: dict[str, float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    promoted: dict[str, str] = field(default_factory=dict)


def _check_keys(keys: str | Sequence[str]) -> list[str]:
    listed = [keys] if isinstance(keys, str) else list(keys)
    if len(listed) > MAX_KEYS:
        raise ValueError(f"keys: at most {MAX_KEYS} per call, got {len(listed)}")
    for key in listed:
        if not isinstance(key, str) or not key:
            raise ValueError(f"keys must be non-empty strings, got {key!r}")
    return list(dict.fromkeys(listed))


def _semantic(
    user_id: str | None, config: Mapping[str, Any] | None, namespaces: MemoryNamespaces | None
) -> tuple[str, ...]:
    configurable = dict((config or {}).get("configurable") or {})
    if user_id is not None:
        configurable["user_id"] = user_id
    return (namespaces or MemoryNamespaces()).resolve({"configurable": configurable}).semantic


def _read_plan(
    ns: tuple[str, ...], keys: list[str]
) -> StorePlan[dict[str, tuple[Item, dict[str, Any]]]]:
    found = yield Batch(
        [
            *(GetOp(ns, key, refresh_ttl=False) for key in keys),
            *(GetOp(usage_namespace(ns), key, refresh_ttl=False) for key in keys),
        ]
    )
    items, usages = found[: len(keys)], found[len(keys) :]
    return {
        key: (item, dict(usage.value) if isinstance(usage, Item) else {})
        for key, item, usage in zip(keys, items, usages, strict=True)
        if isinstance(item, Item)
    }


def _increments(ns: tuple[str, ...], keys: Sequence[str], amount: float) -> list[Increment]:
    count = "feedback_up" if amount > 0 else "feedback_down"
    fields = {"signal": amount, count: 1} if amount else {}
    return [(usage_namespace(ns), key, fields) for key in keys] if fields else []


def _promote_plan(
    ns: tuple[str, ...],
    read: Mapping[str, tuple[Item, dict[str, Any]]],
    amount: float,
    layers: LayerPolicy,
    utility: UtilityPolicy,
) -> StorePlan[FeedbackResult]:
    result = FeedbackResult(signal=amount)
    ops = []
    count = "feedback_up" if amount > 0 else "feedback_down"
    for key, (item, usage) in read.items():
        after = {**usage, "signal": float(usage.get("signal", 0) or 0) + amount}
        if amount:
            after[count] = int(usage.get(count, 0) or 0) + 1
        if "utility" in item.value:
            result.utility[key] = current_utility(float(item.value["utility"]), after, utility)
        layer = layers.promoted(item.value, after)
        if layer is not None and item.value.get("status", "active") != "superseded":
            result.promoted[key] = layer
            value = {**item.value, "layer": layer}
            ops.append(memory_put(ns, key, value, reindex=False, layers=layers))
    if ops:
        yield Batch(ops)
    return result


def _validate(
    keys: str | Sequence[str], signal: str | float | bool, utility: UtilityPolicy
) -> tuple[list[str], float]:
    return _check_keys(keys), _amount(signal, utility)


def _feedback_steps(
    store: BaseStore,
    ns: tuple[str, ...],
    checked: list[str],
    amount: float,
    layers: LayerPolicy,
    utility: UtilityPolicy,
) -> Steps[FeedbackResult]:
    """Read the rated facts, count the usage, then move their utility and layer."""
    read = yield Within(store, _read_plan(ns, checked))
    increments = _increments(ns, list(read), amount)
    yield Call(lambda: record_usage(store, increments), lambda: arecord_usage(store, increments))
    result: FeedbackResult = yield Within(store, _promote_plan(ns, read, amount, layers, utility))
    result.missing.extend(k for k in checked if k not in read)
    return result


def memory_feedback(
    store: BaseStore,
    keys: str | Sequence[str],
    signal: str | float | bool = "up",
    *,
    user_id: str | None = None,
    config: Mapping[str, Any] | None = None,
    namespaces: MemoryNamespaces | None = None,
    utility: UtilityPolicy = DEFAULT_UTILITY,
    layers: LayerPolicy = DEFAULT_LAYERS,
) -> FeedbackResult:
    """Rate facts of one user: ``signal`` is ``"up"`` (+0.3), ``"down"`` (-0.3) or a number
    in [-1, 1]. Keys that do not exist (or expired) are listed in ``missing`` and left alone;
    a bad key or signal raises ``ValueError`` before anything is written.

    The user comes from ``user_id`` or ``config["configurable"]["user_id"]``.
    """
    checked, amount = _validate(keys, signal, utility)
    ns = _semantic(user_id, config, namespaces)
    return run_steps(_feedback_steps(store, ns, checked, amount, layers, utility))


async def amemory_feedback(
    store: BaseStore,
    keys: str | Sequence[str],
    signal: str | float | bool = "up",
    *,
    user_id: str | None = None,
    config: Mapping[str, Any] | None = None,
    namespaces: MemoryNamespaces | None = None,
    utility: UtilityPolicy = DEFAULT_UTILITY,
    layers: LayerPolicy = DEFAULT_LAYERS,
) -> FeedbackResult:
    """Async :func:`memory_feedback`."""
    checked, amount = _validate(keys, signal, utility)
    ns = _semantic(user_id, config, namespaces)
    return await arun_steps(_feedback_steps(store, ns, checked, amount, layers, utility))


# --- the thumbs up/down of a turn -------------------------------------------------------------


def turn_keys(state: Mapping[str, Any]) -> list[str]:
    """The facts a turn's rating is about: those the model cited, or (when it cited none)
    every fact inject showed it (``memory_refs`` and ``memory_items`` of the state).

    >>> state = {"memory_refs": {"M1": "k1", "M2": "k2"}, "cited": ["M2"],
    ...          "memory_items": [{"kind": "fact", "alias": "M1"}, {"kind": "fact", "alias": "M2"}]}
    >>> turn_keys(state)
    ['k2']
    """
    refs: Mapping[str, str] = state.get("memory_refs") or {}
    facts = [m["alias"] for m in state.get("memory_items") or [] if m.get("kind") == "fact"]
    if not state.get("memory_items"):
        facts = list(refs)  # an older state without items: every ref
    cited = [a for a in state.get("cited") or [] if a in facts]
    return [refs[a] for a in (cited or facts) if a in refs]


def turn_feedback(
    store: BaseStore,
    state: Mapping[str, Any],
    config: Mapping[str, Any],
    signal: str | float | bool = "up",
    **options: Any,
) -> FeedbackResult:
    """Rate the memories of the turn in ``state`` (see :func:`turn_keys`); a node or any code
    holding the graph state can call it. ``options`` go to :func:`memory_feedback`."""
    return memory_feedback(store, turn_keys(state), signal, config=config, **options)


async def aturn_feedback(
    store: BaseStore,
    state: Mapping[str, Any],
    config: Mapping[str, Any],
    signal: str | float | bool = "up",
    **options: Any,
) -> FeedbackResult:
    """Async :func:`turn_feedback`."""
    return await amemory_feedback(store, turn_keys(state), signal, config=config, **options)


def _graph_store(graph: Any) -> BaseStore:
    store = getattr(graph, "store", None)
    if not isinstance(store, BaseStore):
        raise ValueError("rate_turn needs a graph compiled with a store: compile(store=...)")
    return store


def rate_turn(
    graph: Any, config: Mapping[str, Any], signal: str | float | bool = "up"
) -> FeedbackResult:
    """Thumbs up/down on the last turn of a thread: reads the thread's state from ``graph``
    (compiled with a checkpointer and a store) and rates its memories.

    >>> config = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    >>> rate_turn(graph, config, "up").utility  # doctest: +SKIP
    {'...': 0.65}
    """
    state = graph.get_state(config).values
    return turn_feedback(_graph_store(graph), state, config, signal)


async def arate_turn(
    graph: Any, config: Mapping[str, Any], signal: str | float | bool = "up"
) -> FeedbackResult:
    """Async :func:`rate_turn`."""
    state = (await graph.aget_state(config)).values
    return await aturn_feedback(_graph_store(graph), state, config, signal)
