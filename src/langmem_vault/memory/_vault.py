"""``MemoryVault``: a typed facade over any BaseStore for one user's memories.

Apps and surfaces call ``remember``/``recall``/``update``/``forget`` and the instruction and
episode helpers instead of hand-building namespaces and dicts. One vault is bound to one
user, given once to the constructor (``user_id`` or a run config): its methods take no user
id, so a bug cannot read or write someone else's memories. Every method has an async twin
(``aremember``, ``arecall``...) built on the same store plan.

The facade is split by job: the facts and recall here, the standing instructions
(``memory._vault_instructions``), the episodes (``memory._vault_episodes``), and what they
stand on, construction and the store-plan drivers (``memory._vault_base``).

>>> from langgraph.store.memory import InMemoryStore
>>> vault = MemoryVault(InMemoryStore(), user_id="u1")
>>> key = vault.remember("Prefers green tea", category="preference").key
>>> [m.value.text for m in vault.list()]
['Prefers green tea']
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import GetOp, Item, PutOp

from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._entities import Entity, Relation, mentioned_in
from langmem_vault.memory._models import (
    FactCategory,
    FactSource,
    MemoryLayer,
    SemanticFact,
    utcnow,
)
from langmem_vault.memory._recall.entity_branch import default_branches
from langmem_vault.memory._recall.fusion import BranchHit
from langmem_vault.memory._recall.recall_plan import recall_plan
from langmem_vault.memory._recall.recall_query import RecallQuery, unnamed_candidates
from langmem_vault.memory._recall.retrieval import scan_plan
from langmem_vault.memory._recall.scoring import as_datetime, balance_categories
from langmem_vault.memory._recall.usage import read_usage_plan, usage_namespace, with_usage
from langmem_vault.memory._sealing import open_value
from langmem_vault.memory._vault_base import Memory
from langmem_vault.memory._vault_episodes import VaultEpisodes
from langmem_vault.memory._vault_instructions import VaultInstructions
from langmem_vault.store._entities import LinkOp
from langmem_vault.store._mirrors import runs_mirror_search
from langmem_vault.store._pages import PageOp, runs_pages

__all__ = ["Memory", "MemoryVault", "Recalled"]

_EPOCH = datetime.min.replace(tzinfo=UTC)
_List = builtins.list


@dataclass(frozen=True)
class Recalled(Memory[SemanticFact]):
    """A fact :meth:`MemoryVault.recall` returns: ``score`` ranks it (the fused score blended
    with confidence, recency and utility); ``fused`` is its reciprocal-rank-fusion score and
    ``parts`` each branch's hit (``vector``, ``keyword``, ``thread``...: its rank there,
    from 1, and that branch's own score). A branch that did not find it is absent."""

    fused: float = 0.0
    parts: Mapping[str, BranchHit] = field(default_factory=dict)


class MemoryVault(VaultInstructions, VaultEpisodes):
    """One user's semantic facts, standing instructions and episodes in a BaseStore.

    ``config`` is a run config (``{"configurable": {"user_id": ...}}``) used to fill the
    namespace templates; ``user_id`` is a shortcut for the common case. ``entity_finder``
    (for example :func:`langmem_vault.offline.find_entities`, spaCy) names the entities
    of each fact remembered without explicit ``entities`` (see ``memory._entities``).
    """

    # -- semantic facts ------------------------------------------------------------------

    def _remember_plan(
        self,
        text: str,
        category: FactCategory,
        tags: Sequence[str],
        confidence: float,
        source: FactSource,
        private: bool,
        evidence: str | None,
        layer: MemoryLayer,
        thread_id: str | None,
        connections: tuple[Sequence[Entity], Sequence[Relation]],
        when: tuple[datetime | None, datetime | None, datetime | None],
    ) -> StorePlan[Memory[SemanticFact]]:
        # validated here, before any store step: nothing is written when a field is invalid
        (entities, relations), (observed_at, valid_from, valid_to) = connections, when
        fact = SemanticFact(
            text=text,
            category=category,
            tags=list(tags),
            confidence=confidence,
            source=source,
            private=private,
            evidence=evidence,
            layer=layer,
            source_thread_id=thread_id,
            entities=list(entities),
            relations=list(relations),
            observed_at=observed_at or utcnow(),
            valid_from=valid_from,
            valid_to=valid_to,
        )
        key = str(uuid.uuid4())
        fact = yield from self._find(fact)
        yield Batch(self._put(self.ns.semantic, key, fact))
        return Memory(key, fact)

    def _open(self, key: str, value: Any, usage: Mapping[str, Any] | None = None) -> SemanticFact:
        # Sealing covers text and evidence only; the counters stay in clear either way.
        opened = open_value(value, self.keyring, self.ns.semantic, key)
        return SemanticFact.from_store(with_usage(opened, usage))

    def remember(
        self,
        text: str,
        *,
        category: FactCategory = "general",
        tags: Sequence[str] = (),
        confidence: float = 1.0,
        source: FactSource = "manual",
        private: bool = False,
        evidence: str | None = None,
        layer: MemoryLayer = "long_term",
        thread_id: str | None = None,
        entities: Sequence[Entity] = (),
        relations: Sequence[Relation] = (),
        observed_at: datetime | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
    ) -> Memory[SemanticFact]:
        """Store a fact (validated first; nothing is written when a field is invalid).

        A fact the user or the app states is long-term at once. ``layer="short_term"`` with
        ``thread_id`` keeps a session note for 2 hours, ranked at full weight in that thread
        only (see :mod:`langmem_vault.memory._layers`).

        ``observed_at`` is when it was said (default: now; a session date for an imported
        conversation), ``valid_from``/``valid_to`` when it holds in the world (default:
        unknown, open-ended); see docs/time.md.

        >>> from langgraph.store.memory import InMemoryStore
        >>> MemoryVault(InMemoryStore(), user_id="u").remember("Likes jazz").value.layer
        'long_term'

        ``entities`` and ``relations`` name who and what the fact is about (else the vault's
        ``entity_finder`` does, when it has one); the store's entity index links them to
        it (``memory.recall.expansion`` reads them).
        """
        plan = self._remember_plan(
            text, category, tags, confidence, source, private, evidence, layer, thread_id,
            (entities, relations), (observed_at, valid_from, valid_to),
        )  # fmt: skip
        return self._run(plan)

    async def aremember(
        self,
        text: str,
        *,
        category: FactCategory = "general",
        tags: Sequence[str] = (),
        confidence: float = 1.0,
        source: FactSource = "manual",
        private: bool = False,
        evidence: str | None = None,
        layer: MemoryLayer = "long_term",
        thread_id: str | None = None,
        entities: Sequence[Entity] = (),
        relations: Sequence[Relation] = (),
        observed_at: datetime | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
    ) -> Memory[SemanticFact]:
        """Async :meth:`remember`."""
        plan = self._remember_plan(
            text, category, tags, confidence, source, private, evidence, layer, thread_id,
            (entities, relations), (observed_at, valid_from, valid_to),
        )  # fmt: skip
        return await self._arun(plan)

    def _recall_plan(
        self,
        query: str | None,
        limit: int,
        as_of: datetime | None,
        categories: Sequence[str] | None,
        include_pending: bool,
        candidates: int,
    ) -> StorePlan[_List[Recalled]]:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if candidates < 1:
            raise ValueError(f"candidates must be at least 1, got {candidates}")
        if as_of is not None and as_of.tzinfo is None:
            raise ValueError(f"as_of must be timezone-aware, got {as_of!r}")
        request = RecallQuery(
            self.ns.semantic,
            query or None,
            as_of=as_of,
            candidates=max(candidates, limit),
            joined_usage=runs_mirror_search(self.store),
            unnamed=unnamed_candidates(max(candidates, limit)),
        )
        scored = yield from recall_plan(
            request,
            utcnow(),
            weights=self.weights,
            include_pending=include_pending,
            branches=default_branches(self.store),
        )
        if categories is not None:
            wanted = set(categories)
            scored = [m for m in scored if m.category in wanted]
        picked = balance_categories(scored, limit)
        return [
            Recalled(m.key, self._open(m.key, dict(m.value)), m.score, m.fused or 0.0, m.parts)
            for m in picked
        ]

    def recall(
        self,
        query: str | None = None,
        *,
        limit: int = 10,
        as_of: datetime | None = None,
        categories: Sequence[str] | None = None,
        include_pending: bool = False,
        candidates: int = 300,
    ) -> _List[Recalled]:
        """The facts that answer ``query`` best (or the most useful overall), best first,
        each with its score parts.

        One store round trip on VaultStore: the hybrid search's ``candidates`` (with each
        one's vector and keyword score and usage record; for a question that names someone,
        a second search in the same batch for it without the names, a third as many),
        ranked by reciprocal rank fusion of the branches (vector, keyword, thread, time,
        instances, shared, feedback, neighbour, and entity on VaultStore; see
        :mod:`langmem_vault.memory._recall.recall_plan`). The fused score stands in for
        search relevance in the usual blend with confidence x 0.7 + recency x 0.3 and
        utility, with category balance. ``as_of`` (an aware datetime) asks what held
        then: facts valid at that moment, superseded since or not.

        >>> from datetime import datetime, UTC
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_vault.embeddings import default_index
        >>> vault = MemoryVault(InMemoryStore(index=default_index()), user_id="u1")
        >>> lyon = vault.remember("Lives in Lyon").key
        >>> _ = vault.remember("Plays chess on Sundays")
        >>> best = vault.recall("which city does the user live in", limit=1)[0]
        >>> best.key == lyon, best.parts["vector"].rank
        (True, 1)
        >>> vault.recall("where", as_of=datetime(2000, 1, 1, tzinfo=UTC))
        []
        """
        plan = self._recall_plan(query, limit, as_of, categories, include_pending, candidates)
        return self._run(plan)

    async def arecall(
        self,
        query: str | None = None,
        *,
        limit: int = 10,
        as_of: datetime | None = None,
        categories: Sequence[str] | None = None,
        include_pending: bool = False,
        candidates: int = 300,
    ) -> _List[Recalled]:
        """Async :meth:`recall`."""
        plan = self._recall_plan(query, limit, as_of, categories, include_pending, candidates)
        return await self._arun(plan)

    def _list_plan(
        self, status: str | None, category: str | None, limit: int, offset: int
    ) -> StorePlan[_List[Memory[SemanticFact]]]:
        filt: dict[str, Any] = {}
        if status is not None:
            filt["status"] = status
        if category is not None:
            filt["category"] = category
        if limit < 1 or offset < 0:
            raise ValueError(f"limit must be >= 1 and offset >= 0, got {limit} and {offset}")
        if runs_pages(self.store):
            # VaultStore cuts the page in SQL, on its (namespace, creation time, key) index.
            op: Any = PageOp((self.ns.semantic,), limit, offset=offset, newest_first=False)
            (found,) = yield Batch([op._replace(filter=filt or None)])
            page = found.items
        else:
            # Any other store's search has no order to page by: read every match and sort
            # by the fact's creation time before cutting.
            items = yield from scan_plan(self.ns.semantic, filt or None)
            items.sort(key=lambda i: (as_datetime(i.value.get("created_at")) or _EPOCH, i.key))
            page = items[offset : offset + limit]
        usage = yield from read_usage_plan((tuple(i.namespace), i.key) for i in page)
        return [
            Memory(i.key, self._open(i.key, i.value, usage.get((tuple(i.namespace), i.key))))
            for i in page
        ]

    def list(
        self,
        *,
        status: str | None = "active",
        category: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> _List[Memory[SemanticFact]]:
        """Stored facts (``status=None``: all, including pending and superseded), oldest first
        by their own creation time (on VaultStore each page is one index walk)."""
        return self._run(self._list_plan(status, category, limit, offset))

    async def alist(
        self,
        *,
        status: str | None = "active",
        category: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> _List[Memory[SemanticFact]]:
        """Async :meth:`list`."""
        return await self._arun(self._list_plan(status, category, limit, offset))

    def _get_plan(self, key: str) -> StorePlan[Memory[SemanticFact] | None]:
        item, usage = yield Batch(
            [
                GetOp(self.ns.semantic, key),
                GetOp(usage_namespace(self.ns.semantic), key, refresh_ttl=False),
            ]
        )
        if not isinstance(item, Item):
            return None
        return Memory(key, self._open(key, item.value, usage.value if usage else None))

    def get(self, key: str) -> Memory[SemanticFact] | None:
        """One fact by key, or None."""
        return self._run(self._get_plan(key))

    async def aget(self, key: str) -> Memory[SemanticFact] | None:
        """Async :meth:`get`."""
        return await self._arun(self._get_plan(key))

    def _update_plan(self, key: str, changes: Mapping[str, Any]) -> StorePlan[Memory[SemanticFact]]:
        (item,) = yield Batch([GetOp(self.ns.semantic, key)])
        if not isinstance(item, Item):
            raise KeyError(f"no fact with key {key!r} for user {self.user_id!r}")
        unknown = set(changes) - set(SemanticFact.model_fields)
        if unknown:
            raise ValueError(f"unknown fact field(s): {sorted(unknown)}")
        old = self._open(key, item.value)
        # model_validate (not model_copy) so every changed field is validated before writing.
        new = SemanticFact.model_validate({**old.model_dump(), **changes, "updated_at": utcnow()})
        # Re-index only when what the index holds may change (text, privacy, status).
        reindex = any(getattr(old, f) != getattr(new, f) for f in ("text", "private", "status"))
        relink = new.text != old.text or bool({"entities", "relations"} & set(changes))
        if new.text != old.text and "entities" not in changes:
            # found again in the new text, else the old ones it still names
            kept, rels = mentioned_in(new.text, new.entities, new.relations)
            if self.entity_finder is not None:
                kept, rels = [], []
            new = yield from self._find(
                new.model_copy(update={"entities": kept, "relations": rels})
            )
        yield Batch(self._put(self.ns.semantic, key, new, reindex=reindex, relink=relink))
        return Memory(key, new)

    def update(self, key: str, **changes: Any) -> Memory[SemanticFact]:
        """Change fields of a fact (validated; ``KeyError`` if it does not exist).

        >>> from langgraph.store.memory import InMemoryStore
        >>> v = MemoryVault(InMemoryStore(), user_id="u")
        >>> k = v.remember("Likes jazz").key
        >>> v.update(k, confidence=0.5).value.confidence
        0.5
        """
        return self._run(self._update_plan(key, changes))

    async def aupdate(self, key: str, **changes: Any) -> Memory[SemanticFact]:
        """Async :meth:`update`."""
        return await self._arun(self._update_plan(key, changes))

    def _confirm_plan(self, key: str) -> StorePlan[Memory[SemanticFact]]:
        (item,) = yield Batch([GetOp(self.ns.semantic, key)])
        if not isinstance(item, Item):
            raise KeyError(f"no fact with key {key!r} for user {self.user_id!r}")
        now = utcnow()
        fact = self._open(key, item.value)
        # The user vouched for it: long-term at once (the rewrite clears its expiry).
        confirmed = fact.model_copy(
            update={"status": "active", "updated_at": now, "layer": "long_term"}
        )
        ops = self._put(self.ns.semantic, key, confirmed)
        # A pending fact that contradicts an older one closes it only once confirmed.
        if fact.supersedes:
            (old_item,) = yield Batch([GetOp(self.ns.semantic, fact.supersedes)])
            if isinstance(old_item, Item):
                old = self._open(fact.supersedes, old_item.value)
                if old.status != "superseded":
                    closed = old.closed(fact.start(), by=key, now=now)
                    ops += self._put(self.ns.semantic, fact.supersedes, closed, reindex=False)
        yield Batch(ops)
        return Memory(key, confirmed)

    def confirm(self, key: str) -> Memory[SemanticFact]:
        """Confirm a fact: it becomes active and long-term (and closes the fact it supersedes)."""
        return self._run(self._confirm_plan(key))

    async def aconfirm(self, key: str) -> Memory[SemanticFact]:
        """Async :meth:`confirm`."""
        return await self._arun(self._confirm_plan(key))

    def _forget_plan(self, key: str, hard: bool) -> StorePlan[bool]:
        (item,) = yield Batch([GetOp(self.ns.semantic, key)])
        if not isinstance(item, Item):
            return False
        if hard:
            yield Batch(
                [
                    PutOp(self.ns.semantic, key, None),
                    PutOp(usage_namespace(self.ns.semantic), key, None),
                    # its entities go too when no other fact names them
                    LinkOp(self.ns.semantic, key),
                ]
            )
            return True
        now = utcnow()
        closed = self._open(key, item.value).closed(now, now=now)
        yield Batch(self._put(self.ns.semantic, key, closed, reindex=False))
        return True

    def forget(self, key: str, *, hard: bool = False) -> bool:
        """Retire a fact. By default it is closed (kept for history, never injected again);
        ``hard=True`` erases it from the store. Returns False if there was no such fact."""
        return self._run(self._forget_plan(key, hard))

    async def aforget(self, key: str, *, hard: bool = False) -> bool:
        """Async :meth:`forget`."""
        return await self._arun(self._forget_plan(key, hard))
