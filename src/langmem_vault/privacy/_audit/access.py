"""Audit what the nodes inject and what the model cites, with no change to the nodes.

``create_inject_node`` and ``create_respond_node`` accept an ``AccessRecorder`` (the object
that stamps access counts and utility in the background). :class:`AuditingAccessRecorder`
is one that also writes an ``inject`` event for every memory put into a prompt and a ``cite``
event for every memory the answer cites, to an audit sink. Use an ``AuditBuffer`` (sync and
async graphs) or ``AsyncAuditBuffer`` (async graphs) so the turn never waits for the log.

>>> buf = AuditBuffer(AuditLog(pool))  # doctest: +SKIP
>>> rec = AuditingAccessRecorder(buf, component="inject")  # doctest: +SKIP
>>> inject = create_inject_node(record_access=rec)  # doctest: +SKIP
>>> respond = create_respond_node(model, record_utility=AuditingAccessRecorder(buf,
...                               component="respond"))  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from langgraph.store.base import BaseStore

from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.privacy._audit.log import AuditAction, AuditEvent
from langmem_vault.privacy._audit.owners import owner_of

__all__ = ["AuditingAccessRecorder"]

Target = tuple[tuple[str, ...], str]


class AuditingAccessRecorder(AccessRecorder):
    """An ``AccessRecorder`` that also logs ``inject`` and ``cite`` events.

    ``stamps=False`` logs only (no access-count or utility writes).
    """

    def __init__(
        self,
        audit: Any,
        *,
        component: str,
        actor: str | None = None,
        namespaces: MemoryNamespaces | None = None,
        stamps: bool = True,
        inline: bool = False,
    ) -> None:
        super().__init__(inline=inline)
        if audit is None:
            raise ValueError("audit is required")
        AuditEvent("check", "read", component, actor=actor)  # fail early on bad names
        ns = namespaces or MemoryNamespaces()
        self.audit = audit
        self.component = component
        self.actor = actor
        self.stamps = stamps
        self.templates = (ns.semantic, ns.episodes, ns.instructions)

    def events(self, targets: Sequence[Target], cited: Sequence[Target]) -> list[AuditEvent]:
        """The audit events for one turn's injected and cited memories."""
        out: list[AuditEvent] = []
        for action, pairs in ((AuditAction.INJECT, targets), (AuditAction.CITE, cited)):
            for namespace, key in pairs:
                user = owner_of(tuple(namespace), self.templates)
                if user is not None:
                    out.append(
                        AuditEvent(
                            user,
                            action,
                            self.component,
                            actor=self.actor,
                            memory_key=key,
                            namespace=tuple(namespace),
                        )
                    )
        return out

    def record(
        self,
        store: BaseStore,
        targets: Sequence[Target],
        *,
        cited: Sequence[Target] = (),
        uncited: Sequence[Target] = (),
    ) -> None:
        """Log the events, then stamp access in the background as ``AccessRecorder`` does."""
        if inspect.iscoroutinefunction(self.audit.record):
            raise TypeError("an async audit sink needs an async graph (arecord); use AuditBuffer")
        events = self.events(targets, cited)
        if events:
            self.audit.record(events)
        if self.stamps:
            super().record(store, targets, cited=cited, uncited=uncited)

    async def arecord(
        self,
        store: BaseStore,
        targets: Sequence[Target],
        *,
        cited: Sequence[Target] = (),
        uncited: Sequence[Target] = (),
    ) -> None:
        """Async :meth:`record`."""
        events = self.events(targets, cited)
        if events:
            outcome = self.audit.record(events)
            if inspect.isawaitable(outcome):
                await outcome
        if self.stamps:
            await super().arecord(store, targets, cited=cited, uncited=uncited)
