"""``langmem-vault export|import|erase|unerase|consent|audit|stats|users|rotate-keys``: one
user's data as a whole, and the numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from langmem_vault.cli._context import (
    DsnOption,
    EveryoneOption,
    JsonOption,
    SchemaOption,
    UserOption,
    emit,
    fail,
    handled,
    open_service,
    out,
    parse_time,
    print_json,
    progress,
    service_for,
    table,
)

if TYPE_CHECKING:
    from langmem_vault.memory._recall.accounting import Accounting, ModelPrice

__all__ = ["register"]

FileArg = Annotated[Path, typer.Argument(help="the export file (JSON)")]


def export(
    user: UserOption,
    file: Annotated[Path | None, typer.Argument(help="write here (default: stdout)")] = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
) -> None:
    """Export a user's memories, instructions, episodes, consent and thread index as JSON."""
    with progress(f"exporting {user}", 3) as step, open_service(dsn, schema) as service:
        step("reading")
        with handled():
            doc = service.export_user(user)
        step("writing")
        text = json.dumps(doc, indent=2, ensure_ascii=False)
        if file is None:
            typer.echo(text)
        else:
            file.write_text(text + "\n", encoding="utf-8")
        step("done")
    if file is not None:
        counts = ", ".join(f"{len(doc[s])} {s}" for s in ("memories", "instructions", "episodes"))
        out.print(escape(f"exported {user} to {file}: {counts}"))


def import_(
    file: FileArg,
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="import as this user (default: the file's)")
    ] = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import an export file (validated whole first: a bad file writes nothing)."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"file: cannot read {file}: {exc}")
    with progress(f"importing {file.name}", 2) as step, open_service(dsn, schema) as service:
        step("validating and writing")
        with handled():
            result = service.import_user(text, user_id=user)
        step("done")
    message = (
        f"imported {result.memories} memories, {result.instructions} instructions, "
        f"{result.episodes} episodes for {result.user_id}"
    )
    emit(result, as_json, message)


def _confirmed(question: str) -> bool:
    """The answer to ``question``; input that ends first (a pipe, a script) is one error line
    and exit 2, not an ``Abort`` traceback (``main`` runs click outside standalone mode)."""
    try:
        return typer.confirm(question)
    except typer.Abort:
        fail("erase: the input ended before an answer; pass --yes to erase without asking")


def erase(
    user: UserOption,
    soft_days: Annotated[
        float | None, typer.Option(help="quarantine for N days instead (undo: unerase)")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask")] = False,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Erase a user everywhere: memories, threads, jobs and audit events."""
    with open_service(dsn, schema) as service:
        with handled():
            service.require_user(user)
        what = (
            f"quarantine {user} for {soft_days} days" if soft_days is not None else f"erase {user}"
        )
        if not yes and not _confirmed(f"{what}?"):
            fail("erase: not confirmed", 1)
        with progress(f"erasing {user}", 1) as step, handled():
            result = service.erase_user(user, soft_days=soft_days)
            step("done")
    if as_json:
        print_json(result)
    else:
        kept = f" (restorable until {result.purge_after:%Y-%m-%d})" if result.purge_after else ""
        out.print(
            escape(
                f"erased {user}: {result.store_items} items, {result.threads} threads, "
                f"{result.audit_events} audit events{kept}"
            )
        )


def unerase(
    user: UserOption,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Undo a soft erase (`erase --soft-days N`)."""
    with service_for(dsn, schema, None) as service:
        restored = service.unerase_user(user)
    emit({"user_id": user, "restored": restored}, as_json, f"restored {restored} items of {user}")


def consent(
    user: UserOption,
    extraction: Annotated[bool | None, typer.Option("--extraction/--no-extraction")] = None,
    personal: Annotated[bool | None, typer.Option("--personal/--no-personal")] = None,
    sensitive: Annotated[bool | None, typer.Option("--sensitive/--no-sensitive")] = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a user's consent, or change it with the switches."""
    given = {
        "allow_extraction": extraction,
        "allow_personal_facts": personal,
        "allow_sensitive_facts": sensitive,
    }
    changes = {k: v for k, v in given.items() if v is not None}
    with service_for(dsn, schema, None) as service:
        if not changes:
            service.require_user(user)
        view = service.consent(user, **changes)
    if as_json:
        print_json(view)
    else:
        rows = [(k, getattr(view, k)) for k in (*given, "updated_at")]
        table(f"consent of {user}", ("setting", "value"), rows)


def audit(
    user: UserOption,
    action: Annotated[list[str] | None, typer.Option(help="only these actions (repeat)")] = None,
    key: Annotated[str | None, typer.Option(help="only this memory")] = None,
    since: Annotated[str | None, typer.Option(help="ISO date/time or 7d")] = None,
    until: Annotated[str | None, typer.Option(help="ISO date/time or 7d")] = None,
    limit: int = 100,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Who did what to a user's memories, newest first."""
    filters = {
        "actions": action or None,
        "memory_key": key,
        "since": parse_time(since, "since"),
        "until": parse_time(until, "until"),
        "limit": limit,
    }
    with service_for(dsn, schema, None) as service:
        found = service.audit_log(user, **{k: v for k, v in filters.items() if v is not None})
    if as_json:
        print_json(found)
        return
    rows = [
        [e.at, e.action, e.actor, e.component, e.memory_key, json.dumps(e.detail)] for e in found
    ]
    table(f"audit log of {user}", ("at", "action", "actor", "component", "memory", "detail"), rows)


def stats(
    user: EveryoneOption = None,
    days: Annotated[int, typer.Option(help="days of growth to show")] = 14,
    prices: Annotated[
        Path | None,
        typer.Option(
            help="TOML price table (model -> input, output: USD per 1M tokens); "
            "default $LANGMEM_VAULT_PRICES",
            dir_okay=False,
        ),
    ] = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Counts, growth per day, the category and kind distribution, and the memory model
    tokens per day by operation (with their cost where priced) and stage latency."""
    table_of_prices = _prices(prices)
    with service_for(dsn, schema, user) as service:
        if table_of_prices is not None:
            service.prices = table_of_prices
        report = service.stats(user, days=days)
        accounting = service.accounting(user, days=days)
        max_rows = service.max_rows
    if as_json:
        print_json(
            {**report.model_dump(mode="json"), "accounting": accounting.model_dump(mode="json")}
        )
        return
    who = user or f"{report.users} users"
    # Counts over a sample must not read as the whole: say so in the title (--json: "capped").
    if report.capped:
        who += f" (capped: the {max_rows:,} most recently updated of each user)"
    totals = [
        ("total", report.total),
        ("this week", report.this_week),
        ("this month", report.this_month),
        ("pending", report.pending),
        *((f"kind: {k}", n) for k, n in sorted(report.by_kind.items())),
        *((f"status: {k}", n) for k, n in sorted(report.by_status.items())),
    ]
    table(f"memories of {who}", ("count", "n"), totals)
    table("active facts by category", ("category", "n"), list(report.by_category.items()))
    growth = [(g.day.isoformat(), g.added, g.total) for g in report.growth]
    table(f"growth, last {days} days", ("day", "added", "total"), growth)
    _accounting_tables(accounting, days)


def _prices(path: Path | None) -> dict[str, ModelPrice] | None:
    if path is None:
        return None
    from langmem_vault.memory._recall.accounting import load_prices

    try:
        return load_prices(path)
    except (OSError, ValueError) as exc:
        fail(f"prices: {exc}")


def _accounting_tables(accounting: Accounting, days: int) -> None:
    rows = [
        (
            t.day.isoformat(),
            t.operation,
            t.model,
            t.input_tokens,
            t.output_tokens,
            t.calls,
            "-" if t.cost is None else f"{t.cost:.4f}",
        )
        for t in accounting.tokens
    ]
    cost = None if accounting.cost is None else f"cost of priced models: ${accounting.cost:.4f}"
    columns = ("day", "operation", "model", "input", "output", "calls", "USD")
    table(f"memory model tokens, last {days} days", columns, rows, caption=cost)
    latency = [
        (stage, s["count"], s["p50"], s["p95"]) for stage, s in accounting.latency_ms.items()
    ]
    table("memory stage latency (ms)", ("stage", "count", "p50", "p95"), latency)


def rotate_keys(
    user: EveryoneOption = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Re-seal private facts under $LANGMEM_VAULT_KEY (old keys: $LANGMEM_VAULT_OLD_KEYS)."""
    with service_for(dsn, schema, user) as service:
        names = [user] if user is not None else service.list_users()
        results = []
        with progress("re-sealing", len(names)) as step:
            for name in names:
                results.append(service.rotate_keys(name))
                step(f"re-sealed {name}")
            failed = sum(r.failed for r in results)
            if failed:  # inside the bar: a failure replaces it with its one line
                first = next(r for r in results if r.failed)
                fail(
                    f"key: {failed} private memories could not be opened with the keyring "
                    f"(user {first.user_id!r}: {first.first_failure}); the others were re-sealed"
                )
    if as_json:
        print_json(results)
    else:
        resealed = sum(r.resealed + r.sealed for r in results)
        out.print(f"re-sealed {resealed} private memories of {len(results)} users")


def reembed(
    user: EveryoneOption = None,
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Embed every stored text again with the package's local model (all-MiniLM-L6-v2), in
    place: after the store was written with another model of the same dimensions."""
    with service_for(dsn, schema, None) as service:
        written = service.reembed(user)
    emit({"reembedded": written}, as_json, f"re-embedded {written} vectors")


def users(
    dsn: DsnOption = None,
    schema: SchemaOption = None,
    as_json: JsonOption = False,
) -> None:
    """Every user with stored memories."""
    with service_for(dsn, schema, None) as service:
        found = service.list_users()
    if as_json:
        print_json(found)
    else:
        table("users", ("user",), [[u] for u in found])


def register(app: typer.Typer) -> None:
    """Add the whole-user and reporting commands to the root app."""
    app.command()(export)
    app.command("import")(import_)
    for command in (erase, unerase, consent, audit, stats, users):
        app.command()(command)
    app.command("rotate-keys")(rotate_keys)
    app.command()(reembed)
