"""The service's components, identity checks, audit and drivers, shared by every area.

Each operation is written once, as a generator of :class:`~langmem_vault.db._store_plans.Step`
(store plans, saver and audit-log calls); the sync method runs it with ``run_steps``, the
async twin with ``arun_steps``. Errors of the layers below (pydantic validation, ``KeyError``,
``ValueError``, a wrong key) come out as one :class:`ServiceError` family.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Self, TypeVar

from langgraph.store.base import BaseStore, ListNamespacesOp, MatchCondition
from pydantic import ValidationError

from langmem_vault._run_config import UserIdError
from langmem_vault._run_config import check_user_id as check_run_user_id
from langmem_vault.db._steps import Call, Step, Steps, Within, arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._models import utcnow
from langmem_vault.memory._namespaces import (
    MemoryNamespaces,
    NamespaceTemplate,
    ResolvedNamespaces,
    decode_label,
    encode_label,
)
from langmem_vault.memory._recall.accounting import PriceTable, default_prices
from langmem_vault.memory._sealing import DecryptionError, Keyring, default_keyring
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.privacy._audit.log import AuditEvent
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy
from langmem_vault.privacy._subject_rights.portability import InvalidExportError
from langmem_vault.service._errors import (
    Forbidden,
    InvalidInput,
    NotFound,
    ServiceError,
    from_validation,
)
from langmem_vault.service._records import Identity

__all__ = ["MAX_ROWS", "ServiceBase", "check_user_id", "user_prefix"]

T = TypeVar("T")
MAX_USERS = 100_000
#: the most memories one list, search, analytics or instructions call reads (and opens, when
#: private) for a user: the newest ones; a result that stopped there says so (``truncated``)
MAX_ROWS = 5000
_PAGE = 1000


_NAMED_FIELD = re.compile(r"^([A-Za-z_][\w.\[\]]*):")


def _translate(exc: Exception) -> ServiceError:
    """A lower layer's exception as the service's own (the original is chained)."""
    if isinstance(exc, ValidationError):
        return from_validation(exc)
    if isinstance(exc, DecryptionError):
        return InvalidInput("key", f"cannot open a private memory: {exc}")
    if isinstance(exc, InvalidExportError):  # "memories[3].key: ..." names its field
        named = _NAMED_FIELD.match(str(exc))
        return InvalidInput(named.group(1) if named else "document", str(exc))
    if isinstance(exc, PermissionError):
        return Forbidden(None, str(exc))
    # "job_id: no job 7", "limit: must be ...": a message that starts with a field names it
    missing = isinstance(exc, KeyError)
    text = (str(exc.args[0]) if exc.args else "not found") if missing else str(exc)
    named = _NAMED_FIELD.match(text)
    field, message = (named.group(1), text[named.end() :].strip()) if named else (None, text)
    return NotFound(field, message) if missing else InvalidInput(field, message)


def check_user_id(user_id: object) -> str:
    """``user_id`` if it is a usable id, else :class:`InvalidInput` naming ``user_id``."""
    try:
        return check_run_user_id(user_id, "the request")
    except UserIdError as exc:  # the one rule (run_config), as the service's error type
        raise InvalidInput("user_id", str(exc).split(": ", 1)[1]) from None


def user_prefix(template: NamespaceTemplate, user_id: str | None) -> tuple[str, ...]:
    """The template's labels up to the user's (with it when ``user_id`` is given)."""
    cut = next((i for i, label in enumerate(template) if "{user_id}" in label), None)
    if cut is None:
        raise InvalidInput("namespaces", f"template {template!r} has no {{user_id}} label")
    head = tuple(template[:cut])
    return (*head, encode_label(user_id)) if user_id is not None else head


class ServiceBase:
    """Components and drivers. See :class:`~langmem_vault.service.MemoryService`."""

    def __init__(
        self,
        store: BaseStore,
        *,
        saver: Any = None,
        audit: Any = None,
        jobs: Any = None,
        keyring: Keyring | None = None,
        namespaces: MemoryNamespaces | None = None,
        identity: Identity | None = None,
        component: str = "service",
        max_rows: int = MAX_ROWS,
        redaction: RedactionPolicy | None = DEFAULT_POLICY,
        prices: PriceTable | None = None,
    ) -> None:
        if not isinstance(max_rows, int) or max_rows < 1:
            raise InvalidInput("max_rows", f"must be a positive integer, got {max_rows!r}")
        self.max_rows = max_rows
        self.store = store
        self.saver = saver
        self.audit = audit
        self.jobs = jobs
        # Without an explicit keyring, $LANGMEM_VAULT_KEY (when set) opens private facts.
        self.keyring = keyring if keyring is not None else default_keyring()
        self.namespaces = namespaces or MemoryNamespaces()
        self.identity = identity or Identity.admin()
        self.component = component
        # What an agent states (remember) is redacted like an extraction; None turns it off.
        self.redaction = redaction
        # model name -> US dollars per million tokens; None: $LANGMEM_VAULT_PRICES, if set
        self.prices = prices if prices is not None else default_prices()

    def acting_as(self, identity: Identity) -> Self:
        """The same service (same components) acting as ``identity`` (per API request)."""
        other = copy.copy(self)
        other.identity = identity
        return other

    # -- checks ---------------------------------------------------------------------------

    def _authorize(self, user_id: object) -> str:
        uid = check_user_id(user_id)
        if not self.identity.may_act_for(uid):
            raise Forbidden("user_id", f"{self.identity.name!r} may not act for user {uid!r}")
        return uid

    def _require_admin(self) -> None:
        if not self.identity.is_admin:
            raise Forbidden(None, f"{self.identity.name!r} is not an admin")

    def _ns(self, user_id: str) -> ResolvedNamespaces:
        return self.namespaces.resolve({"configurable": {"user_id": user_id}})

    def _vault(self, user_id: str) -> MemoryVault:
        return MemoryVault(
            self.store, user_id=user_id, namespaces=self.namespaces, keyring=self.keyring
        )

    def _templates(self) -> tuple[NamespaceTemplate, ...]:
        ns = self.namespaces
        return (ns.semantic, ns.instructions, ns.episodes)

    # -- users ----------------------------------------------------------------------------

    def _users_plan(self) -> StorePlan[list[str]]:
        found: set[str] = set()
        for template in self._templates():
            head = user_prefix(template, None)
            offset = 0
            while True:
                condition = MatchCondition("prefix", head) if head else None
                op = ListNamespacesOp(
                    match_conditions=(condition,) if condition else None,
                    max_depth=len(head) + 1,
                    limit=_PAGE,
                    offset=offset,
                )
                (namespaces,) = yield Batch([op])
                found.update(decode_label(n[len(head)]) for n in namespaces if len(n) > len(head))
                if len(namespaces) < _PAGE or len(found) > MAX_USERS:
                    break
                offset += _PAGE
        return sorted(found)

    def _has_memories_plan(self, user_id: str) -> StorePlan[bool]:
        ops = [
            ListNamespacesOp(
                match_conditions=(MatchCondition("prefix", user_prefix(t, user_id)),), limit=1
            )
            for t in self._templates()
        ]
        results = yield Batch(ops)
        return any(results)

    def _exists_steps(self, user_id: str) -> Steps[bool]:
        if (yield Within(self.store, self._has_memories_plan(user_id))):
            return True
        if self.saver is None:
            return False
        threads = yield self._threads_step(user_id, 1)
        return bool(threads)

    def _require_user_steps(self, user_id: str) -> Steps[None]:
        if not (yield from self._exists_steps(user_id)):
            raise NotFound("user_id", f"no memories or threads for user {user_id!r}")

    def _threads_step(self, user_id: str, limit: int) -> Step:
        saver = self.saver
        if saver is None:
            raise InvalidInput("saver", "this service has no checkpointer (VaultSaver)")
        return Call(
            lambda: saver.list_threads(user_id, limit=limit),
            lambda: saver.alist_threads(user_id, limit=limit),
        )

    # -- maintenance ----------------------------------------------------------------------

    def _reembed_steps(self, user_id: str | None) -> Steps[int]:
        reembed: Callable[[tuple[str, ...]], Any] | None = getattr(self.store, "reembed", None)
        if reembed is None:
            raise InvalidInput("store", "reembed needs a VaultStore or an AsyncVaultStore")
        if user_id is None:
            self._require_admin()
            prefixes: list[tuple[str, ...]] = [()]
        else:
            uid = self._authorize(user_id)
            yield from self._require_user_steps(uid)
            prefixes = sorted({user_prefix(t, uid) for t in self._templates()})
        total = 0
        for prefix in prefixes:
            total += yield Call.same(functools.partial(reembed, prefix))
        return total

    def reembed(self, user_id: str | None = None) -> int:
        """Embed the stored texts of ``user_id`` (everyone's, for an admin, when None) again
        with the store's embeddings, in place (see ``VaultStore.reembed``); returns how many
        vectors were written.

        >>> service.reembed("alice")  # doctest: +SKIP
        12
        """
        return self._run(self._reembed_steps(user_id))

    async def areembed(self, user_id: str | None = None) -> int:
        """Async :meth:`reembed`."""
        return await self._arun(self._reembed_steps(user_id))

    # -- audit ----------------------------------------------------------------------------

    def _audited(
        self,
        user_id: str,
        action: str,
        *,
        key: str | None = None,
        namespace: tuple[str, ...] | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> Steps[None]:
        """Record one event with the acting identity (no-op without an audit log)."""
        audit = self.audit
        if audit is None:
            return
        event = AuditEvent(
            user_id,
            action,
            self.component,
            actor=self.identity.name,
            memory_key=key,
            namespace=namespace,
            detail=dict(detail or {}),
        )
        yield Call.same(lambda: audit.record(event))

    # -- drivers --------------------------------------------------------------------------

    # Only the lower layers' bad-input exceptions are translated; a database or network
    # error stays what it is (it is not the caller's input at fault).

    def _run(self, steps: Steps[T]) -> T:
        try:
            return run_steps(steps)
        except ServiceError:
            raise
        except (ValueError, KeyError, PermissionError) as exc:
            raise _translate(exc) from exc

    async def _arun(self, steps: Steps[T]) -> T:
        try:
            return await arun_steps(steps)
        except ServiceError:
            raise
        except (ValueError, KeyError, PermissionError) as exc:
            raise _translate(exc) from exc

    @staticmethod
    def _now() -> datetime:
        return utcnow()
