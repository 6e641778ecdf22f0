"""``AuditedStore``: a BaseStore wrapper that logs every read, edit and delete of a memory.

Wrap the store a component uses (the REST API, an operator console, a plugin host, the
nodes) and every memory it reads (get, or returned by a search), writes or deletes becomes an
audit event naming the component and actor, with no change to that component's code. Only
namespaces that match the memory templates (``("memories", "{user_id}", ...)``) or the consent
namespace are logged; other items (watermarks, app data) pass through silently.

A put cannot tell a create from a replace without an extra read, so every put is logged as
``edit`` (``detail={"op": "put"}``); deletes are ``delete``. Search queries are not logged
(they may quote personal data); the keys returned are.

>>> audited = AuditedStore(store, audit=AuditBuffer(log), component="api")  # doctest: +SKIP
>>> audited.get(("memories", "alice", "semantic"), "k1")  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result, SearchOp

from langmem_vault.memory._namespaces import MemoryNamespaces, NamespaceTemplate
from langmem_vault.privacy._audit.log import AuditAction, AuditEvent
from langmem_vault.privacy._audit.owners import owner_of
from langmem_vault.privacy._subject_rights.consent import CONSENT_NAMESPACE

__all__ = ["AuditedStore", "audit_events"]


def audit_events(
    ops: Sequence[Op],
    results: Sequence[Result],
    *,
    component: str,
    actor: str | None,
    templates: Sequence[NamespaceTemplate],
) -> list[AuditEvent]:
    """The audit events a batch of store ops and their results stand for (pure function)."""
    events: list[AuditEvent] = []

    def add(ns: tuple[str, ...], key: str, action: AuditAction, op: str) -> None:
        user = owner_of(ns, templates)
        if user is not None:
            events.append(
                AuditEvent(
                    user,
                    action,
                    component,
                    actor=actor,
                    memory_key=key,
                    namespace=ns,
                    detail={"op": op},
                )
            )

    for op, result in zip(ops, results, strict=True):
        if isinstance(op, GetOp) and isinstance(result, Item):
            add(tuple(op.namespace), op.key, AuditAction.READ, "get")
        elif isinstance(op, SearchOp) and isinstance(result, list):
            for item in result:
                if isinstance(item, Item):
                    add(tuple(item.namespace), item.key, AuditAction.READ, "search")
        elif isinstance(op, PutOp):
            action = AuditAction.DELETE if op.value is None else AuditAction.EDIT
            add(tuple(op.namespace), op.key, action, "put")
    return events


class AuditedStore(BaseStore):
    """Delegates to ``store`` and records what each batch did to users' memories.

    ``audit``: an ``AuditLog`` or ``AuditBuffer`` for sync use, an ``AsyncAuditLog`` or
    ``AsyncAuditBuffer`` for async use. With a log the events are durable before the call
    returns; with a buffer they are written in the background (see ``audit_buffer``).
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        audit: Any,
        component: str,
        actor: str | None = None,
        namespaces: MemoryNamespaces | None = None,
    ) -> None:
        if audit is None:
            raise ValueError("audit is required")
        ns = namespaces or MemoryNamespaces()
        self.store = store
        self.audit = audit
        self.component = component
        self.actor = actor
        self.templates: tuple[NamespaceTemplate, ...] = (
            ns.semantic,
            ns.episodes,
            ns.instructions,
            CONSENT_NAMESPACE,
        )
        # Fail on a bad component/actor now, not on the first logged op.
        AuditEvent("check", "read", component, actor=actor)

    def __getattr__(self, name: str) -> Any:
        # setup(), sweep_ttl() and other extras of the wrapped store stay reachable.
        return getattr(self.store, name)

    def _events(self, ops: list[Op], results: list[Result]) -> list[AuditEvent]:
        return audit_events(
            ops, results, component=self.component, actor=self.actor, templates=self.templates
        )

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if inspect.iscoroutinefunction(self.audit.record):
            raise TypeError("this AuditedStore has an async audit log: use the async methods")
        op_list = list(ops)
        results = self.store.batch(op_list)
        events = self._events(op_list, results)
        if events:
            self.audit.record(events)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        op_list = list(ops)
        results = await self.store.abatch(op_list)
        events = self._events(op_list, results)
        if events:
            outcome = self.audit.record(events)
            if inspect.isawaitable(outcome):
                await outcome
        return results
