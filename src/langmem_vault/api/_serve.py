"""``langmem-vault serve``: the API and dashboard on uvicorn.

Without API keys in the environment there is no auth, so the server binds 127.0.0.1 whatever
``--host`` says, and says so at start. FastAPI and uvicorn are imported only when the command
runs (the ``api`` extra), so the rest of the CLI works without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

__all__ = ["DEFAULT_PORT", "LOCALHOST", "bind_host", "register", "serve"]

LOCALHOST = "127.0.0.1"
DEFAULT_PORT = 8765


def bind_host(host: str, *, local: bool, say: Callable[[str], None] = print) -> str:
    """The host to bind: ``host``, or localhost when no auth is configured.

    >>> bind_host("0.0.0.0", local=True, say=lambda _: None)
    '127.0.0.1'
    """
    if not local:
        return host
    from langmem_vault.api._auth import ADMIN_KEY_ENV, USER_KEYS_ENV

    refused = f" (not {host})" if host not in (LOCALHOST, "localhost") else ""
    say(
        f"no auth configured ({ADMIN_KEY_ENV} / {USER_KEYS_ENV} unset): listening on "
        f"{LOCALHOST} only{refused}"
    )
    return LOCALHOST


def serve(
    *,
    host: str = LOCALHOST,
    port: int = DEFAULT_PORT,
    prefix: str = "/vault",
    dsn: str | None = None,
    log_level: str = "info",
    say: Callable[[str], None] = print,
) -> None:
    """Run the app until interrupted."""
    import uvicorn

    from langmem_vault.api._app import create_app
    from langmem_vault.api._auth import default_auth

    auth = default_auth()
    bound = bind_host(host, local=bool(getattr(auth, "local", False)), say=say)
    app = create_app(prefix=prefix, auth=auth, dsn=dsn)
    say(f"langmem-vault dashboard: http://{bound}:{port}{prefix}/  API docs: {prefix}/docs")
    uvicorn.run(app, host=bound, port=port, log_level=log_level)


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the ``langmem-vault`` app."""

    @app.command("serve")
    def serve_command(
        host: Annotated[str, typer.Option(help="interface to bind (needs API keys)")] = LOCALHOST,
        port: Annotated[int, typer.Option(help="port")] = DEFAULT_PORT,
        prefix: Annotated[str, typer.Option(help="URL prefix of the API and dashboard")] = (
            "/vault"
        ),
        dsn: Annotated[
            str | None,
            typer.Option(help="PostgreSQL DSN (default: $LANGMEM_VAULT_DSN, else embedded)"),
        ] = None,
    ) -> None:
        """Serve the REST API and the dashboard (uvicorn)."""
        try:
            import fastapi  # noqa: F401
        except ImportError:
            typer.echo('the API needs its extra: pip install "langmem-vault[api]"', err=True)
            raise typer.Exit(1) from None
        serve(host=host, port=port, prefix=prefix, dsn=dsn)
