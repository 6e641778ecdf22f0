"""Consolidation: one user's memories tidied in one pass (the lifecycle cycle).

What a run does, in order:

1. **folds utility** (:mod:`langmem_vault.memory._utility`): the signals since the last run
   become the stored utility; when the user was active since then, facts nobody injected or
   rated decay (5% by default);
2. **merges near-duplicate facts** (per cluster of related facts, one judge call): the
   strongest fact is kept and absorbs the others' evidence, tags, sources and mentions; the
   others are closed (``superseded_by`` the kept key), never deleted;
3. **flags contradictions** reconcile missed: the newer fact goes back to
   ``pending_confirmation`` and ``supersedes`` the older, so confirming it settles the matter;
4. **summarises episode clusters** (episodes sharing a topic) into one semantic fact, the
   spec's "prospective reflection" (one judge call per cluster), long-term;
5. **retires stale facts**: a fact not stated by the user whose utility decayed below
   ``retire_below`` is closed;
6. **promotes** memories whose effectiveness passed the layer thresholds.

The plan is sans-IO, a generator of the runtime's steps (:mod:`langmem_vault.db._steps`)
run with the store as context: store batches, the judge's calls (:class:`JudgeFacts`,
:class:`Summarize`) and usage increments (:class:`Increments`); ``run_steps(plan, store)``
and ``arun_steps(plan, store)`` drive it. It is idempotent: a
second run finds nothing pending, nothing duplicated, the same summaries, and a cluster it
already judged unchanged is not sent to the judge again.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.memory._vault import MemoryVault
>>> store = InMemoryStore()
>>> vault = MemoryVault(store, user_id="u1")
>>> _ = vault.remember("Likes green tea", source="conversation")
>>> _ = vault.remember("Likes green tea.", source="conversation")
>>> report = consolidate(store, user_id="u1")
>>> len(report.merged), consolidate(store, user_id="u1").changed
(1, False)
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, Item, PutOp

from langmem_vault.db._steps import Step, Steps, arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StoreOp
from langmem_vault.memory._layers import DEFAULT_LAYERS, LayerPolicy
from langmem_vault.memory._lifecycle.clusters import episode_clusters, fact_clusters, signature
from langmem_vault.memory._lifecycle.consolidation_judge import (
    ClusterJudge,
    EpisodeView,
    FactVerdict,
    FactView,
    OfflineJudge,
)
from langmem_vault.memory._models import MAX_EVIDENCE, utcnow
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces
from langmem_vault.memory._recall.retrieval import scan_plan
from langmem_vault.memory._recall.usage import (
    Increment,
    arecord_usage,
    record_usage,
    usage_namespace,
)
from langmem_vault.memory._utility import (
    DEFAULT_UTILITY,
    UtilityPolicy,
    current_utility,
    fold_increments,
    pending_activity,
)
from langmem_vault.memory._writes import memory_ops, memory_put
from langmem_vault.telemetry._tracing import annotate

__all__ = [
    "STATE_KEY",
    "ConsolidationPolicy",
    "ConsolidationReport",
    "Increments",
    "JudgeFacts",
    "Summarize",
    "aconsolidate",
    "consolidate",
    "consolidation_plan",
]

#: the run's own record (clusters already judged), beside the usage records of the facts
STATE_KEY = "~consolidation"
_SUMMARY_ROOT = uuid.UUID("0b7e3c55-6a0d-4f3e-9f57-3f0f3f6c2a11")
_MAX_JUDGED = 500


@dataclass(frozen=True)
class ConsolidationPolicy:
    """Knobs of a run. ``cluster_threshold``: lexical similarity that makes two facts related
    (facts of one category opening with the same two words are related too)."""

    cluster_threshold: float = 0.5
    max_cluster: int = 12
    min_episodes: int = 3
    retire_below: float = 0.15
    layers: LayerPolicy = DEFAULT_LAYERS
    utility: UtilityPolicy = DEFAULT_UTILITY

    def __post_init__(self) -> None:
        if not 0.0 < self.cluster_threshold <= 1.0:
            raise ValueError(f"cluster_threshold must be in (0, 1], got {self.cluster_threshold}")
        if self.max_cluster < 2 or self.min_episodes < 2:
            raise ValueError("max_cluster and min_episodes must be >= 2")
        if not 0.0 <= self.retire_below < 1.0:
            raise ValueError(f"retire_below must be in [0, 1), got {self.retire_below}")


@dataclass
class ConsolidationReport:
    """What a run changed (store keys) and how many judge calls it made."""

    merged: list[tuple[str, str]] = field(default_factory=list)  # (kept, closed)
    flagged: list[tuple[str, str]] = field(default_factory=list)  # (older, newer now pending)
    summaries: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    promoted: dict[str, str] = field(default_factory=dict)  # fact key -> new layer
    promoted_episodes: dict[str, str] = field(default_factory=dict)
    folded: int = 0
    decayed: int = 0
    judge_calls: int = 0
    pruned_usage: list[str] = field(default_factory=list)  # keys of orphaned usage records

    @property
    def changed(self) -> bool:
        """Whether the run wrote anything."""
        return bool(
            self.merged
            or self.flagged
            or self.summaries
            or self.retired
            or self.promoted
            or self.promoted_episodes
            or self.folded
            or self.decayed
            or self.pruned_usage
        )

    def changes(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(change, memory key, detail) per change, for the audit log (no memory text)."""
        out: list[tuple[str, str, dict[str, Any]]] = []
        out += [("merge", closed, {"kept": kept}) for kept, closed in self.merged]
        out += [("contradiction", new, {"supersedes": old}) for old, new in self.flagged]
        out += [("summary", key, {}) for key in self.summaries]
        out += [("retire", key, {}) for key in self.retired]
        out += [("promote", key, {"layer": layer}) for key, layer in self.promoted.items()]
        out += [
            ("promote_episode", key, {"layer": layer})
            for key, layer in self.promoted_episodes.items()
        ]
        return out


class JudgeFacts(Step):
    """Step: the judge judges one fact cluster (sends back a :class:`FactVerdict`)."""

    __slots__ = ("facts", "judge")

    def __init__(self, judge: ClusterJudge, facts: list[FactView]) -> None:
        self.judge = judge
        self.facts = facts

    def run(self, ctx: Any) -> FactVerdict:
        return self.judge.judge_facts(self.facts)

    async def arun(self, ctx: Any) -> FactVerdict:
        return await self.judge.ajudge_facts(self.facts)


class Summarize(Step):
    """Step: the judge summarises one episode cluster (sends back text or None)."""

    __slots__ = ("episodes", "judge")

    def __init__(self, judge: ClusterJudge, episodes: list[EpisodeView]) -> None:
        self.judge = judge
        self.episodes = episodes

    def run(self, ctx: Any) -> str | None:
        return self.judge.summarize(self.episodes)

    async def arun(self, ctx: Any) -> str | None:
        return await self.judge.asummarize(self.episodes)


class Increments(Step):
    """Step: add to usage records of the store the plan runs with (sends back a count)."""

    __slots__ = ("increments",)

    def __init__(self, increments: list[Increment]) -> None:
        self.increments = increments

    def run(self, ctx: BaseStore) -> int:
        return record_usage(ctx, self.increments)

    async def arun(self, ctx: BaseStore) -> int:
        return await arecord_usage(ctx, self.increments)


ConsolidationPlan = Steps[ConsolidationReport]


def _strength(value: Mapping[str, Any]) -> tuple[float, int, str]:
    # The kept fact of a duplicate group: most confident, most mentioned, then oldest.
    return (
        -float(value.get("confidence", 0) or 0),
        -int(value.get("mentions", 1) or 1),
        str(value.get("created_at", "")),
    )


def _merge(keep: dict[str, Any], other: Mapping[str, Any], now: str) -> dict[str, Any]:
    evidences = [e for e in (keep.get("evidence"), other.get("evidence")) if e]
    evidence = " | ".join(dict.fromkeys(evidences))[:MAX_EVIDENCE] or None
    confidence = 1 - (1 - float(keep.get("confidence", 0))) * (
        1 - float(other.get("confidence", 0))
    )
    return {
        **keep,
        "evidence": evidence,
        "confidence": round(min(max(confidence, float(keep.get("confidence", 0))), 0.99), 6),
        "mentions": int(keep.get("mentions", 1)) + int(other.get("mentions", 1)),
        "tags": list(dict.fromkeys([*keep.get("tags", []), *other.get("tags", [])]))[:20],
        "source_message_ids": list(
            dict.fromkeys(
                [*keep.get("source_message_ids", []), *other.get("source_message_ids", [])]
            )
        )[-50:],
        "updated_at": now,
    }


def _close(value: Mapping[str, Any], now: str, by: str | None) -> dict[str, Any]:
    valid_from = str(value.get("valid_from") or now)
    return {
        **value,
        "status": "superseded",
        "valid_to": max(now, valid_from),
        "superseded_by": by,
        "updated_at": now,
    }


def consolidation_plan(
    ns: ResolvedNamespaces,
    *,
    judge: ClusterJudge | None = None,
    policy: ConsolidationPolicy | None = None,
    now: datetime | None = None,
) -> ConsolidationPlan:
    """The reads, judge calls and writes of one run (see the module docstring), run with the
    store as context. ``judge`` defaults to the offline rules."""
    judge = judge or OfflineJudge()
    policy = policy or ConsolidationPolicy()
    stamp = (now or utcnow()).isoformat()
    report = ConsolidationReport()
    started = now or utcnow()
    facts = yield from scan_plan(ns.semantic)
    episodes = yield from scan_plan(ns.episodes)
    # Every usage record of the user's facts and episodes (and the run's own record).
    records: dict[tuple[tuple[str, ...], str], Item] = {}
    for space in (ns.semantic, ns.episodes):
        for found in (yield from scan_plan(usage_namespace(space))):
            records[(space, found.key)] = found
    usage = {target: dict(found.value) for target, found in records.items()}
    state_record = usage.get((ns.semantic, STATE_KEY), {})
    judged: list[str] = list(state_record.get("judged", []))
    values = {i.key: dict(i.value) for i in facts}
    changed: dict[str, bool] = {}  # fact key -> needs re-index
    active = any(pending_activity(usage.get((ns.semantic, i.key))) for i in facts)
    active = active or any(pending_activity(usage.get((ns.episodes, i.key))) for i in episodes)

    def current(key: str) -> bool:
        v = values[key]
        return v.get("status", "active") == "active" and "enc" not in v

    # 1. utility folds (and the decay of unused facts while the user was active)
    increments: list[Increment] = []
    utility_now: dict[str, float] = {}
    for item in facts:
        if "utility" not in item.value or item.value.get("status") == "superseded":
            continue
        record = usage.get((ns.semantic, item.key)) or {}
        unused = active and not pending_activity(record)
        add = fold_increments(float(item.value["utility"]), record, policy.utility, unused=unused)
        after = dict(record)
        for name, amount in add.items():
            after[name] = float(after.get(name, 0) or 0) + amount
        utility_now[item.key] = current_utility(float(item.value["utility"]), after)
        if add:
            increments.append((usage_namespace(ns.semantic), item.key, add))
            if unused:
                report.decayed += 1
            else:
                report.folded += 1

    # 2-3. clusters of related current facts: merge duplicates, flag contradictions
    views = [
        FactView(k, str(v.get("text", "")), str(v.get("category", "general")))
        for k, v in values.items()
        if current(k)
    ]
    for cluster in fact_clusters(views, policy.cluster_threshold, policy.max_cluster):
        mark = signature(cluster)
        if mark in judged:
            continue
        verdict: FactVerdict = yield JudgeFacts(judge, cluster)
        report.judge_calls += 1
        judged.append(mark)
        members = {f.key for f in cluster}
        for group in verdict.duplicates:
            keys = [k for k in dict.fromkeys(group) if k in members and current(k)]
            if len(keys) < 2:
                continue
            keep, *others = sorted(keys, key=lambda k: _strength(values[k]))
            for other in others:
                values[keep] = _merge(values[keep], values[other], stamp)
                values[other] = _close(values[other], stamp, keep)
                changed[keep] = changed.get(keep, False)
                changed[other] = False
                report.merged.append((keep, other))
        for old, new in verdict.contradictions:
            if old not in members or new not in members or not (current(old) and current(new)):
                continue
            if str(values[old].get("created_at")) > str(values[new].get("created_at")):
                old, new = new, old
            values[new] = {
                **values[new],
                "status": "pending_confirmation",
                "supersedes": old,
                "updated_at": stamp,
            }
            changed[new] = changed.get(new, False)
            report.flagged.append((old, new))

    # 4. episode clusters -> one summary fact each (a rerun finds it and skips the judge)
    new_facts: list[PutOp] = []
    for topic, cluster_items in episode_clusters(episodes, policy.min_episodes):
        sources = [i.key for i in cluster_items]
        key = str(uuid.uuid5(_SUMMARY_ROOT, "|".join([*ns.semantic, topic])))
        existing = values.get(key)
        if existing is not None and list(existing.get("source_message_ids", [])) == sources:
            continue
        text = yield Summarize(
            judge,
            [
                EpisodeView(
                    i.key, str(i.value.get("summary", "")), tuple(i.value.get("topics", []))
                )
                for i in cluster_items
            ],
        )
        report.judge_calls += 1
        if not text:
            continue
        summary = {
            **(existing or {}),
            "kind": "semantic",
            "text": text,
            "category": "general",
            "tags": ["summary", topic][:20],
            "confidence": 0.8,
            "source": "conversation",
            "source_message_ids": sources,
            "evidence": f"Summary of {len(sources)} conversations about {topic}",
            "status": "active",
            "layer": "long_term",
            "updated_at": stamp,
        }
        summary.setdefault("created_at", stamp)
        summary.setdefault("observed_at", stamp)  # when it holds: unknown (open-ended)
        values[key] = summary
        changed[key] = True
        report.summaries.append(key)

    # 5. retire facts whose utility decayed away (never what the user stated)
    for key, utility in utility_now.items():
        value = values[key]
        if current(key) and value.get("source") != "manual" and utility < policy.retire_below:
            values[key] = _close(value, stamp, None)
            changed[key] = False
            report.retired.append(key)

    # 6. promotions by effectiveness (facts and episodes)
    episode_puts: list[PutOp] = []
    for item in facts:
        value = values[item.key]
        if value.get("status") == "superseded":
            continue
        layer = policy.layers.promoted(value, usage.get((ns.semantic, item.key)))
        if layer is not None:
            values[item.key] = {**value, "layer": layer}
            changed[item.key] = changed.get(item.key, False)
            report.promoted[item.key] = layer
    for item in episodes:
        layer = policy.layers.promoted(item.value, usage.get((ns.episodes, item.key)))
        if layer is not None:
            value = {**item.value, "layer": layer}
            episode_puts.append(
                memory_put(ns.episodes, item.key, value, reindex=False, layers=policy.layers)
            )
            report.promoted_episodes[item.key] = layer

    # memory_ops: a fact merged away or retired leaves the entity index (memory.writes)
    writes: list[StoreOp] = [
        op
        for k, reindex in changed.items()
        for op in memory_ops(ns.semantic, k, values[k], reindex=reindex, layers=policy.layers)
    ]
    writes += [*new_facts, *episode_puts]
    # Usage records whose memory is gone (its layer's TTL expired, or it was deleted), unless
    # written since the run began (a memory created meanwhile may already be in use).
    live = {(ns.semantic, STATE_KEY)}
    live |= {(ns.semantic, i.key) for i in facts} | {(ns.episodes, i.key) for i in episodes}
    for (space, key), found in records.items():
        if (space, key) not in live and found.updated_at < started:
            report.pruned_usage.append(key)
            writes.append(PutOp(usage_namespace(space), key, None))
    if report.judge_calls:
        state = {"judged": judged[-_MAX_JUDGED:], "last_run": stamp}
        writes.append(PutOp(usage_namespace(ns.semantic), STATE_KEY, state, index=False))
    if writes:
        yield Batch(writes)  # one atomic batch
    if increments:
        yield Increments(increments)
    annotate(
        merged=len(report.merged),
        flagged=len(report.flagged),
        summarized=len(report.summaries),
        retired=len(report.retired),
        judge_calls=report.judge_calls,
    )
    return report


def _resolve(
    user_id: str | None, config: Mapping[str, Any] | None, namespaces: MemoryNamespaces | None
) -> ResolvedNamespaces:
    configurable = dict((config or {}).get("configurable") or {})
    if user_id is not None:
        configurable["user_id"] = user_id
    return (namespaces or MemoryNamespaces()).resolve({"configurable": configurable})


def consolidate(
    store: BaseStore,
    *,
    user_id: str | None = None,
    config: Mapping[str, Any] | None = None,
    namespaces: MemoryNamespaces | None = None,
    judge: ClusterJudge | None = None,
    policy: ConsolidationPolicy | None = None,
    now: datetime | None = None,
) -> ConsolidationReport:
    """Run consolidation for one user now (by hand; the job queue runs it hourly).

    ``judge`` defaults to the offline rules; pass ``ModelJudge(model)`` for one model call
    per cluster.
    """
    ns = _resolve(user_id, config, namespaces)
    return run_steps(consolidation_plan(ns, judge=judge, policy=policy, now=now), store)


async def aconsolidate(
    store: BaseStore,
    *,
    user_id: str | None = None,
    config: Mapping[str, Any] | None = None,
    namespaces: MemoryNamespaces | None = None,
    judge: ClusterJudge | None = None,
    policy: ConsolidationPolicy | None = None,
    now: datetime | None = None,
) -> ConsolidationReport:
    """Async :func:`consolidate`."""
    ns = _resolve(user_id, config, namespaces)
    return await arun_steps(consolidation_plan(ns, judge=judge, policy=policy, now=now), store)
