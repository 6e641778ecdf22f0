"""Reconcile: apply what extract proposes to the store, deterministically, in one batch.

Rules (no model decides anything here):

- **same fact again** (``same_as`` a stored key, or a stored current fact whose text matches
  or whose search score reaches ``similarity_threshold``): the stored fact's confidence rises
  (``1 - (1 - old) x (1 - new)``, capped at 0.99) instead of a duplicate being written; a
  pending fact that reaches ``confirm_threshold`` this way becomes active;
- **contradiction** (``supersedes`` a stored key): the new fact is written and the old one is
  closed (``valid_to`` the new fact's start: its ``valid_from``, else when it was said;
  status ``superseded``, ``superseded_by`` the new key); both are kept. A new fact below
  the threshold waits as pending and closes the old one only when confirmed
  (``MemoryVault.confirm``), so a shaky guess never retires a solid fact;
- **below ``confirm_threshold``** (default 0.8): stored as ``pending_confirmation``;
- **layers** (:mod:`langmem_vault.memory._layers`): a new fact starts working (7 days), or
  short-term (2 hours) below ``LayerPolicy.short_term_below`` confidence; a conversation's
  episode is working; each repetition counts toward promotion (long-term: no expiry);
- nothing is ever hard-deleted (expiry is the store's TTL of the layer).

All reads go in one ``batch``, all writes in a second one (atomic on VaultStore). Re-applying
the same extraction (same ``message_ids``) changes nothing: new memories get keys derived from
the span and reinforcement skips facts that already cite those messages.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.memory._models import Extraction, ProposedFact
>>> store = InMemoryStore()
>>> report = apply_extraction(
...     store,
...     Extraction(facts=[ProposedFact(text="Lives in Lyon", confidence=0.9)]),
...     config={"configurable": {"user_id": "u1"}},
... )
>>> len(report.added)
1
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, SearchOp

from langmem_vault.db._steps import arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StoreOp, StorePlan
from langmem_vault.memory._entities import norm_name
from langmem_vault.memory._layers import DEFAULT_LAYERS, LayerPolicy
from langmem_vault.memory._models import (
    Episode,
    Extraction,
    FactStatus,
    Instruction,
    ProposedFact,
    SemanticFact,
    utcnow,
)
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces
from langmem_vault.memory._sealing import default_keyring
from langmem_vault.memory._writes import memory_ops
from langmem_vault.telemetry._tracing import annotate

__all__ = [
    "ReconcileReport",
    "aapply_extraction",
    "apply_extraction",
    "reconcile_plan",
]

MAX_CONFIDENCE = 0.99
MAX_SOURCE_IDS = 50
_KEY_ROOT = uuid.UUID("6f1c7a52-3f0e-4d55-9a53-6c1b0d1e7a10")


@dataclass
class ReconcileReport:
    """What one reconcile changed (store keys)."""

    added: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    instructions: list[str] = field(default_factory=list)
    episode: str | None = None
    skipped: list[str] = field(default_factory=list)
    #: what consent refused before reconcile (reasons, never text): see extraction.apply
    dropped: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether anything was written."""
        return bool(
            self.added
            or self.pending
            or self.reinforced
            or self.superseded
            or self.instructions
            or self.episode
        )


def _norm(text: str) -> str:
    return " ".join(text.lower().replace(".", " ").split())


def _key_maker(extraction: Extraction) -> Any:
    # Deterministic keys for a span make a retried job rewrite the same items, not add twins.
    if not extraction.message_ids:
        return lambda label: str(uuid.uuid4())
    span = uuid.uuid5(_KEY_ROOT, f"{extraction.thread_id}|{','.join(extraction.message_ids)}")
    return lambda label: str(uuid.uuid5(span, label))


def _put(
    ns: tuple[str, ...],
    key: str,
    value: SemanticFact | Episode | Instruction,
    *,
    index: bool,
    layers: LayerPolicy = DEFAULT_LAYERS,
) -> list[StoreOp]:
    # Private facts are sealed when a key is configured ($LANGMEM_VAULT_KEY) and never
    # indexed; the entities a fact names are linked in the same batch (memory.writes).
    return memory_ops(ns, key, value, keyring=default_keyring(), reindex=index, layers=layers)


@dataclass
class _Ctx:
    ns: ResolvedNamespaces
    extraction: Extraction
    now: datetime
    similarity: float
    confirm: float
    layers: LayerPolicy
    facts: dict[str, SemanticFact]  # every stored fact we read, by key, as we change it
    dirty: dict[str, bool] = field(default_factory=dict)  # key -> needs re-index
    closures: list[tuple[str, str]] = field(default_factory=list)  # (old key, new key)
    report: ReconcileReport = field(default_factory=ReconcileReport)

    @property
    def observed(self) -> datetime:
        """When the span was said (the extraction's ``observed_at``), else now."""
        return self.extraction.observed_at or self.now

    def touch(self, key: str, fact: SemanticFact, *, index: bool = False) -> None:
        self.facts[key] = fact
        self.dirty[key] = self.dirty.get(key, False) or index

    def cites_span(self, fact: SemanticFact) -> bool:
        ids = set(self.extraction.message_ids)
        return bool(ids) and ids.issubset(fact.source_message_ids)


def _close(ctx: _Ctx, old_key: str, new_key: str) -> None:
    old = ctx.facts[old_key]
    if old.status == "superseded":
        return
    # The old fact held until the new one began ("I moved to Lyon in 2021": Porto until 2021).
    ctx.touch(old_key, old.closed(ctx.facts[new_key].start(), by=new_key, now=ctx.now))
    ctx.report.superseded.append(old_key)


def _reinforce(ctx: _Ctx, key: str, proposal: ProposedFact) -> None:
    fact = ctx.facts[key]
    if ctx.cites_span(fact):  # this span was already counted (a retried job)
        ctx.report.skipped.append(proposal.text)
        return
    confidence = min(MAX_CONFIDENCE, 1 - (1 - fact.confidence) * (1 - proposal.confidence))
    confidence = max(confidence, fact.confidence)
    ids = [*fact.source_message_ids, *ctx.extraction.message_ids][-MAX_SOURCE_IDS:]
    update: dict[str, Any] = {
        "confidence": round(confidence, 6),
        "mentions": fact.mentions + 1,
        "updated_at": ctx.now,
        "source_message_ids": list(dict.fromkeys(ids)),
        "tags": list(dict.fromkeys([*fact.tags, *proposal.tags]))[:20],
        "evidence": fact.evidence or proposal.evidence,
        # what this saying names that the stored fact did not (a model may name more)
        "entities": list(
            {norm_name(e.name): e for e in [*proposal.entities, *fact.entities]}.values()
        )[:20],
        "relations": list(
            {
                (r.subject, r.predicate, r.object): r
                for r in [*fact.relations, *proposal.relations]
            }.values()
        )[:20],
    }
    promoted = fact.status == "pending_confirmation" and confidence >= ctx.confirm
    if promoted:
        update["status"] = "active"
    # Repetition is evidence: it may move the fact up a layer (and off its expiry).
    layer = ctx.layers.promoted({**fact.model_dump(), "mentions": fact.mentions + 1}, None)
    if layer is not None:
        update["layer"] = layer
    # index=True: a rewrite without re-indexing would drop the fact from search on VaultStore.
    ctx.touch(key, SemanticFact.model_validate({**fact.model_dump(), **update}), index=True)
    ctx.report.reinforced.append(key)
    if promoted:
        ctx.report.confirmed.append(key)
        if fact.supersedes:
            ctx.closures.append((fact.supersedes, key))


def _similar(ctx: _Ctx, proposal: ProposedFact, hits: Sequence[Any], skip: set[str]) -> str | None:
    target = _norm(proposal.text)
    for hit in hits:
        fact = ctx.facts.get(hit.key)
        if fact is None or hit.key in skip or fact.status == "superseded":
            continue
        score = getattr(hit, "score", None)
        if _norm(fact.text) == target or (score is not None and score >= ctx.similarity):
            return str(hit.key)
    return None


def _new_fact(ctx: _Ctx, key: str, proposal: ProposedFact, supersedes: str | None) -> None:
    status: FactStatus = "active" if proposal.confidence >= ctx.confirm else "pending_confirmation"
    fact = SemanticFact(
        text=proposal.text,
        category=proposal.category,
        tags=proposal.tags,
        confidence=proposal.confidence,
        source="conversation",
        source_thread_id=ctx.extraction.thread_id,
        source_message_ids=ctx.extraction.message_ids[-MAX_SOURCE_IDS:],
        evidence=proposal.evidence,
        created_at=ctx.now,
        updated_at=ctx.now,
        observed_at=ctx.observed,
        valid_from=proposal.valid_from,
        valid_to=proposal.valid_to,
        status=status,
        private=proposal.private,
        supersedes=supersedes,
        layer=ctx.layers.initial(proposal.confidence),
        entities=proposal.entities,
        relations=proposal.relations,
    )
    ctx.touch(key, fact, index=True)
    (ctx.report.added if status == "active" else ctx.report.pending).append(key)
    if supersedes is not None and status == "active":
        ctx.closures.append((supersedes, key))


def reconcile_plan(
    extraction: Extraction,
    ns: ResolvedNamespaces,
    *,
    similarity_threshold: float = 0.9,
    confirm_threshold: float = 0.8,
    now: datetime | None = None,
    layers: LayerPolicy = DEFAULT_LAYERS,
) -> StorePlan[ReconcileReport]:
    """The reads, decisions and single write batch of one reconcile (driven sync or async)."""
    make_key = _key_maker(extraction)
    referenced = sorted(
        {k for p in extraction.facts for k in (p.same_as, p.supersedes) if k is not None}
    )
    reads: list[Any] = [GetOp(ns.semantic, key, refresh_ttl=False) for key in referenced]
    reads += [
        SearchOp(ns.semantic, query=p.text, limit=5, refresh_ttl=False) for p in extraction.facts
    ]
    reads.append(SearchOp(ns.instructions, filter={"active": True}, limit=200, refresh_ttl=False))
    results = yield Batch(reads)
    got, searches, instruction_items = (
        results[: len(referenced)],
        results[len(referenced) : -1],
        results[-1],
    )
    ctx = _Ctx(
        ns=ns,
        extraction=extraction,
        now=now or utcnow(),
        similarity=similarity_threshold,
        confirm=confirm_threshold,
        layers=layers,
        facts={},
    )
    for item in [*got, *(hit for hits in searches for hit in hits)]:
        if isinstance(item, Item) and item.key not in ctx.facts:
            if "enc" in item.value:
                continue  # sealed (private): reconcile never rewrites what it cannot read
            try:
                ctx.facts[item.key] = SemanticFact.from_store(item.value)
            except ValueError:
                continue  # a value that no longer validates is left alone
    ctx.dirty.clear()

    new_keys: set[str] = set()
    for index, (proposal, hits) in enumerate(zip(extraction.facts, searches, strict=True)):
        same = proposal.same_as if proposal.same_as in ctx.facts else None
        if same is not None and ctx.facts[same].status == "superseded":
            same = None  # repeating a closed fact re-states it as new
        old = proposal.supersedes if proposal.supersedes in ctx.facts else None
        if same is None and old is None:
            same = _similar(ctx, proposal, hits, skip=set())
        if same is None:  # also catch twins inside this extraction
            target = _norm(proposal.text)
            same = next((k for k in new_keys if _norm(ctx.facts[k].text) == target), None)
        if same is not None:
            _reinforce(ctx, same, proposal)
            continue
        key = make_key(f"fact:{index}")
        if key in ctx.facts:  # written by an earlier run of this very span
            ctx.report.skipped.append(proposal.text)
            continue
        _new_fact(ctx, key, proposal, old)
        new_keys.add(key)

    # A pending fact promoted by this span closes the fact it supersedes; read it if needed.
    missing = sorted({old for old, _ in ctx.closures if old not in ctx.facts})
    if missing:
        loaded = yield Batch([GetOp(ns.semantic, key, refresh_ttl=False) for key in missing])
        for item in loaded:
            if isinstance(item, Item) and "enc" not in item.value:
                ctx.facts[item.key] = SemanticFact.from_store(item.value)
    for old, new in ctx.closures:
        if old in ctx.facts:
            _close(ctx, old, new)

    writes: list[StoreOp] = [
        op
        for key, reindex in ctx.dirty.items()
        for op in _put(ns.semantic, key, ctx.facts[key], index=reindex, layers=layers)
    ]
    existing = {_norm(str(i.value.get("text", ""))) for i in instruction_items}
    for index, proposed in enumerate(extraction.instructions):
        if _norm(proposed.text) in existing:
            ctx.report.skipped.append(proposed.text)
            continue
        existing.add(_norm(proposed.text))
        key = make_key(f"instruction:{index}")
        instruction = Instruction(
            text=proposed.text,
            priority=proposed.priority,
            condition=proposed.condition,
            source="conversation",
            source_thread_id=extraction.thread_id,
            created_at=ctx.now,
            updated_at=ctx.now,
        )
        writes += _put(ns.instructions, key, instruction, index=True)
        ctx.report.instructions.append(key)
    if extraction.episode is not None:
        key = make_key("episode")
        started = extraction.started_at or ctx.now
        episode = Episode(
            summary=extraction.episode.summary,
            importance=extraction.episode.importance,
            outcome=extraction.episode.outcome,
            topics=extraction.episode.topics,
            thread_id=extraction.thread_id,
            started_at=started,
            ended_at=max(extraction.ended_at or ctx.now, started),
            source="conversation",
            source_message_ids=extraction.message_ids[-MAX_SOURCE_IDS:],
            created_at=ctx.now,
            observed_at=ctx.observed,
            layer="working",
        )
        writes += _put(ns.episodes, key, episode, index=True, layers=layers)
        ctx.report.episode = key
    if writes:
        yield Batch(writes)  # the one atomic write
    report = ctx.report
    annotate(
        extracted=len(report.added) + len(report.pending) + len(report.instructions),
        reinforced=len(report.reinforced),
        superseded=len(report.superseded),
    )
    return report


def _namespaces(
    config: Mapping[str, Any] | None,
    namespaces: MemoryNamespaces | ResolvedNamespaces | None,
) -> ResolvedNamespaces:
    if isinstance(namespaces, ResolvedNamespaces):
        return namespaces
    return (namespaces or MemoryNamespaces()).resolve(config)


def apply_extraction(
    store: BaseStore,
    extraction: Extraction | Mapping[str, Any],
    *,
    config: Mapping[str, Any] | None = None,
    namespaces: MemoryNamespaces | ResolvedNamespaces | None = None,
    similarity_threshold: float = 0.9,
    confirm_threshold: float = 0.8,
    now: datetime | None = None,
    layers: LayerPolicy = DEFAULT_LAYERS,
) -> ReconcileReport:
    """Apply an extraction to ``store`` (see the module docstring for the rules).

    ``namespaces`` may be already resolved; otherwise the templates are filled from
    ``config["configurable"]``. An invalid extraction raises before anything is written.
    """
    checked = Extraction.model_validate(extraction)
    plan = reconcile_plan(
        checked,
        _namespaces(config, namespaces),
        similarity_threshold=similarity_threshold,
        confirm_threshold=confirm_threshold,
        now=now,
        layers=layers,
    )
    return run_steps(plan, store)


async def aapply_extraction(
    store: BaseStore,
    extraction: Extraction | Mapping[str, Any],
    *,
    config: Mapping[str, Any] | None = None,
    namespaces: MemoryNamespaces | ResolvedNamespaces | None = None,
    similarity_threshold: float = 0.9,
    confirm_threshold: float = 0.8,
    now: datetime | None = None,
    layers: LayerPolicy = DEFAULT_LAYERS,
) -> ReconcileReport:
    """Async :func:`apply_extraction`."""
    checked = Extraction.model_validate(extraction)
    plan = reconcile_plan(
        checked,
        _namespaces(config, namespaces),
        similarity_threshold=similarity_threshold,
        confirm_threshold=confirm_threshold,
        now=now,
        layers=layers,
    )
    return await arun_steps(plan, store)
