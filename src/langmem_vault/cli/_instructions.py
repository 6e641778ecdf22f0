"""``langmem-vault instructions ...``, ``episodes list`` and ``threads list|show|delete``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from langmem_vault.cli._context import (
    DsnOption,
    JsonOption,
    SchemaOption,
    UserOption,
    emit,
    out,
    parse_time,
    print_json,
    service_for,
    table,
)
from langmem_vault.service._records import MemoryRecord

__all__ = ["register"]

instructions = typer.Typer(help="A user's standing instructions.", no_args_is_help=True)
episodes = typer.Typer(help="What happened in a user's conversations.", no_args_is_help=True)
threads = typer.Typer(help="A user's threads on the checkpointer.", no_args_is_help=True)

KeyArg = Annotated[str, typer.Argument(help="the instruction's key")]
ThreadArg = Annotated[str, typer.Argument(help="the thread id")]


def _instruction_rows(found: list[MemoryRecord]) -> list[list[object]]:
    return [
        [i.key, i.priority, i.status, i.text, i.value.get("condition"), i.value.get("expires_at")]
        for i in found
    ]


INSTRUCTION_COLUMNS = ("key", "priority", "status", "text", "condition", "expires")


@instructions.command("list")
def list_instructions(
    user: UserOption,
    active: Annotated[bool, typer.Option(help="only active, unexpired ones")] = False,
    min_priority: int = 1,
    max_priority: int = 10,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Standing instructions, highest priority first."""
    with service_for(dsn, schema, user) as service:
        found = service.list_instructions(
            user, active_only=active, min_priority=min_priority, max_priority=max_priority
        )
    if as_json:
        print_json(found)
    else:
        table(f"instructions of {user}", INSTRUCTION_COLUMNS, _instruction_rows(found))


@instructions.command("add")
def add_instruction(
    user: UserOption,
    text: Annotated[str, typer.Argument(help="the instruction")],
    priority: Annotated[int, typer.Option(help="1..10, higher first")] = 5,
    condition: Annotated[
        str | None, typer.Option(help='when it applies ("topic contains travel")')
    ] = None,
    expires: Annotated[str | None, typer.Option(help="ISO date/time it stops applying")] = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add a standing instruction for a user."""
    expires_at = parse_time(expires, "expires")
    with service_for(dsn, schema, None) as service:
        record = service.add_instruction(
            user, text, priority=priority, condition=condition, expires_at=expires_at
        )
    emit(record, as_json, f"added {record.key}")


@instructions.command("edit")
def edit_instruction(
    user: UserOption,
    key: KeyArg,
    text: str | None = None,
    priority: int | None = None,
    condition: Annotated[str | None, typer.Option(help='"" removes the condition')] = None,
    expires: Annotated[str | None, typer.Option(help='ISO date/time; "never" removes it')] = None,
    active: Annotated[bool | None, typer.Option("--active/--inactive")] = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Change an instruction's text, priority, condition, expiry or active flag."""
    changes: dict[str, object] = {
        k: v
        for k, v in {
            "text": text,
            "priority": priority,
            "condition": condition,
            "active": active,
        }.items()
        if v is not None
    }
    if expires is not None:
        changes["expires_at"] = None if expires == "never" else parse_time(expires, "expires")
    with service_for(dsn, schema, user) as service:
        record = service.edit_instruction(user, key, **changes)
    emit(record, as_json, f"edited {record.key}: {', '.join(sorted(changes))}")


@instructions.command("disable")
def disable_instruction(
    user: UserOption,
    key: KeyArg,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Turn an instruction off (kept; `memories restore` turns it on again)."""
    with service_for(dsn, schema, user) as service:
        record = service.disable_instruction(user, key)
    emit(record, as_json, f"disabled {record.key}")


@episodes.command("list")
def list_episodes(
    user: UserOption,
    query: Annotated[str | None, typer.Option(help="most relevant to this, not newest")] = None,
    limit: int = 20,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """A user's episodes, newest first (or most relevant to --query)."""
    with service_for(dsn, schema, user) as service:
        found = service.list_episodes(user, query, limit=limit)
    if as_json:
        print_json(found)
        return
    rows = [
        [
            e.key,
            e.value.get("ended_at"),
            e.text,
            e.value.get("importance"),
            e.value.get("thread_id"),
        ]
        for e in found
    ]
    table(f"episodes of {user}", ("key", "ended", "summary", "importance"), rows)


@threads.command("list")
def list_threads(
    user: UserOption,
    limit: int = 100,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """A user's threads, most recently active first."""
    with service_for(dsn, schema, user) as service:
        found = service.list_threads(user, limit=limit)
    if as_json:
        print_json(found)
        return
    rows = [[t.thread_id, t.title, t.message_count, t.last_activity] for t in found]
    table(f"threads of {user}", ("thread", "title", "messages", "last activity"), rows)


@threads.command("show")
def show_thread(
    user: UserOption,
    thread_id: ThreadArg,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """A thread's latest messages and what memory injected and cited."""
    with service_for(dsn, schema, user) as service:
        detail = service.get_thread(user, thread_id)
    if as_json:
        print_json(detail)
        return
    rows = [[m.role, m.content] for m in detail.messages]
    table(f"thread {detail.thread_id}: {detail.title or ''}", ("role", "content"), rows)
    for name, value in detail.state.items():
        out.print(f"[bold]{escape(name)}[/bold]: {escape(str(value))}")


@threads.command("delete")
def delete_thread(
    user: UserOption,
    thread_id: ThreadArg,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete a thread of a user (every checkpoint)."""
    with service_for(dsn, schema, user) as service:
        record = service.delete_thread(user, thread_id)
    emit(record, as_json, f"deleted thread {record.thread_id} ({record.message_count} messages)")


def register(app: typer.Typer) -> None:
    """Add the ``instructions``, ``episodes`` and ``threads`` groups to the root app."""
    app.add_typer(instructions, name="instructions")
    app.add_typer(episodes, name="episodes")
    app.add_typer(threads, name="threads")
