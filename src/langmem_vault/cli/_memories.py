"""``langmem-vault memories ...``: list, search, show, add, edit, forget, restore, confirm,
reject. ``memories list --status pending`` is the confirmation queue."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from langmem_vault.cli._context import (
    DsnOption,
    JsonOption,
    SchemaOption,
    UserOption,
    emit,
    fail,
    parse_time,
    print_json,
    service_for,
    table,
)
from langmem_vault.service._records import MemoryRecord

__all__ = ["register"]

memories = typer.Typer(help="List, search and correct a user's memories.", no_args_is_help=True)

KeyArg = Annotated[str, typer.Argument(help="the memory's key (from `memories list`)")]
COLUMNS = ("key", "kind", "status", "category", "text", "conf", "created")


def _row(m: MemoryRecord) -> list[Any]:
    text = f"(unreadable) {m.unreadable}" if m.unreadable else m.text
    return [m.key, m.kind, m.status, m.category, text, m.confidence, m.created_at]


def _show(record: MemoryRecord, as_json: bool) -> None:
    if as_json:
        print_json(record)
        return
    rows = [(name, record.value.get(name)) for name in sorted(record.value)]
    table(f"{record.kind} memory {record.key} ({record.status})", ("field", "value"), rows)


@memories.command("list")
def list_(
    user: UserOption,
    kind: Annotated[str | None, typer.Option(help="semantic, instruction or episode")] = None,
    status: Annotated[
        list[str] | None,
        typer.Option(help="active, pending, superseded, forgotten, expired, disabled (repeat)"),
    ] = None,
    category: Annotated[str | None, typer.Option(help="a fact category")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="a tag every result has (repeat)")] = None,
    since: Annotated[str | None, typer.Option(help="created since: ISO date/time or 7d")] = None,
    until: Annotated[str | None, typer.Option(help="created before: ISO date/time or 7d")] = None,
    limit: int = 50,
    offset: int = 0,
    after: Annotated[
        str | None, typer.Option(help="the next cursor a listing printed: the page after it")
    ] = None,
    exact_total: Annotated[
        bool, typer.Option(help="count every match (else up to 1,000; none with filters)")
    ] = False,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """A user's memories, newest first, with filters (``--status pending``: the queue)."""
    filters: dict[str, Any] = {
        "kind": kind,
        "status": status or None,
        "category": category,
        "tags": tag or [],
        "since": parse_time(since, "since"),
        "until": parse_time(until, "until"),
        "limit": limit,
        "offset": offset,
        "after": after,
        "exact_total": exact_total,
    }
    with service_for(dsn, schema, user) as service:
        page = service.list_memories(user, **filters)
    if as_json:
        print_json(page)
        return
    of = "" if page.total is None else f" of {page.total}{'+' if page.total_capped else ''}"
    shown = f"{offset + 1}-{offset + len(page.items)}{of}" if page.items else "none"
    if page.next:
        shown += f"; next page: --after {page.next}"
    table(f"memories of {user}", COLUMNS, [_row(m) for m in page.items], caption=shown)


@memories.command()
def search(
    user: UserOption,
    query: Annotated[str, typer.Argument(help="what to look for")],
    search_type: Annotated[str, typer.Option("--type", help="text, semantic or hybrid")] = "hybrid",
    min_relevance: Annotated[
        float, typer.Option(help="drop hits below this (0..1); vector scores of unrelated text")
    ] = 0.25,
    kind: Annotated[str | None, typer.Option(help="semantic, instruction or episode")] = None,
    status: Annotated[list[str] | None, typer.Option(help="statuses to search (repeat)")] = None,
    limit: int = 10,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search a user's memories: each hit with its relevance and how it matched."""
    with service_for(dsn, schema, user) as service:
        found = service.search_memories(
            user,
            query,
            search_type=search_type,  # type: ignore[arg-type]
            min_relevance=min_relevance,
            kind=kind,
            status=status or None,
            limit=limit,
        )
    if as_json:
        print_json(found)
        return
    rows = [[h.key, h.kind, h.status, h.text, h.relevance, h.match_type] for h in found.items]
    columns = ("key", "kind", "status", "text", "relevance", "match")
    table(f"{search_type} search: {query}", columns, rows, caption=f"{len(rows)} hits")


@memories.command()
def show(
    user: UserOption,
    key: KeyArg,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Every field of one memory."""
    with service_for(dsn, schema, user) as service:
        record = service.get_memory(user, key)
    _show(record, as_json)


@memories.command()
def add(
    user: UserOption,
    text: Annotated[str, typer.Argument(help="the fact")],
    category: str = "general",
    tag: Annotated[list[str] | None, typer.Option(help="a tag (repeat)")] = None,
    confidence: float = 1.0,
    private: Annotated[bool, typer.Option(help="never indexed; sealed with the key")] = False,
    evidence: str | None = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add a fact for a user (a new user is fine)."""
    with service_for(dsn, schema, None) as service:
        record = service.add_memory(
            user,
            text,
            category=category,
            tags=tag or [],
            confidence=confidence,
            private=private,
            evidence=evidence,
        )
    emit(record, as_json, f"added {record.key}")


def _parse_set(pairs: list[str]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name.strip():
            fail(f"set: expected FIELD=VALUE, got {pair!r}")
        try:
            changes[name.strip()] = json.loads(raw)
        except ValueError:
            changes[name.strip()] = raw  # a bare string needs no quotes
    return changes


@memories.command()
def edit(
    user: UserOption,
    key: KeyArg,
    text: str | None = None,
    category: str | None = None,
    confidence: float | None = None,
    tag: Annotated[list[str] | None, typer.Option(help="replace the tags (repeat)")] = None,
    private: Annotated[bool | None, typer.Option("--private/--public")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="any field: FIELD=VALUE (JSON or a bare string; repeat)"),
    ] = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Change fields of a memory (re-embedded when the text changes)."""
    changes = _parse_set(set_ or [])
    given = {"text": text, "category": category, "confidence": confidence, "private": private}
    changes.update({k: v for k, v in given.items() if v is not None})
    if tag is not None:
        changes["tags"] = tag
    with service_for(dsn, schema, user) as service:
        record = service.edit_memory(user, key, **changes)
    emit(record, as_json, f"edited {record.key}: {', '.join(sorted(changes))}")


@memories.command()
def forget(
    user: UserOption,
    key: KeyArg,
    hard: Annotated[bool, typer.Option(help="erase instead of closing (not restorable)")] = False,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Forget a memory: closed and restorable by default, erased with --hard."""
    with service_for(dsn, schema, user) as service:
        record = service.forget_memory(user, key, hard=hard)
    emit(record, as_json, f"{'erased' if hard else 'forgot'} {record.key}")


def _transition(name: str, done: str) -> None:
    def command(
        user: UserOption,
        key: KeyArg,
        dsn: DsnOption = None,
        schema: SchemaOption = None,
        as_json: JsonOption = False,
    ) -> None:
        with service_for(dsn, schema, user) as service:
            record = getattr(service, f"{name}_memory")(user, key)
        emit(record, as_json, f"{done} {record.key} (now {record.status})")

    command.__doc__ = {
        "confirm": "Confirm a pending fact: it becomes active.",
        "reject": "Reject a pending fact: it is closed (restorable).",
        "restore": "Restore a forgotten fact or a disabled instruction.",
    }[name]
    memories.command(name)(command)


for _name, _done in (("confirm", "confirmed"), ("reject", "rejected"), ("restore", "restored")):
    _transition(_name, _done)


def register(app: typer.Typer) -> None:
    """Add the ``memories`` group to the root app."""
    app.add_typer(memories, name="memories")
