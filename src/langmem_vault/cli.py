"""The ``langmem-vault`` command line.

>>> main(["demo", "--in-memory", "--offline"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subcommand per tool."""
    parser = argparse.ArgumentParser(
        prog="langmem-vault", description="Persistent memory for LangGraph apps."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    from langmem_vault.demo import build_parser as demo_parser

    demo_parser(
        commands.add_parser(
            "demo", help="two threads: the second answers from what the first taught it"
        )
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a subcommand; returns the process exit code."""
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from langmem_vault.demo import run_demo

        run_demo(dsn=args.dsn, in_memory=args.in_memory, model=args.model, offline=args.offline)
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
