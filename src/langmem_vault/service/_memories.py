"""Memories: list, search, show, add, edit, forget, restore, confirm, reject.

Reads go through the store's plans (scan, search), writes through the
:class:`~langmem_vault.memory._vault.MemoryVault` facade where it has the operation (remember,
update, confirm, forget) and through the memory write rule (``memory_put``) otherwise, so
private facts stay sealed and unindexed whichever path wrote them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.store.base import GetOp, Item, PutOp, SearchOp
from pydantic import ValidationError

from langmem_vault.db._steps import Call, Steps, Within
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._models import Episode, Instruction, MemoryModel, SemanticFact, utcnow
from langmem_vault.memory._recall.retrieval import scan_plan
from langmem_vault.memory._recall.usage import read_usage_plan, usage_namespace, with_usage
from langmem_vault.memory._sealing import open_or_mark
from langmem_vault.memory._writes import memory_put
from langmem_vault.service._base import ServiceBase
from langmem_vault.service._errors import InvalidInput, NotFound, from_validation
from langmem_vault.service._listing import (
    counts_plan,
    decode_cursor,
    encode_cursor,
    listing_plan,
)
from langmem_vault.service._records import (
    KINDS,
    MatchType,
    MemoryPage,
    MemoryQuery,
    MemoryRecord,
    SearchHit,
    SearchResults,
    SearchType,
    StatusCounts,
    record_of,
)
from langmem_vault.store._pages import runs_pages

__all__ = ["MemoriesMixin"]

MODELS: dict[str, type[MemoryModel]] = {
    "semantic": SemanticFact,
    "instruction": Instruction,
    "episode": Episode,
}
#: fields an edit may not change: they are kept by the service, not chosen
FIXED_FIELDS = frozenset({"kind", "created_at", "updated_at"})
_WORD = re.compile(r"\w+")
MAX_QUERY = 2000


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1}


def text_relevance(query: str, text: str) -> float:
    """The share of the query's words found in ``text`` (0 when none).

    >>> text_relevance("green tea", "Prefers green tea in the morning")
    1.0
    """
    wanted = _words(query)
    return len(wanted & _words(text)) / len(wanted) if wanted else 0.0


def _writes(ops: list[PutOp]) -> StorePlan[None]:
    yield Batch(ops)  # one batch: atomic on VaultStore


class MemoriesMixin(ServiceBase):
    """The memory operations of :class:`~langmem_vault.service.MemoryService`."""

    # -- plans ----------------------------------------------------------------------------

    def _namespace(self, user_id: str, kind: str) -> tuple[str, ...]:
        ns = self._ns(user_id)
        return {"semantic": ns.semantic, "instruction": ns.instructions, "episode": ns.episodes}[
            kind
        ]

    def _open(self, namespace: tuple[str, ...], item: Item, usage: Any = None) -> dict[str, Any]:
        # An unreadable private memory is listed, marked, rather than failing the request.
        return with_usage(open_or_mark(item.value, self.keyring, namespace, item.key), usage)

    def _records_plan(
        self, user_id: str, kinds: Sequence[str] = KINDS
    ) -> StorePlan[tuple[list[MemoryRecord], bool]]:
        """The user's stored memories of ``kinds``, newest first, and whether there were more:
        at most ``max_rows`` of them are read and opened (the most recently updated), so no
        call costs more than that whatever the user holds."""
        now = utcnow()
        records: list[MemoryRecord] = []
        budget, truncated = self.max_rows, False
        for kind in kinds:
            namespace = self._namespace(user_id, kind)
            scanned = yield from scan_plan(namespace, limit=budget + 1)  # one more: any left?
            if len(scanned) > budget:
                scanned, truncated = scanned[:budget], True
            budget -= len(scanned)
            items = [i for i in scanned if i.namespace == namespace]
            usage = yield from read_usage_plan((namespace, i.key) for i in items)
            for item in items:
                value = self._open(namespace, item, usage.get((namespace, item.key)))
                records.append(record_of(kind, user_id, item.key, value, now))
        records.sort(key=lambda r: (r.created_at is not None, r.created_at, r.key), reverse=True)
        return records, truncated

    def _list_steps(self, user_id: str, query: MemoryQuery) -> Steps[MemoryPage]:
        kinds = [query.kind] if query.kind else list(KINDS)
        if query.category is not None:
            kinds = [k for k in kinds if k == "semantic"]
        if not kinds:
            return MemoryPage(total=0, limit=query.limit, offset=query.offset, items=[])
        if runs_pages(self.store):  # the page is cut in SQL (service/_listing.py)
            spaces = [(kind, self._namespace(user_id, kind)) for kind in kinds]
            plan = listing_plan(spaces, query, user_id, self._open, self.max_rows)
            return (yield Within(self.store, plan))  # type: ignore[no-any-return]
        records, truncated = yield Within(self.store, self._records_plan(user_id, kinds))
        matched = [r for r in records if query.matches(r)]
        if query.after is not None:
            at, key = decode_cursor(query.after)
            matched = [r for r in matched if r.created_at and (r.created_at, r.key) < (at, key)]
        page = matched[query.offset : query.offset + query.limit]
        more = len(matched) > query.offset + query.limit
        end = (page[-1].created_at, page[-1].key) if more and page[-1].created_at else None
        return MemoryPage(
            total=len(matched),
            limit=query.limit,
            offset=query.offset,
            items=page,
            truncated=truncated,
            next=None if end is None else encode_cursor(end),
        )

    def _count_steps(
        self, user_id: str, kind: str | None, category: str | None
    ) -> Steps[StatusCounts]:
        query = _query(None, {"kind": kind, "category": category})
        kinds = [query.kind] if query.kind else list(KINDS)
        if category is not None:
            kinds = [k for k in kinds if k == "semantic"]
        if runs_pages(self.store):  # one statement (service/_listing.py)
            spaces = [(kind, self._namespace(user_id, kind)) for kind in kinds]
            return (yield Within(self.store, counts_plan(spaces, category)))  # type: ignore[no-any-return]
        records, _ = yield Within(self.store, self._records_plan(user_id, kinds))
        exact: dict[str, int] = {}
        for r in records:
            if query.matches(r):
                exact[r.status] = exact.get(r.status, 0) + 1
        return StatusCounts.of(exact)

    def _find_plan(self, user_id: str, key: str) -> StorePlan[MemoryRecord]:
        """The memory with ``key`` in any of the user's three namespaces, or NotFound."""
        if not isinstance(key, str) or not key:
            raise InvalidInput("key", f"must be a non-empty string, got {key!r}")
        spaces = [(kind, self._namespace(user_id, kind)) for kind in KINDS]
        found = yield Batch([GetOp(ns, key) for _, ns in spaces])
        for (kind, ns), item in zip(spaces, found, strict=True):
            if isinstance(item, Item):
                usage = yield from read_usage_plan([(ns, key)])
                value = self._open(ns, item, usage.get((ns, key)))
                return record_of(kind, user_id, key, value, utcnow())
        raise NotFound("key", f"no memory {key!r} for user {user_id!r}")

    def _search_plan(
        self,
        user_id: str,
        text: str,
        search_type: SearchType,
        min_relevance: float,
        query: MemoryQuery,
    ) -> StorePlan[SearchResults]:
        kinds = [query.kind] if query.kind else list(KINDS)
        records, truncated = yield from self._records_plan(user_id, kinds)
        by_key = {r.key: r for r in records if query.matches(r)}
        semantic: dict[str, float] = {}
        if search_type != "text":
            ops = [
                SearchOp(self._namespace(user_id, k), query=text, limit=max(50, 3 * query.limit))
                for k in kinds
            ]
            for items in (yield Batch(ops)):
                for item in items:
                    if item.score is not None and item.key in by_key:
                        semantic[item.key] = max(0.0, min(1.0, float(item.score)))
        hits: list[SearchHit] = []
        for key, record in by_key.items():
            lexical = text_relevance(text, record.text) if search_type != "semantic" else 0.0
            sem = semantic.get(key)
            if lexical <= 0 and sem is None:
                continue
            match: MatchType = (
                "both" if lexical > 0 and sem is not None else "text" if lexical > 0 else "semantic"
            )
            relevance = max(lexical, sem or 0.0)
            if relevance >= min_relevance:
                hits.append(SearchHit(**record.model_dump(), relevance=relevance, match_type=match))
        hits.sort(key=lambda h: (-h.relevance, h.key))
        page = hits[query.offset : query.offset + query.limit]
        return SearchResults(query=text, search_type=search_type, items=page, truncated=truncated)

    def _edit_plan(
        self, user_id: str, record: MemoryRecord, changes: Mapping[str, Any]
    ) -> StorePlan[None]:
        """Validate and write an instruction's or an episode's changes (facts go through
        the vault's ``update``)."""
        model = MODELS[record.kind]
        new = model.model_validate({**record.value, **changes, "updated_at": utcnow()})
        namespace = self._namespace(user_id, record.kind)
        yield Batch([memory_put(namespace, record.key, new)])

    def _check_changes(self, kind: str, changes: Mapping[str, Any]) -> None:
        if not changes:
            raise InvalidInput("changes", "nothing to change")
        fields = set(MODELS[kind].model_fields)
        for name in changes:
            if name in FIXED_FIELDS or name not in fields:
                raise InvalidInput(name, f"not an editable field of a {kind} memory")

    # -- step generators -------------------------------------------------------------------

    def _show_steps(self, user_id: str, key: str) -> Steps[MemoryRecord]:
        record = yield Within(self.store, self._find_plan(user_id, key))
        return record  # type: ignore[no-any-return]

    def _add_steps(self, user_id: str, text: str, fields: dict[str, Any]) -> Steps[MemoryRecord]:
        # remember() validates the fact before it writes anything.
        vault = self._vault(user_id)
        added = yield Call(
            lambda: vault.remember(text, **fields), lambda: vault.aremember(text, **fields)
        )
        ns = self._namespace(user_id, "semantic")
        yield from self._audited(user_id, "create", key=added.key, namespace=ns)
        return (yield from self._show_steps(user_id, added.key))

    def _edit_steps(
        self, user_id: str, key: str, changes: Mapping[str, Any]
    ) -> Steps[MemoryRecord]:
        record = yield from self._show_steps(user_id, key)
        changes = dict(changes)
        if "status" in changes and record.kind == "semantic" and changes["status"] == "pending":
            changes["status"] = "pending_confirmation"
        self._check_changes(record.kind, changes)
        if record.kind == "semantic":
            vault = self._vault(user_id)
            yield Call(lambda: vault.update(key, **changes), lambda: vault.aupdate(key, **changes))
        else:
            yield Within(self.store, self._edit_plan(user_id, record, changes))
        ns = self._namespace(user_id, record.kind)
        detail = {"fields": sorted(changes)}
        yield from self._audited(user_id, "edit", key=key, namespace=ns, detail=detail)
        return (yield from self._show_steps(user_id, key))

    def _forget_steps(self, user_id: str, key: str, hard: bool) -> Steps[MemoryRecord]:
        record = yield from self._show_steps(user_id, key)
        ns = self._namespace(user_id, record.kind)
        vault = self._vault(user_id)
        if record.kind == "semantic":
            yield Call(lambda: vault.forget(key, hard=hard), lambda: vault.aforget(key, hard=hard))
        elif hard:
            ops = [PutOp(ns, key, None), PutOp(usage_namespace(ns), key, None)]
            yield Within(self.store, _writes(ops))
        elif record.kind == "instruction":
            yield Call(
                lambda: vault.deactivate_instruction(key),
                lambda: vault.adeactivate_instruction(key),
            )
        else:
            raise InvalidInput("hard", "an episode has no soft delete; pass hard=True")
        detail = {"hard": hard}
        yield from self._audited(user_id, "delete", key=key, namespace=ns, detail=detail)
        if hard:
            return record
        return (yield from self._show_steps(user_id, key))

    def _restore_steps(self, user_id: str, key: str) -> Steps[MemoryRecord]:
        record = yield from self._show_steps(user_id, key)
        if record.status == "forgotten":
            changes: dict[str, Any] = {"status": "active", "valid_to": None}
        elif record.status == "disabled":
            changes = {"active": True}
        else:
            raise InvalidInput(
                "status", f"memory {key!r} is {record.status}; only forgotten or disabled ones"
            )
        return (yield from self._edit_steps(user_id, key, changes))

    def _confirm_steps(self, user_id: str, key: str, accept: bool) -> Steps[MemoryRecord]:
        record = yield from self._show_steps(user_id, key)
        if record.status != "pending":
            raise InvalidInput("status", f"memory {key!r} is {record.status}, not pending")
        vault = self._vault(user_id)
        if accept:
            yield Call(lambda: vault.confirm(key), lambda: vault.aconfirm(key))
        else:  # rejected: closed like a forget, so it can still be restored
            yield Call(lambda: vault.forget(key), lambda: vault.aforget(key))
        ns = self._namespace(user_id, "semantic")
        detail = {"op": "confirm" if accept else "reject"}
        yield from self._audited(user_id, "edit", key=key, namespace=ns, detail=detail)
        return (yield from self._show_steps(user_id, key))

    def _search_steps(
        self,
        user_id: str,
        text: str,
        search_type: str,
        min_relevance: float,
        query: MemoryQuery,
    ) -> Steps[SearchResults]:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("query", "must be a non-empty string")
        if len(text) > MAX_QUERY:
            raise InvalidInput("query", f"longer than {MAX_QUERY} characters")
        if search_type not in ("text", "semantic", "hybrid"):
            raise InvalidInput(
                "search_type", f"must be text, semantic or hybrid, not {search_type!r}"
            )
        if not 0.0 <= min_relevance <= 1.0:
            raise InvalidInput("min_relevance", f"must be in [0, 1], got {min_relevance}")
        plan = self._search_plan(user_id, text, search_type, min_relevance, query)  # type: ignore[arg-type]
        return (yield Within(self.store, plan))  # type: ignore[no-any-return]

    # -- public: sync and async twins --------------------------------------------------------

    def list_memories(
        self, user_id: str, query: MemoryQuery | None = None, **filters: Any
    ) -> MemoryPage:
        """The user's memories matching ``query`` (or ``filters``: the fields of
        :class:`MemoryQuery`), newest first, with the total count of matches."""
        uid = self._authorize(user_id)
        return self._run(self._list_steps(uid, _query(query, filters)))

    async def alist_memories(
        self, user_id: str, query: MemoryQuery | None = None, **filters: Any
    ) -> MemoryPage:
        """Async :meth:`list_memories`."""
        uid = self._authorize(user_id)
        return await self._arun(self._list_steps(uid, _query(query, filters)))

    def count_memories(
        self, user_id: str, *, kind: str | None = None, category: str | None = None
    ) -> StatusCounts:
        """How many of the user's memories (of ``kind``, of ``category``) have each status,
        each count capped as a listing's total is (:class:`StatusCounts`); on VaultStore one
        statement for every status."""
        return self._run(self._count_steps(self._authorize(user_id), kind, category))

    async def acount_memories(
        self, user_id: str, *, kind: str | None = None, category: str | None = None
    ) -> StatusCounts:
        """Async :meth:`count_memories`."""
        return await self._arun(self._count_steps(self._authorize(user_id), kind, category))

    def search_memories(
        self,
        user_id: str,
        text: str,
        *,
        search_type: SearchType = "hybrid",
        min_relevance: float = 0.0,
        query: MemoryQuery | None = None,
        **filters: Any,
    ) -> SearchResults:
        """Memories matching ``text``: ``text`` (words in common), ``semantic`` (the store's
        vector search) or ``hybrid`` (both); each hit says which found it (``match_type``)."""
        uid = self._authorize(user_id)
        q = _query(query, filters)
        return self._run(self._search_steps(uid, text, search_type, min_relevance, q))

    async def asearch_memories(
        self,
        user_id: str,
        text: str,
        *,
        search_type: SearchType = "hybrid",
        min_relevance: float = 0.0,
        query: MemoryQuery | None = None,
        **filters: Any,
    ) -> SearchResults:
        """Async :meth:`search_memories`."""
        uid = self._authorize(user_id)
        q = _query(query, filters)
        return await self._arun(self._search_steps(uid, text, search_type, min_relevance, q))

    def get_memory(self, user_id: str, key: str) -> MemoryRecord:
        """One memory (fact, instruction or episode) by key; :class:`NotFound` if none."""
        return self._run(self._show_steps(self._authorize(user_id), key))

    async def aget_memory(self, user_id: str, key: str) -> MemoryRecord:
        """Async :meth:`get_memory`."""
        return await self._arun(self._show_steps(self._authorize(user_id), key))

    def add_memory(self, user_id: str, text: str, **fields: Any) -> MemoryRecord:
        """Store a fact (``category``, ``tags``, ``confidence``, ``private``, ``evidence``,
        ``source``); validated before anything is written; audited as ``create``."""
        return self._run(self._add_steps(self._authorize(user_id), text, fields))

    async def aadd_memory(self, user_id: str, text: str, **fields: Any) -> MemoryRecord:
        """Async :meth:`add_memory`."""
        return await self._arun(self._add_steps(self._authorize(user_id), text, fields))

    def edit_memory(self, user_id: str, key: str, **changes: Any) -> MemoryRecord:
        """Change any fields of a memory of any kind (re-embedded when its text changes);
        an unknown field or bad value raises :class:`InvalidInput` naming it."""
        return self._run(self._edit_steps(self._authorize(user_id), key, changes))

    async def aedit_memory(self, user_id: str, key: str, **changes: Any) -> MemoryRecord:
        """Async :meth:`edit_memory`."""
        return await self._arun(self._edit_steps(self._authorize(user_id), key, changes))

    def forget_memory(self, user_id: str, key: str, *, hard: bool = False) -> MemoryRecord:
        """Soft-delete (a fact is closed, an instruction disabled: both restorable) or, with
        ``hard=True``, erase; returns the record as it is (hard: as it was)."""
        return self._run(self._forget_steps(self._authorize(user_id), key, hard))

    async def aforget_memory(self, user_id: str, key: str, *, hard: bool = False) -> MemoryRecord:
        """Async :meth:`forget_memory`."""
        return await self._arun(self._forget_steps(self._authorize(user_id), key, hard))

    def restore_memory(self, user_id: str, key: str) -> MemoryRecord:
        """Undo a soft delete or a rejection (a forgotten fact, a disabled instruction)."""
        return self._run(self._restore_steps(self._authorize(user_id), key))

    async def arestore_memory(self, user_id: str, key: str) -> MemoryRecord:
        """Async :meth:`restore_memory`."""
        return await self._arun(self._restore_steps(self._authorize(user_id), key))

    def confirm_memory(self, user_id: str, key: str) -> MemoryRecord:
        """Confirm a pending fact: it becomes active (and closes the fact it supersedes)."""
        return self._run(self._confirm_steps(self._authorize(user_id), key, True))

    async def aconfirm_memory(self, user_id: str, key: str) -> MemoryRecord:
        """Async :meth:`confirm_memory`."""
        return await self._arun(self._confirm_steps(self._authorize(user_id), key, True))

    def reject_memory(self, user_id: str, key: str) -> MemoryRecord:
        """Reject a pending fact: it is closed (status ``forgotten``), never injected."""
        return self._run(self._confirm_steps(self._authorize(user_id), key, False))

    async def areject_memory(self, user_id: str, key: str) -> MemoryRecord:
        """Async :meth:`reject_memory`."""
        return await self._arun(self._confirm_steps(self._authorize(user_id), key, False))


def _query(query: MemoryQuery | None, filters: Mapping[str, Any]) -> MemoryQuery:
    if query is not None and filters:
        raise InvalidInput(next(iter(filters)), "pass either a MemoryQuery or filters, not both")
    if query is not None:
        return query
    try:
        return MemoryQuery.model_validate(dict(filters))
    except ValidationError as exc:
        raise from_validation(exc) from None
