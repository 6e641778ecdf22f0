"""Export and import one user's memories: a documented, versioned JSON format, and CSV.

Works on any BaseStore, through the namespace templates (``MemoryNamespaces``), so a user's
data moves between VaultStore, PostgresStore and InMemoryStore.

Format ``langmem-vault-export``, version 1 (a JSON object)::

    {
      "format": "langmem-vault-export",
      "version": 1,
      "exported_at": "2026-11-22T01:00:00+00:00",   # informational
      "user_id": "alice",
      "memories":     [{"key": "...", "value": {...SemanticFact...}}, ...],
      "instructions": [{"key": "...", "value": {...Instruction...}}, ...],
      "episodes":     [{"key": "...", "value": {...Episode...}}, ...],
      "consent": {"allow_extraction": true, ...} | null,
      "threads": [{"thread_id", "title", "message_count", "started_at", "last_activity"}],
      "pending": [{"thread_id", "messages": [{"type", "data"}, ...], "kept_at"}],
      "unreadable": [{"section", "key", "reason"}]
    }

Each list is sorted by key; each value is the stored dict as the memory model writes it
(see :mod:`langmem_vault.memory._models`), with private facts decrypted when a keyring is given
(the user gets their words back), or left sealed (``"enc"``, ``"enc_kid"``) otherwise; a
private fact the keyring cannot open (its key is gone) stays sealed and is listed in
``unreadable`` with the reason and how to recover.
``threads`` is the saver's per-user thread index, for transparency: conversations are not
exported, so import does not recreate threads. ``pending`` holds what inline extraction keeps
of a thread's messages until it reads them (``memory.namespaces.tails_namespace``; LangChain's
``messages_to_dict`` form): words the user said that are held but not yet learnt from. It is
there for the same transparency and import skips it too. Unknown top-level keys are ignored
by import; a higher ``version`` is refused. A value is checked against its model as every
write is: unknown fields are refused, types are strict, and keys follow the key rule
(:mod:`langmem_vault.memory._keys`).

With ``audit=`` (an audit log or buffer) each export and import is logged, with counts.

Import validates the whole document first (every value against its model) and then writes
everything in one batch (atomic on VaultStore): on a bad document nothing is written. Private
facts are sealed again when a keyring is given, and stored unindexed (``memory_put``).

>>> from langgraph.store.memory import InMemoryStore
>>> store = InMemoryStore()
>>> doc = export_user(store, "u1")
>>> doc["format"], doc["version"], doc["memories"]
('langmem-vault-export', 1, [])
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchOp
from pydantic import ValidationError

from langmem_vault.db._steps import Call, arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StoreOp, StorePlan
from langmem_vault.memory._keys import InvalidKeyError, check_key
from langmem_vault.memory._models import Episode, Instruction, MemoryModel, SemanticFact
from langmem_vault.memory._namespaces import MemoryNamespaces, ResolvedNamespaces, tails_namespace
from langmem_vault.memory._recall.usage import read_usage_plan, usage_namespace, with_usage
from langmem_vault.memory._sealing import UNREADABLE, Keyring, open_or_mark
from langmem_vault.memory._writes import memory_ops
from langmem_vault.privacy._audit.log import AuditEvent
from langmem_vault.privacy._subject_rights.consent import (
    CONSENT_KEY,
    ConsentSettings,
    consent_namespace,
)

T = TypeVar("T")

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "ImportReport",
    "InvalidExportError",
    "aexport_user",
    "aimport_user",
    "csv_cell",
    "export_user",
    "import_owner",
    "import_user",
    "load_export",
    "memories_csv",
]

EXPORT_FORMAT = "langmem-vault-export"
EXPORT_VERSION = 1
PAGE = 500
MAX_ITEMS = 100_000
SECTIONS: tuple[tuple[str, str, type[MemoryModel]], ...] = (
    ("memories", "semantic", SemanticFact),
    ("instructions", "instructions", Instruction),
    ("episodes", "episodes", Episode),
)
#: export section -> the memory kind its rows hold
KINDS = {"memories": "semantic", "instructions": "instruction", "episodes": "episode"}
CSV_COLUMNS = (
    "key", "text", "category", "tags", "confidence", "source", "status", "private",
    "evidence", "created_at", "updated_at", "observed_at", "valid_from", "valid_to",
)  # fmt: skip


class InvalidExportError(ValueError):
    """An export document that cannot be imported; the message names the field."""


def _namespaces(user_id: str, namespaces: MemoryNamespaces | None) -> ResolvedNamespaces:
    if not isinstance(user_id, str) or not user_id:
        raise ValueError(f"user_id must be a non-empty string, got {user_id!r}")
    return (namespaces or MemoryNamespaces()).resolve({"configurable": {"user_id": user_id}})


def _list_all(namespace: tuple[str, ...]) -> StorePlan[list[Item]]:
    found: list[Item] = []
    offset = 0
    while True:
        # refresh_ttl=False: reading for an export must not extend what a TTL would expire
        # (the pending tails' 30 days; memories in a store with a default TTL).
        (items,) = yield Batch([SearchOp(namespace, limit=PAGE, offset=offset, refresh_ttl=False)])
        # A prefix search also returns deeper namespaces; the sections are exact namespaces.
        found.extend(i for i in items if tuple(i.namespace) == namespace)
        if len(items) < PAGE:
            return found
        offset += PAGE
        if offset > MAX_ITEMS:
            raise ValueError(f"more than {MAX_ITEMS} items in {namespace!r}")


def _export_plan(
    user_id: str, saver: Any, namespaces: MemoryNamespaces | None, keyring: Keyring | None
) -> StorePlan[dict[str, Any]]:
    threads: list[dict[str, Any]] = []
    if saver is not None:  # its per-user thread index: a call on the saver, not the store
        rows = yield Call(
            lambda: saver.list_threads(user_id, limit=MAX_THREADS),
            lambda: saver.alist_threads(user_id, limit=MAX_THREADS),
        )
        threads = _thread_rows(rows)
    ns = _namespaces(user_id, namespaces)
    doc: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "user_id": user_id,
    }
    unreadable: list[dict[str, str]] = []
    for section, attr, _model in SECTIONS:
        namespace = getattr(ns, attr)
        items = yield from _list_all(namespace)
        usage = yield from read_usage_plan((namespace, i.key) for i in items)
        rows = []
        for item in sorted(items, key=lambda i: i.key):
            # An unreadable private fact is exported still sealed (an import with the old key
            # opens it) and listed under "unreadable" with the reason.
            value = open_or_mark(item.value, keyring, namespace, item.key)
            if (reason := value.pop(UNREADABLE, None)) is not None:
                unreadable.append({"section": section, "key": item.key, "reason": reason})
            # The export carries the usage counts in the value; import_user takes them so.
            value = with_usage(value, usage.get((namespace, item.key)))
            rows.append({"key": item.key, "value": value})
        doc[section] = rows
    doc["unreadable"] = unreadable
    (consent,) = yield Batch([GetOp(consent_namespace(user_id), CONSENT_KEY)])
    doc["consent"] = dict(consent.value) if isinstance(consent, Item) else None
    doc["threads"] = threads
    tails = yield from _list_all(tails_namespace(ns.semantic))
    doc["pending"] = [
        {
            "thread_id": item.key,
            "messages": item.value.get("messages", []),
            "kept_at": item.updated_at.isoformat(),
        }
        for item in sorted(tails, key=lambda i: i.key)
    ]
    return doc


def _thread_rows(infos: Sequence[Any]) -> list[dict[str, Any]]:
    rows = []
    for info in infos:
        row = asdict(info)
        row.pop("user_id", None)
        for name in ("started_at", "last_activity"):
            if isinstance(row.get(name), datetime):
                row[name] = row[name].isoformat()
        rows.append(row)
    return sorted(rows, key=lambda r: r["thread_id"])


MAX_THREADS = 100_000


def export_user(
    store: BaseStore,
    user_id: str,
    *,
    saver: Any = None,
    keyring: Keyring | None = None,
    namespaces: MemoryNamespaces | None = None,
    audit: Any = None,
    actor: str | None = None,
) -> dict[str, Any]:
    """One user's memories, instructions, episodes, consent, thread index and pending (not yet
    extracted) messages as a dict.

    ``saver`` is optional; anything with ``list_threads(user_id, limit=...)`` (``VaultSaver``).
    ``json.dumps(doc)`` gives the file.

    >>> doc = export_user(store, "alice", saver=saver, keyring=Keyring.from_env())  # doctest: +SKIP
    """
    plan = _export_plan(user_id, saver, namespaces, keyring)
    return run_steps(_recorded(plan, audit, lambda doc: _export_event(doc, actor)), store)


async def aexport_user(
    store: BaseStore,
    user_id: str,
    *,
    saver: Any = None,
    keyring: Keyring | None = None,
    namespaces: MemoryNamespaces | None = None,
    audit: Any = None,
    actor: str | None = None,
) -> dict[str, Any]:
    """Async :func:`export_user` (``saver`` needs ``alist_threads``)."""
    plan = _export_plan(user_id, saver, namespaces, keyring)
    return await arun_steps(_recorded(plan, audit, lambda doc: _export_event(doc, actor)), store)


#: what a spreadsheet reads as the start of a formula (OWASP, "CSV injection")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A cell a spreadsheet shows as text: one starting like a formula gets a leading ``'``.

    >>> csv_cell("=1+1"), csv_cell("-1"), csv_cell("tea"), csv_cell(0.5)
    ("'=1+1", "'-1", 'tea', 0.5)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def memories_csv(doc: Mapping[str, Any]) -> str:
    """The ``memories`` of an export as CSV (one row per fact; tags joined by ``;``); a text
    cell that a spreadsheet would run as a formula is escaped (:func:`csv_cell`).

    >>> memories_csv({"memories": []}).splitlines()[0].split(",")[:3]
    ['key', 'text', 'category']
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for row in doc.get("memories") or []:
        value = dict(row["value"])
        value["tags"] = ";".join(value.get("tags") or [])
        cells = {"key": row["key"], **{c: value.get(c) for c in CSV_COLUMNS[1:]}}
        writer.writerow({name: csv_cell(cell) for name, cell in cells.items()})
    return out.getvalue()


# --- import ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportReport:
    """How many of each kind an import wrote."""

    memories: int = 0
    instructions: int = 0
    episodes: int = 0
    consent: bool = False


REQUIRED = ("format", "version")


def load_export(doc: Any) -> Mapping[str, Any]:
    """An export document (a dict, or its JSON text) checked for its format and version;
    :class:`InvalidExportError` saying what a file of another shape lacks.

    >>> load_export({"memories": []})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    langmem_vault...InvalidExportError: document: not a langmem-vault export: it lacks "format", ...
    """
    if isinstance(doc, str | bytes):
        try:
            doc = json.loads(doc)
        except ValueError as exc:
            raise InvalidExportError(f"document: not JSON: {exc}") from None
        except RecursionError:  # "[[[[..." nested deeper than the parser's stack
            raise InvalidExportError("document: not JSON: nested too deeply") from None
    if not isinstance(doc, Mapping):
        raise InvalidExportError(
            f"document: an export must be a JSON object, got {type(doc).__name__}"
        )
    missing = [name for name in REQUIRED if name not in doc]
    if missing:
        lacks = ", ".join(f'"{name}"' for name in missing)
        raise InvalidExportError(
            f"document: not a langmem-vault export: it lacks {lacks} (expected "
            f'{{"format": "{EXPORT_FORMAT}", "version": {EXPORT_VERSION}, "user_id": ..., '
            '"memories": [...], ...})'
        )
    if doc.get("format") != EXPORT_FORMAT:
        raise InvalidExportError(f"format must be {EXPORT_FORMAT!r}, got {doc.get('format')!r}")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidExportError(f"version must be a positive integer, got {version!r}")
    if version > EXPORT_VERSION:
        raise InvalidExportError(
            f"version {version} is newer than this library reads ({EXPORT_VERSION}); upgrade"
        )
    return doc


def import_owner(doc: Mapping[str, Any], user_id: str | None) -> str:
    """Whom an import writes for: ``user_id``, else the document's own."""
    owner = user_id if user_id is not None else doc.get("user_id")
    if not isinstance(owner, str) or not owner.strip():
        raise InvalidExportError(
            f'user_id: the document names no user ("user_id" is {doc.get("user_id")!r}); '
            "name the user to import for"
        )
    return owner


#: what an exported value may hold beyond its model's fields: the sealed envelope of a
#: private fact exported without a keyring, and the usage counts export merges in
VALUE_EXTRAS = frozenset({"enc", "enc_kid", "usage_count", "access_count", "last_accessed"})


def _checked_value(
    model: type[MemoryModel], value: Mapping[str, Any], where: str
) -> dict[str, Any]:
    """The value as the model writes it: unknown fields refused, types strict (JSON's: a
    date is an ISO string, ``"false"`` is not a boolean), missing fields their defaults."""
    unknown = sorted(set(value) - set(model.model_fields) - VALUE_EXTRAS)
    if unknown:
        raise InvalidExportError(f"{where}.value.{unknown[0]}: not a field of a {model.__name__}")
    try:
        checked = model.model_validate_json(json.dumps(dict(value), default=str), strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise InvalidExportError(f"{where}.value.{field}: {first['msg']}") from None
    extras = {k: value[k] for k in VALUE_EXTRAS & set(value) if k not in model.model_fields}
    return {**checked.to_store(), **extras}


def _import_ops(
    doc: Mapping[str, Any], ns: ResolvedNamespaces, keyring: Keyring | None
) -> tuple[list[StoreOp], dict[str, int]]:
    ops: list[StoreOp] = []
    counts: dict[str, int] = {}
    total = 0
    for section, attr, model in SECTIONS:
        rows = doc.get(section) or []
        if not isinstance(rows, list):
            raise InvalidExportError(f"{section} must be a list, got {type(rows).__name__}")
        total += len(rows)
        if total > MAX_ITEMS:
            raise InvalidExportError(f"more than {MAX_ITEMS} items; split the import")
        namespace = getattr(ns, attr)
        seen: set[str] = set()
        for i, row in enumerate(rows):
            where = f"{section}[{i}]"
            if not isinstance(row, Mapping) or not isinstance(row.get("value"), Mapping):
                raise InvalidExportError(f"{where} must be an object with 'key' and 'value'")
            try:
                key = check_key(row.get("key"), field=f"{where}.key")
            except InvalidKeyError as exc:
                raise InvalidExportError(str(exc)) from None
            if key in seen:
                raise InvalidExportError(f"{where}.key {key!r} appears twice")
            seen.add(key)
            value = _checked_value(model, row["value"], where)
            # The write rule: private facts sealed (with a keyring) and never indexed; [] also
            # drops the index of a public memory this import overwrites; the entities a
            # memory names are linked again (relink: an overwritten memory's old ones go).
            ops += memory_ops(
                namespace, key, value, kind=KINDS[section], keyring=keyring, relink=True
            )
            # The value carries its usage counts; a usage record left from before would
            # count them twice.
            ops.append(PutOp(usage_namespace(namespace), key, None))
        counts[section] = len(rows)
    return ops, counts


def _import_plan(
    doc: Any,
    user_id: str | None,
    keyring: Keyring | None,
    namespaces: MemoryNamespaces | None,
) -> tuple[str, StorePlan[ImportReport]]:
    """Validate everything now; the returned plan only writes."""
    doc = load_export(doc)
    owner = import_owner(doc, user_id)
    ns = _namespaces(owner, namespaces)
    ops, counts = _import_ops(doc, ns, keyring)
    consent = doc.get("consent")
    if consent is not None:
        if not isinstance(consent, Mapping):
            raise InvalidExportError("consent must be an object or null")
        try:
            settings = ConsentSettings.from_store(dict(consent))
        except (ValueError, TypeError) as exc:
            raise InvalidExportError(f"consent: {exc}") from None
        ops.append(PutOp(consent_namespace(owner), CONSENT_KEY, settings.to_store(), index=False))
    report = ImportReport(
        memories=counts["memories"],
        instructions=counts["instructions"],
        episodes=counts["episodes"],
        consent=consent is not None,
    )
    return owner, _write_plan(ops, report)


def _write_plan(ops: list[StoreOp], report: ImportReport) -> StorePlan[ImportReport]:
    if ops:
        yield Batch(ops)  # one batch: all or nothing on VaultStore
    return report


def _export_event(doc: Mapping[str, Any], actor: str | None) -> AuditEvent:
    counts = {s: len(doc[s]) for s in (*(s for s, _, _ in SECTIONS), "threads", "pending")}
    return AuditEvent(doc["user_id"], "export", "portability", actor=actor, detail=counts)


def _import_event(owner: str, report: ImportReport, actor: str | None) -> AuditEvent:
    return AuditEvent(owner, "import", "portability", actor=actor, detail=asdict(report))


def _recorded(plan: StorePlan[T], audit: Any, event: Callable[[T], AuditEvent]) -> StorePlan[T]:
    """``plan``, then (given an audit log, sync or async) its event recorded."""
    result = yield from plan
    if audit is not None:
        yield Call.same(lambda: audit.record(event(result)))
    return result


def import_user(
    store: BaseStore,
    doc: Mapping[str, Any] | str | bytes,
    *,
    user_id: str | None = None,
    keyring: Keyring | None = None,
    namespaces: MemoryNamespaces | None = None,
    audit: Any = None,
    actor: str | None = None,
) -> ImportReport:
    """Restore an export (a dict or its JSON text) into ``store``.

    ``user_id`` defaults to the document's; pass another to move the data to a new id.
    Items with the same keys are overwritten; others are left alone (erase first for a
    clean restore). Raises :class:`InvalidExportError` naming the field; nothing is written.

    >>> import_user(store, json.load(open("alice.json")), keyring=ring)  # doctest: +SKIP
    ImportReport(memories=12, instructions=2, episodes=5, consent=True)
    """
    owner, plan = _import_plan(doc, user_id, keyring, namespaces)
    return run_steps(
        _recorded(plan, audit, lambda report: _import_event(owner, report, actor)), store
    )


async def aimport_user(
    store: BaseStore,
    doc: Mapping[str, Any] | str | bytes,
    *,
    user_id: str | None = None,
    keyring: Keyring | None = None,
    namespaces: MemoryNamespaces | None = None,
    audit: Any = None,
    actor: str | None = None,
) -> ImportReport:
    """Async :func:`import_user`."""
    owner, plan = _import_plan(doc, user_id, keyring, namespaces)
    steps = _recorded(plan, audit, lambda report: _import_event(owner, report, actor))
    return await arun_steps(steps, store)
