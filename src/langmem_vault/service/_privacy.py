"""Subject rights through the service: export, import, erase (and undo a soft erase), consent,
and the audit log. Each reuses :mod:`langmem_vault.privacy._subject_rights` and
:mod:`langmem_vault.privacy._audit`; the service adds the identity check, the acting identity
in the audit log, and its own error family.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from langmem_vault.db._steps import Call, Steps
from langmem_vault.privacy._audit.log import AuditAction, AuditRecord
from langmem_vault.privacy._rotation import arotate_keys, rotate_keys
from langmem_vault.privacy._subject_rights.consent import (
    ConsentSettings,
    aget_consent,
    aset_consent,
    get_consent,
    set_consent,
)
from langmem_vault.privacy._subject_rights.erase import (
    ErasureReport,
    aerase_user,
    arestore_user,
    erase_user,
    restore_user,
)
from langmem_vault.privacy._subject_rights.portability import (
    ImportReport,
    aexport_user,
    aimport_user,
    export_user,
    import_owner,
    import_user,
    load_export,
)
from langmem_vault.service._base import ServiceBase, user_prefix
from langmem_vault.service._errors import InvalidInput

__all__ = [
    "AuditEntry",
    "ConsentView",
    "EraseResult",
    "ImportResult",
    "PrivacyMixin",
    "RotationResult",
]

ACTIONS = tuple(a.value for a in AuditAction)


class ImportResult(BaseModel):
    """How many of each kind an import wrote, and for whom."""

    user_id: str
    memories: int
    instructions: int
    episodes: int
    consent: bool


class EraseResult(BaseModel):
    """What an erase removed (or, soft, quarantined until ``purge_after``)."""

    user_id: str
    soft: bool
    store_items: int
    threads: int
    checkpoints: int
    jobs: int
    audit_events: int
    purge_after: datetime | None = None


class RotationResult(BaseModel):
    """What a key rotation did for one user: private facts re-sealed under the current key,
    sealed for the first time, and those it could not open (left as they were)."""

    user_id: str
    resealed: int
    sealed: int
    failed: int
    first_failure: str | None = None


class ConsentView(BaseModel):
    """A user's consent switches (``updated_at`` None until the user chose)."""

    user_id: str
    allow_extraction: bool
    allow_personal_facts: bool
    allow_sensitive_facts: bool
    updated_at: datetime | None = None


class AuditEntry(BaseModel):
    """One audit log record."""

    id: int
    at: datetime
    user_id: str
    action: str
    component: str
    actor: str | None
    memory_key: str | None
    namespace: list[str] | None
    detail: dict[str, Any]


def _entry(record: AuditRecord) -> AuditEntry:
    return AuditEntry(
        id=record.id,
        at=record.at,
        user_id=record.user_id,
        action=str(record.action),
        component=record.component,
        actor=record.actor,
        memory_key=record.memory_key,
        namespace=list(record.namespace) if record.namespace else None,
        detail=dict(record.detail),
    )


def _consent(user_id: str, settings: ConsentSettings) -> ConsentView:
    return ConsentView(
        user_id=user_id,
        allow_extraction=settings.allow_extraction,
        allow_personal_facts=settings.allow_personal_facts,
        allow_sensitive_facts=settings.allow_sensitive_facts,
        updated_at=settings.updated_at,
    )


def _erase_result(user_id: str, report: ErasureReport) -> EraseResult:
    return EraseResult(
        user_id=user_id,
        soft=report.soft,
        store_items=report.store_items,
        threads=len(report.threads),
        checkpoints=report.checkpoints,
        jobs=report.jobs,
        audit_events=report.audit_events,
        purge_after=report.purge_after,
    )


class PrivacyMixin(ServiceBase):
    """Subject-rights operations of :class:`~langmem_vault.service.MemoryService`."""

    def _rights(self) -> dict[str, Any]:
        return {
            "namespaces": self.namespaces,
            "audit": self.audit,
            "actor": self.identity.name,
        }

    def _export_steps(self, user_id: str) -> Steps[dict[str, Any]]:
        yield from self._require_user_steps(user_id)
        options = self._rights() | {"saver": self.saver, "keyring": self.keyring}
        doc = yield Call(
            lambda: export_user(self.store, user_id, **options),
            lambda: aexport_user(self.store, user_id, **options),
        )
        return doc  # type: ignore[no-any-return]

    def _import_steps(
        self, doc: Mapping[str, Any] | str | bytes, user_id: str | None
    ) -> Steps[ImportResult]:
        loaded = load_export(doc)
        owner = self._authorize(import_owner(loaded, user_id))
        options = self._rights() | {"keyring": self.keyring, "user_id": owner}
        report: ImportReport = yield Call(
            lambda: import_user(self.store, loaded, **options),
            lambda: aimport_user(self.store, loaded, **options),
        )
        return ImportResult(
            user_id=owner,
            memories=report.memories,
            instructions=report.instructions,
            episodes=report.episodes,
            consent=report.consent,
        )

    def _erase_steps(self, user_id: str, soft_days: float | None) -> Steps[EraseResult]:
        yield from self._require_user_steps(user_id)
        options = self._rights() | {
            "saver": self.saver,
            "jobs": self.jobs,
            "soft_days": soft_days,
            "component": self.component,
        }
        report = yield Call(
            lambda: erase_user(self.store, user_id, **options),
            lambda: aerase_user(self.store, user_id, **options),
        )
        return _erase_result(user_id, report)

    def _unerase_steps(self, user_id: str) -> Steps[int]:
        ns = self.namespaces
        restored = yield Call(
            lambda: restore_user(self.store, user_id, namespaces=ns),
            lambda: arestore_user(self.store, user_id, namespaces=ns),
        )
        yield from self._audited(user_id, "import", detail={"restored": restored})
        return int(restored)

    def _consent_steps(self, user_id: str, changes: dict[str, bool]) -> Steps[ConsentView]:
        if not changes:
            settings = yield Call(
                lambda: get_consent(self.store, user_id),
                lambda: aget_consent(self.store, user_id),
            )
            return _consent(user_id, settings)
        for name, value in changes.items():
            if name not in ("allow_extraction", "allow_personal_facts", "allow_sensitive_facts"):
                raise InvalidInput(name, "not a consent switch")
            if not isinstance(value, bool):
                raise InvalidInput(name, f"must be true or false, got {value!r}")
        settings = yield Call(
            lambda: set_consent(self.store, user_id, **changes),
            lambda: aset_consent(self.store, user_id, **changes),
        )
        yield from self._audited(user_id, "consent", detail=dict(changes))
        return _consent(user_id, settings)

    def _rotate_steps(self, user_id: str) -> Steps[RotationResult]:
        keyring = self.keyring
        if keyring is None:
            raise InvalidInput("key", "no keyring: set $LANGMEM_VAULT_KEY (old keys in "
                               "$LANGMEM_VAULT_OLD_KEYS)")  # fmt: skip
        prefix = user_prefix(self.namespaces.semantic, user_id)
        report = yield Call(
            lambda: rotate_keys(self.store, keyring, prefix=prefix),
            lambda: arotate_keys(self.store, keyring, prefix=prefix),
        )
        result = RotationResult(
            user_id=user_id,
            resealed=report.resealed,
            sealed=report.sealed,
            failed=len(report.failed),
            first_failure=report.failed[0][2] if report.failed else None,
        )
        detail = {"op": "rotate_keys"} | result.model_dump(include={"resealed", "sealed", "failed"})
        yield from self._audited(user_id, "edit", detail=detail)
        return result

    def _audit_steps(self, user_id: str, filters: dict[str, Any]) -> Steps[list[AuditEntry]]:
        audit = self.audit
        if audit is None:
            raise InvalidInput("audit", "this service has no audit log")
        for name in ("memory_key", "component"):
            value = filters.get(name)
            if value is not None and (not isinstance(value, str) or "\x00" in value):
                raise InvalidInput(name, "must be a string without NUL characters")
        actions = filters.get("actions")
        if actions is not None:
            for action in actions:
                if action not in ACTIONS:
                    raise InvalidInput("action", f"must be one of {', '.join(ACTIONS)}")
        records = yield Call.same(lambda: audit.query(user_id, **filters))
        return [_entry(r) for r in records]

    # -- public: sync and async twins ------------------------------------------------------

    def export_user(self, user_id: str) -> dict[str, Any]:
        """The user's export document (format ``langmem-vault-export``; private facts opened
        with the service's keyring); audited. :class:`NotFound` for an unknown user."""
        return self._run(self._export_steps(self._authorize(user_id)))

    async def aexport_user(self, user_id: str) -> dict[str, Any]:
        """Async :meth:`export_user`."""
        return await self._arun(self._export_steps(self._authorize(user_id)))

    def import_user(
        self, doc: Mapping[str, Any] | str | bytes, *, user_id: str | None = None
    ) -> ImportResult:
        """Import an export document (a dict or its JSON) for its user, or ``user_id``;
        validated whole first (:class:`InvalidInput` naming the field), then one batch."""
        return self._run(self._import_steps(doc, user_id))

    async def aimport_user(
        self, doc: Mapping[str, Any] | str | bytes, *, user_id: str | None = None
    ) -> ImportResult:
        """Async :meth:`import_user`."""
        return await self._arun(self._import_steps(doc, user_id))

    def erase_user(self, user_id: str, *, soft_days: float | None = None) -> EraseResult:
        """Erase the user everywhere (store, threads, jobs, audit), or with ``soft_days``
        quarantine the memories for that many days (:meth:`unerase_user` undoes it)."""
        return self._run(self._erase_steps(self._authorize(user_id), soft_days))

    async def aerase_user(self, user_id: str, *, soft_days: float | None = None) -> EraseResult:
        """Async :meth:`erase_user`."""
        return await self._arun(self._erase_steps(self._authorize(user_id), soft_days))

    def unerase_user(self, user_id: str) -> int:
        """Undo a soft erase; returns how many items came back."""
        return self._run(self._unerase_steps(self._authorize(user_id)))

    async def aunerase_user(self, user_id: str) -> int:
        """Async :meth:`unerase_user`."""
        return await self._arun(self._unerase_steps(self._authorize(user_id)))

    def consent(self, user_id: str, **changes: bool) -> ConsentView:
        """The user's consent; with ``allow_...=True/False`` changes it first (audited)."""
        return self._run(self._consent_steps(self._authorize(user_id), changes))

    async def aconsent(self, user_id: str, **changes: bool) -> ConsentView:
        """Async :meth:`consent`."""
        return await self._arun(self._consent_steps(self._authorize(user_id), changes))

    def rotate_keys(self, user_id: str) -> RotationResult:
        """Re-seal the user's private facts under the keyring's current key (older keys
        still in the keyring to read them); audited. Safe to rerun."""
        return self._run(self._rotate_steps(self._authorize(user_id)))

    async def arotate_keys(self, user_id: str) -> RotationResult:
        """Async :meth:`rotate_keys`."""
        return await self._arun(self._rotate_steps(self._authorize(user_id)))

    def audit_log(self, user_id: str, **filters: Any) -> list[AuditEntry]:
        """The user's audit records, newest first; filters: ``memory_key``, ``actions``,
        ``component``, ``since``, ``until``, ``limit`` (1..1000), ``before_id``."""
        return self._run(self._audit_steps(self._authorize(user_id), filters))

    async def aaudit_log(self, user_id: str, **filters: Any) -> list[AuditEntry]:
        """Async :meth:`audit_log`."""
        return await self._arun(self._audit_steps(self._authorize(user_id), filters))
