"""Erase a user everywhere: store, checkpoints, extraction jobs, audit log; report what went.

Hard delete by default. What is removed:

- **store**: every item under the user's namespace prefixes (from the memory templates:
  ``("memories", user_id)``, plus ``("privacy", user_id)`` for consent, plus any
  ``extra_prefixes``) and under their usage mirrors (``memory.usage.usage_namespace``: the
  memories' access and citation counts) and their tail mirrors
  (``memory.namespaces.tails_namespace``: messages inline extraction has not read yet), and
  the extract node's inline watermarks of the user's threads, and the user's token and
  latency accounting (``memory._recall.accounting``);
- **checkpoints**: ``saver.delete_user_threads(user_id)`` (every thread in the saver's
  per-user index, with its checkpoints, blobs, elements and writes);
- **jobs**: extraction jobs of those threads or whose payload targets the user's namespaces,
  and the job watermarks of those threads (table ``vault_jobs``, ``vault_job_watermarks``);
- **audit**: every event of the user. The erase itself is then logged under a pseudonym
  (``erased:<sha256 prefix>``), so the log proves an erase happened without keeping the id.

Soft delete (``soft_days=N``): memories move to a quarantine namespace (``("erased", ...)``,
out of search and out of every node's reach), pending jobs are deleted (they would learn
again), checkpoints and audit events stay; :func:`restore_user` undoes it, and
:func:`purge_erased` (run it daily) hard-erases users whose N days have passed.

On VaultStore, the user's items go by namespace prefix in SQL (``purge_prefixes``), expired
ones included (a search skips them, so a search-driven erase would leave them until the TTL
sweep), and the store's tables are then ANALYZEd so ``pg_stats`` no longer samples the user's
words. Other stores are erased through what their searches find. The saver's, jobs' and
audit tables are left to autovacuum's ANALYZE (after enough rows changed): their statistics
can hold a user id or thread title shared by many rows until then.

Pause extraction workers for the user first (or erase twice): a job already running when
its row is deleted may still write its result to the store. Audit buffers: erase flushes the
``audit`` it is given and the sink of an ``AuditedStore`` it is given before deleting the
user's events; flush any other buffer first, or an event still queued there is written after.

>>> report = erase_user(store, "alice", saver=saver, jobs=queue, audit=log)  # doctest: +SKIP
>>> report.store_items, report.checkpoints, report.jobs, report.audit_events  # doctest: +SKIP
(14, 52, 1, 30)
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict, Unpack

from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchOp

from langmem_vault.db._steps import Call, Steps, Within, arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StoreOp, StorePlan
from langmem_vault.memory._namespaces import (
    WATERMARK_NAMESPACE,
    MemoryNamespaces,
    encode_label,
    tails_namespace,
)
from langmem_vault.memory._recall.accounting import accounting_namespace
from langmem_vault.memory._recall.usage import USAGE_ROOT, usage_namespace
from langmem_vault.memory._writes import memory_ops
from langmem_vault.privacy._audit.log import AuditEvent
from langmem_vault.privacy._subject_rights.consent import consent_namespace
from langmem_vault.privacy._subject_rights.portability import KINDS

__all__ = [
    "QUARANTINE",
    "ErasureReport",
    "aerase_user",
    "apurge_erased",
    "arestore_user",
    "erase_user",
    "purge_erased",
    "restore_user",
]

QUARANTINE = "erased"
MARKERS = ("erased", "_markers")
PAGE = 500
MAX_THREADS = 100_000


@dataclass
class ErasureReport:
    """What an erase removed (or, soft, quarantined), by kind."""

    store_items: int = 0
    extract_watermarks: int = 0
    threads: list[str] = field(default_factory=list)
    checkpoints: int = 0
    writes: int = 0
    blobs: int = 0
    elements: int = 0
    jobs: int = 0
    job_watermarks: int = 0
    audit_events: int = 0
    soft: bool = False
    purge_after: datetime | None = None

    def counts(self) -> dict[str, Any]:
        """The numbers only (no ids): safe to log or return to an operator."""
        return {k: v for k, v in self.__dict__.items() if k != "threads"} | {
            "threads": len(self.threads),
            "purge_after": self.purge_after.isoformat() if self.purge_after else None,
        }


def pseudonym(user_id: str) -> str:
    """The id the erase event is logged under: a hash prefix, not the user id."""
    return "erased:" + hashlib.sha256(user_id.encode()).hexdigest()[:16]


def _user_prefixes(
    user_id: str, namespaces: MemoryNamespaces | None, extra: Sequence[tuple[str, ...]]
) -> list[tuple[str, ...]]:
    if not isinstance(user_id, str) or not user_id:
        raise ValueError(f"user_id must be a non-empty string, got {user_id!r}")
    templates = namespaces or MemoryNamespaces()
    resolved = templates.resolve({"configurable": {"user_id": user_id}})
    prefixes: set[tuple[str, ...]] = set()
    for template, full in (
        (templates.semantic, resolved.semantic),
        (templates.episodes, resolved.episodes),
        (templates.instructions, resolved.instructions),
    ):
        # The prefix up to and including the user's label: a user id equal to some other
        # label ("semantic") then never matches another user's namespace.
        cut = next((i for i, label in enumerate(template) if "{user_id}" in label), None)
        if cut is None:
            raise ValueError(f"namespace template {template!r} has no {{user_id}} label")
        prefixes.add(full[: cut + 1])
    prefixes.add(consent_namespace(user_id)[:2])
    prefixes.add(accounting_namespace(user_id))  # their tokens and latency
    for prefix in extra:
        if user_id not in prefix and encode_label(user_id) not in prefix:
            raise ValueError(f"extra prefix {prefix!r} does not contain the user id")
        prefixes.add(tuple(prefix))
    # Usage records (access and citation counts) and inline extraction's unextracted tails
    # mirror the memories' namespaces.
    prefixes.update([m for p in prefixes for m in (usage_namespace(p), tails_namespace(p))])
    return sorted(prefixes)


def _items_under(prefix: tuple[str, ...]) -> StorePlan[list[Item]]:
    found: list[Item] = []
    while True:
        # Deleted as we go is not an option (reads only here), so page by offset.
        (items,) = yield Batch([SearchOp(prefix, limit=PAGE, offset=len(found))])
        found.extend(items)
        if len(items) < PAGE:
            return found


def _erased_prefixes(prefixes: list[tuple[str, ...]], quarantine: bool) -> list[tuple[str, ...]]:
    """Where the user's items are: a hard erase also takes what a soft erase quarantined."""
    return prefixes if quarantine else [*prefixes, *((QUARANTINE, *p) for p in prefixes)]


def _store_erase_plan(
    user_id: str,
    prefixes: list[tuple[str, ...]],
    thread_ids: list[str],
    quarantine: bool,
    *,
    scan_items: bool = True,
) -> StorePlan[tuple[int, int]]:
    """Delete (or quarantine) what a search finds under the prefixes, the erase marker and the
    extract watermarks. ``scan_items=False`` leaves a hard erase's items to the store's own
    ``purge_prefixes``, which also takes the expired ones a search skips."""
    items: list[Item] = []
    for prefix in _erased_prefixes(prefixes, quarantine) if scan_items else []:
        items.extend((yield from _items_under(prefix)))
    # Overlapping prefixes (custom templates) list an item twice: count and delete it once.
    items = list({(tuple(i.namespace), i.key): i for i in items}.values())
    marks = yield Batch([GetOp(WATERMARK_NAMESPACE, t) for t in thread_ids])
    ops: list[PutOp] = [] if quarantine else [PutOp(MARKERS, user_id, None)]
    for item in items:
        ns = tuple(item.namespace)
        ops.append(PutOp(ns, item.key, None))
        if quarantine:
            ops.append(PutOp((QUARANTINE, *ns), item.key, dict(item.value), index=False))
    # Every thread's key, found or not: a get skips a watermark whose TTL has passed.
    ops.extend(PutOp(WATERMARK_NAMESPACE, t, None) for t in thread_ids)
    if ops:
        yield Batch(ops)  # one atomic batch on VaultStore
    return len(items), sum(isinstance(m, Item) for m in marks)


# --- orchestration ---------------------------------------------------------------------------


def _marker(days: float, threads: list[str]) -> tuple[dict[str, Any], datetime]:
    now = datetime.now(UTC)
    purge_after = now + timedelta(days=days)
    value = {
        "erased_at": now.isoformat(),
        "purge_after": purge_after.isoformat(),
        "threads": threads,
    }
    return value, purge_after


def _check_days(soft_days: float | None) -> None:
    if soft_days is not None and (
        not isinstance(soft_days, int | float) or isinstance(soft_days, bool) or soft_days < 0
    ):
        raise ValueError(f"soft_days must be a non-negative number of days, got {soft_days!r}")


def _unwrap(store: BaseStore) -> tuple[BaseStore, Any]:
    """The store to erase from, and the audit sink of an AuditedStore wrapper (if any).

    An AuditedStore would log a read and a delete of every memory it erases, under the
    user's id, after the audit rows were deleted; erase goes around it, and flushes its sink
    first so events still buffered for the user are written before they are deleted.
    """
    from langmem_vault.privacy._audit.store import AuditedStore

    if isinstance(store, AuditedStore):
        return store.store, store.audit
    return store, None


def _flush(*sinks: Any) -> None:
    for sink in sinks:
        if sink is not None and callable(getattr(sink, "flush", None)):
            sink.flush()


async def _aflush(*sinks: Any) -> None:
    for sink in sinks:
        flush = getattr(sink, "flush", None) if sink is not None else None
        if callable(flush):
            outcome = flush()
            if inspect.isawaitable(outcome):
                await outcome


def _purger(store: BaseStore) -> Any:
    """The store's ``purge_prefixes`` (VaultStore, AsyncVaultStore), or None: other stores
    are erased through what their searches find."""
    return getattr(store, "purge_prefixes", None)


async def _apurge(purge: Any, prefixes: list[tuple[str, ...]]) -> int:
    if inspect.iscoroutinefunction(purge):
        return int(await purge(prefixes))
    return int(await asyncio.to_thread(purge, prefixes))


def _apply_threads(report: ErasureReport, deleted: Any) -> None:
    report.threads = list(deleted.thread_ids)
    report.checkpoints = deleted.checkpoints
    report.writes = deleted.writes
    report.blobs = deleted.blobs
    report.elements = deleted.elements


def _erase_event(user_id: str, report: ErasureReport, component: str, actor: str | None) -> Any:
    return AuditEvent(pseudonym(user_id), "erase", component, actor=actor, detail=report.counts())


class EraseOptions(TypedDict, total=False):
    """The keyword options of :func:`erase_user` and :func:`aerase_user`."""

    saver: Any
    jobs: Any
    audit: Any
    soft_days: float | None
    namespaces: MemoryNamespaces | None
    extra_prefixes: Sequence[tuple[str, ...]]
    actor: str | None
    component: str


def _erase_steps(
    store: BaseStore,
    user_id: str,
    *,
    saver: Any = None,
    jobs: Any = None,
    audit: Any = None,
    soft_days: float | None = None,
    namespaces: MemoryNamespaces | None = None,
    extra_prefixes: Sequence[tuple[str, ...]] = (),
    actor: str | None = None,
    component: str = "erase",
) -> Steps[ErasureReport]:
    """The erase, written once: it yields each call on a component and receives its result.
    :func:`erase_user` and :func:`aerase_user` only run the calls."""
    _check_days(soft_days)
    store, wrapper_sink = _unwrap(store)
    prefixes = _user_prefixes(user_id, namespaces, extra_prefixes)
    ns = (namespaces or MemoryNamespaces()).resolve({"configurable": {"user_id": user_id}})
    report = ErasureReport(soft=soft_days is not None)
    threads: list[str] = []
    if saver is not None:
        listed = yield Call(
            lambda: saver.list_threads(user_id, limit=MAX_THREADS),
            lambda: saver.alist_threads(user_id, limit=MAX_THREADS),
        )
        threads = [t.thread_id for t in listed]
    report.threads = threads
    if jobs is not None:
        report.jobs, report.job_watermarks = yield Call.same(
            lambda: jobs.delete_user_jobs(threads, ns)
        )
    quarantine = soft_days is not None
    purge = _purger(store)
    plan = _store_erase_plan(
        user_id, prefixes, threads, quarantine, scan_items=quarantine or purge is None
    )
    report.store_items, report.extract_watermarks = yield Within(store, plan)
    if purge is not None:  # expired items too (a soft erase moved the live ones already)
        erased = _erased_prefixes(prefixes, quarantine)
        purged = yield Call(lambda: purge(erased), lambda: _apurge(purge, erased))
        report.store_items += 0 if quarantine else purged
    if soft_days is not None:
        value, report.purge_after = _marker(soft_days, threads)
        yield Call(
            lambda: store.put(MARKERS, user_id, value, index=False),
            lambda: store.aput(MARKERS, user_id, value, index=False),
        )
    else:
        if saver is not None:
            deleted = yield Call(
                lambda: saver.delete_user_threads(user_id),
                lambda: saver.adelete_user_threads(user_id),
            )
            _apply_threads(report, deleted)
        yield Call(lambda: _flush(wrapper_sink, audit), lambda: _aflush(wrapper_sink, audit))
        if audit is not None:
            report.audit_events = yield Call.same(lambda: audit.delete_user(user_id))
    if audit is not None:
        event = AuditEvent(user_id, "erase", component, actor=actor, detail=report.counts())
        done = event if quarantine else _erase_event(user_id, report, component, actor)
        yield Call.same(lambda: audit.record(done))
    return report


def erase_user(store: BaseStore, user_id: str, **options: Unpack[EraseOptions]) -> ErasureReport:
    """Erase ``user_id`` from the store and, when given, the saver, job queue and audit log.

    Options (:class:`EraseOptions`): ``saver``, a ``VaultSaver`` (anything with
    ``list_threads``/``delete_user_threads``); ``jobs``, a ``JobQueue``; ``audit``, an
    ``AuditLog``; ``soft_days`` quarantines instead; ``namespaces``, ``extra_prefixes``,
    ``actor``, ``component``.
    """
    return run_steps(_erase_steps(store, user_id, **options))


async def aerase_user(
    store: BaseStore, user_id: str, **options: Unpack[EraseOptions]
) -> ErasureReport:
    """Async :func:`erase_user` (``AsyncVaultSaver``, ``AsyncJobQueue``, ``AsyncAuditLog``)."""
    return await arun_steps(_erase_steps(store, user_id, **options))


# --- soft delete: restore and purge ----------------------------------------------------------


def _restore_plan(user_id: str, prefixes: list[tuple[str, ...]]) -> StorePlan[int]:
    (marker,) = yield Batch([GetOp(MARKERS, user_id)])
    if not isinstance(marker, Item):
        raise KeyError(f"user {user_id!r} is not soft-erased")
    items: list[Item] = []
    for prefix in prefixes:
        items.extend((yield from _items_under((QUARANTINE, *prefix))))
    ops: list[StoreOp] = [PutOp(MARKERS, user_id, None)]
    for item in items:
        original = tuple(item.namespace)[1:]
        section = {"semantic": "memories"}.get(original[-1], original[-1])
        usage = original[: len(USAGE_ROOT)] == USAGE_ROOT
        ops.append(PutOp(tuple(item.namespace), item.key, None))
        if section in KINDS and not usage:  # a memory: the write rule (private: unindexed)
            ops += memory_ops(original, item.key, item.value, kind=KINDS[section])
        else:
            ops.append(PutOp(original, item.key, dict(item.value), index=False))
    yield Batch(ops)
    return len(items)


def restore_user(
    store: BaseStore, user_id: str, *, namespaces: MemoryNamespaces | None = None
) -> int:
    """Undo a soft erase: move the quarantined items back; returns how many."""
    return run_steps(_restore_plan(user_id, _user_prefixes(user_id, namespaces, ())), store)


async def arestore_user(
    store: BaseStore, user_id: str, *, namespaces: MemoryNamespaces | None = None
) -> int:
    """Async :func:`restore_user`."""
    prefixes = _user_prefixes(user_id, namespaces, ())
    return await arun_steps(_restore_plan(user_id, prefixes), store)


def _due_plan(now: datetime) -> StorePlan[list[str]]:
    items = yield from _items_under(MARKERS)
    return sorted(i.key for i in items if datetime.fromisoformat(i.value["purge_after"]) <= now)


def _purge_steps(
    store: BaseStore, now: datetime | None, options: EraseOptions
) -> Steps[dict[str, ErasureReport]]:
    """``purge_erased``: each due user erased with ``options`` (component ``purge``)."""
    due = yield Within(store, _due_plan(now or datetime.now(UTC)))
    reports = {}
    for user_id in due:
        reports[user_id] = yield from _erase_steps(store, user_id, **options)
    return reports


def purge_erased(
    store: BaseStore,
    *,
    saver: Any = None,
    jobs: Any = None,
    audit: Any = None,
    namespaces: MemoryNamespaces | None = None,
    now: datetime | None = None,
) -> dict[str, ErasureReport]:
    """Hard-erase every soft-erased user whose grace period is over; reports by user id."""
    options = EraseOptions(
        saver=saver, jobs=jobs, audit=audit, namespaces=namespaces, component="purge"
    )
    return run_steps(_purge_steps(store, now, options))


async def apurge_erased(
    store: BaseStore,
    *,
    saver: Any = None,
    jobs: Any = None,
    audit: Any = None,
    namespaces: MemoryNamespaces | None = None,
    now: datetime | None = None,
) -> dict[str, ErasureReport]:
    """Async :func:`purge_erased`."""
    options = EraseOptions(
        saver=saver, jobs=jobs, audit=audit, namespaces=namespaces, component="purge"
    )
    return await arun_steps(_purge_steps(store, now, options))
