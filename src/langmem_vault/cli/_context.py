"""What every admin command shares: the connection options, the service it opens, how it
prints (a Rich table for people, ``--json`` for scripts) and how it fails (one line on
stderr, exit code 2 for bad input, nothing written).
"""

from __future__ import annotations

import getpass
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, NoReturn

import typer
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn
from rich.table import Table

from langmem_vault.service import Identity, MemoryService, ServiceError

__all__ = [
    "BAD_INPUT",
    "DsnOption",
    "EveryoneOption",
    "JsonOption",
    "SchemaOption",
    "UserOption",
    "emit",
    "fail",
    "open_service",
    "parse_time",
    "print_json",
    "progress",
    "service_for",
    "table",
]

#: the exit code of every bad-input error (unknown user, malformed file, wrong key, bad field)
BAD_INPUT = 2
SCHEMA_ENV = "LANGMEM_VAULT_SCHEMA"
UNFOLDED = frozenset({"key", "thread", "created", "at", "ended", "last activity", "expires"})

DsnOption = Annotated[
    str | None,
    typer.Option(help="PostgreSQL DSN (default: $LANGMEM_VAULT_DSN, else the embedded server)"),
]
SchemaOption = Annotated[
    str | None,
    typer.Option(help="database schema (default: $LANGMEM_VAULT_SCHEMA, else langmem_vault)"),
]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]
UserOption = Annotated[str, typer.Option("--user", "-u", help="the user id")]
EveryoneOption = Annotated[
    str | None, typer.Option("--user", "-u", help="one user (default: everyone)")
]

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, code: int = BAD_INPUT) -> NoReturn:
    """Print one error line on stderr and exit with ``code``."""
    err.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(code)


class _LazyEmbeddings(Embeddings):
    """The local embeddings, loaded on the first text to embed: a listing never pays for it."""

    def _model(self) -> Embeddings:
        from langmem_vault.embeddings import local_embeddings

        return local_embeddings()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._model().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._model().embed_query(text)


def _actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no passwd entry (containers)
        return "cli"


@contextmanager
def open_service(dsn: str | None, schema: str | None) -> Iterator[MemoryService]:
    """A :class:`MemoryService` acting as an admin (``cli:<os user>``) over one pool: the
    store (local embeddings), the saver, the audit log and the job queue, set up
    (idempotent)."""
    from langmem_vault.checkpointers import VaultSaver
    from langmem_vault.db._connection import open_pool
    from langmem_vault.db._embedded import EmbeddedServerError, resolve_dsn
    from langmem_vault.db._migrations import DEFAULT_SCHEMA
    from langmem_vault.embeddings import default_index
    from langmem_vault.jobs._queue import JobQueue
    from langmem_vault.privacy._audit.log import AuditLog
    from langmem_vault.store import VaultStore

    name = schema or os.environ.get(SCHEMA_ENV) or DEFAULT_SCHEMA
    try:
        uri = resolve_dsn(dsn)
    except (ValueError, EmbeddedServerError) as exc:
        fail(f"dsn: {exc}", 1)
    try:
        pool = open_pool(uri, max_size=4)
    except Exception as exc:  # psycopg's connection errors: say which and stop
        fail(f"cannot connect to the database: {exc}", 1)
    with pool:
        index = default_index(_LazyEmbeddings())
        try:
            store = VaultStore(pool, schema=name, index=index)
        except ValueError as exc:
            fail(f"schema: {exc}")
        saver = VaultSaver(pool, schema=name)
        audit = AuditLog(pool, schema=name)
        jobs = JobQueue(pool, schema=name)
        for component in (store, saver, audit, jobs):
            component.setup()
        yield MemoryService(
            store,
            saver=saver,
            audit=audit,
            jobs=jobs,
            identity=Identity.admin(_actor()),
            component="cli",
        )


@contextmanager
def service_for(dsn: str | None, schema: str | None, user: str | None) -> Iterator[MemoryService]:
    """:func:`open_service` with errors :func:`handled`, after checking that ``user`` (when
    given) has memories or threads: an unknown user is exit 2, not an empty table."""
    with open_service(dsn, schema) as service, handled():
        if user is not None:
            service.require_user(user)
        yield service


@contextmanager
def handled() -> Iterator[None]:
    """Turn a service error into one line on stderr and exit code 2."""
    try:
        yield
    except ServiceError as exc:
        fail(str(exc))


def emit(value: Any, as_json: bool, message: str) -> None:
    """``value`` as JSON with ``--json``, else the one-line ``message`` (never markup)."""
    if as_json:
        print_json(value)
    else:
        out.print(escape(message))


def print_json(value: Any) -> None:
    """``value`` (models, lists of models, dicts) as indented JSON on stdout."""

    def plain(item: Any) -> Any:
        if isinstance(item, BaseModel):
            return item.model_dump(mode="json")
        if isinstance(item, list | tuple):
            return [plain(i) for i in item]
        return item

    typer.echo(json.dumps(plain(value), indent=2, default=str, ensure_ascii=False))


def table(
    title: str | None,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    caption: str | None = None,
) -> None:
    """A Rich table on stdout (cells escaped: stored text is never markup)."""
    shown = Table(title=title, caption=caption, show_lines=False)
    for column in columns:
        # A key or a thread id is what the next command needs, never folded in two; times
        # neither (the text column folds instead).
        shown.add_column(column, overflow="fold", no_wrap=column in UNFOLDED)
    for row in rows:
        shown.add_row(*(escape(_cell(v)) for v in row))
    out.print(shown)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


_RELATIVE = re.compile(r"^(\d+)([dhm])$")


def parse_time(value: str | None, name: str) -> datetime | None:
    """``--since``/``--until``: an ISO date or time (UTC unless it says), or ``7d``/``12h``/
    ``30m`` ago. A bad value exits 2 naming the option."""
    if value is None:
        return None
    relative = _RELATIVE.match(value.strip())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        delta = {"d": timedelta(days=amount), "h": timedelta(hours=amount)}.get(
            unit, timedelta(minutes=amount)
        )
        return datetime.now(UTC) - delta
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        fail(f"{name}: expected an ISO date (2026-11-01), a time, or 7d/12h/30m; got {value!r}")
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@contextmanager
def progress(description: str, total: int) -> Iterator[Callable[[str], None]]:
    """A Rich progress bar on stderr; the yielded function advances it one step and names
    the next one. Stderr keeps ``--json`` on stdout clean."""
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        console=err,
        transient=False,
    )
    with bar:
        task = bar.add_task(description, total=total)

        def step(next_description: str) -> None:
            bar.update(task, advance=1, description=next_description)

        try:
            yield step
        except BaseException:
            # A failed operation leaves its one error line, not a half-filled bar.
            bar.live.transient = True
            raise
