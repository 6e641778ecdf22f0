"""The root ``langmem-vault`` Typer app and its first two commands (the admin commands are
registered on it by :mod:`langmem_vault.cli`).

- ``langmem-vault demo``: two threads; the second answers from what the first taught it.
- ``langmem-vault doctor``: one line per check of this machine, with a fix for each failure;
  exit code 1 when a check fails.

>>> main(["doctor", "--no-models"])  # doctest: +SKIP
0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from langmem_vault.cli._context import DsnOption

__all__ = ["app", "main"]

app = typer.Typer(
    name="langmem-vault",
    help="Persistent memory for LangGraph apps.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
def demo(
    dsn: DsnOption = None,
    in_memory: Annotated[bool, typer.Option(help="use langgraph's InMemoryStore")] = False,
    model: Annotated[
        str | None, typer.Option(help="init_chat_model string (default openai:gpt-4o-mini)")
    ] = None,
    offline: Annotated[bool, typer.Option(help="never call a model API")] = False,
) -> None:
    """Two threads: the second answers from what the first taught it."""
    from langmem_vault._demo import run_demo
    from langmem_vault.db._embedded import EmbeddedServerError

    try:
        run_demo(dsn=dsn, in_memory=in_memory, model=model, offline=offline)
    except EmbeddedServerError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from None


@app.command()
def doctor(
    dsn: DsnOption = None,
    models: Annotated[bool, typer.Option(help="also load the embedding and spaCy models")] = True,
) -> None:
    """Check the server, pgvector, the data directory and the models; exit 1 on a failure."""
    from langmem_vault._doctor import run_checks

    # soft_wrap: one line per check whatever the width (logs and CI output are greppable).
    console = Console(highlight=False, soft_wrap=True)
    checks = run_checks(dsn, models=models)
    for check in checks:
        mark = "[green]ok  [/green]" if check.ok else "[red]FAIL[/red]"
        console.print(f"{mark} {check.name:<10} {escape(check.detail)}")
        if not check.ok:
            console.print(f"     {'':<10} fix: {escape(check.fix)}")
    if not all(check.ok for check in checks):
        raise typer.Exit(1)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; returns the process exit code."""
    # standalone_mode=False: click returns the code of typer.Exit instead of exiting.
    code = app(args=list(argv) if argv is not None else None, standalone_mode=False)
    return code if isinstance(code, int) else 0
