"""``langmem-vault serve``: the API and dashboard on uvicorn.

Without API keys in the environment there is no auth, so the server binds 127.0.0.1 whatever
``--host`` says, and says so at start.
"""

from __future__ import annotations

from collections.abc import Callable

from langmem_vault.api.app import DEFAULT_PREFIX, create_app
from langmem_vault.api.auth import ADMIN_KEY_ENV, USER_KEYS_ENV, default_auth

__all__ = ["LOCALHOST", "bind_host", "serve"]

LOCALHOST = "127.0.0.1"


def bind_host(host: str, *, local: bool, say: Callable[[str], None] = print) -> str:
    """The host to bind: ``host``, or localhost when no auth is configured.

    >>> bind_host("0.0.0.0", local=True, say=lambda _: None)
    '127.0.0.1'
    """
    if not local:
        return host
    say(
        f"no auth configured ({ADMIN_KEY_ENV} / {USER_KEYS_ENV} unset): listening on "
        f"{LOCALHOST} only" + (f" (not {host})" if host not in (LOCALHOST, "localhost") else "")
    )
    return LOCALHOST


def serve(
    *,
    host: str = LOCALHOST,
    port: int = 8765,
    prefix: str = DEFAULT_PREFIX,
    dsn: str | None = None,
    log_level: str = "info",
    say: Callable[[str], None] = print,
) -> None:
    """Run the app until interrupted."""
    import uvicorn

    auth = default_auth()
    bound = bind_host(host, local=bool(getattr(auth, "local", False)), say=say)
    app = create_app(prefix=prefix, auth=auth, dsn=dsn)
    say(f"langmem-vault dashboard: http://{bound}:{port}{prefix}/  API docs: {prefix}/docs")
    uvicorn.run(app, host=bound, port=port, log_level=log_level)
