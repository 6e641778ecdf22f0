"""``langmem-vault mcp``: one user's memory as an MCP server over stdio, for desktop clients
(Claude Desktop, Cursor) that start the server themselves.

The user is configured, not authenticated: ``--user-id`` or ``$LANGMEM_VAULT_USER_ID``; the
server acts as that user only (audited as ``mcp:<user>``). The database is the CLI's
(``--dsn`` / ``$LANGMEM_VAULT_DSN``, else the embedded server; ``--schema`` /
``$LANGMEM_VAULT_SCHEMA``). stdout carries the protocol, so nothing else is printed there.
The MCP SDK is imported only when the command runs (the ``mcp`` extra).
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer

from langmem_vault.cli._context import SCHEMA_ENV, DsnOption, SchemaOption, fail
from langmem_vault.service import Identity, ServiceError
from langmem_vault.service._base import check_user_id

__all__ = ["USER_ENV", "register", "serve_stdio"]

USER_ENV = "LANGMEM_VAULT_USER_ID"


async def serve_stdio(user_id: str, *, dsn: str | None = None, schema: str | None = None) -> None:
    """Serve ``user_id``'s memory over stdin/stdout until the client closes them."""
    from langmem_vault.api._resources import open_service
    from langmem_vault.db._migrations import DEFAULT_SCHEMA
    from langmem_vault.mcp._server import Caller, build_server

    name = schema or os.environ.get(SCHEMA_ENV) or DEFAULT_SCHEMA
    async with open_service(dsn, schema=name) as service:
        service.component = "mcp"
        identity = Identity.for_user(user_id, name=f"mcp:{user_id}")
        await build_server(Caller.acting(service, identity, user_id)).run_stdio_async()


def register(app: typer.Typer) -> None:
    """Add ``mcp`` to the ``langmem-vault`` app."""

    @app.command("mcp")
    def mcp_command(
        user_id: Annotated[
            str, typer.Option("--user-id", envvar=USER_ENV, help="the user whose memory to serve")
        ],
        dsn: DsnOption = None,
        schema: SchemaOption = None,
    ) -> None:
        """Serve one user's memory to an MCP client over stdio (Claude Desktop, Cursor)."""
        try:
            import mcp  # noqa: F401
        except ImportError:
            fail('the MCP server needs its extra: pip install "langmem-vault[mcp]"', 1)
        try:
            check_user_id(user_id)
        except ServiceError as exc:
            fail(str(exc))
        asyncio.run(serve_stdio(user_id, dsn=dsn, schema=schema))
