"""``create_app``: the memory management REST API and dashboard as one FastAPI app.

Under the prefix (default ``/vault``):

- ``/api/...``: the REST API (memories, search, instructions, episodes, categories, threads
  and their injection trace, analytics, export/import/erase, consent, audit, failed
  background jobs and their retry);
- ``/mcp``: the MCP server over streamable HTTP (:mod:`langmem_vault.api._mcp_http`);
- ``/``: the dashboard; ``/static/``: its stylesheet, htmx and Chart.js;
- ``/openapi.json`` and ``/docs``: the OpenAPI schema and its browser (Swagger UI, its
  files served from the installed ``fastapi-offline`` package: no CDN, works offline);
- the prefix itself (``/vault``) redirects to the dashboard (``/vault/``).

Mount it in a LangGraph server (``langgraph.json``: ``"http": {"app":
"langmem_vault.api.server:app"}``) or serve it alone (``langmem-vault serve``).

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.service import MemoryService
>>> app = create_app(MemoryService(InMemoryStore()), prefix="/memory")
>>> app.openapi_url
'/memory/openapi.json'
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi_offline import FastAPIOffline
from starlette.responses import RedirectResponse
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from langmem_vault.api import (
    _dashboard as dashboard,
)
from langmem_vault.api import (
    _errors as errors,
)
from langmem_vault.api import (
    _insights as insights,
)
from langmem_vault.api import (
    _instructions as instructions,
)
from langmem_vault.api import (
    _jobs as jobs,
)
from langmem_vault.api import (
    _mcp_http as mcp_http,
)
from langmem_vault.api import (
    _memories as memories,
)
from langmem_vault.api import (
    _privacy as privacy,
)
from langmem_vault.api._auth import ADMIN_KEY_ENV, USER_KEYS_ENV, AuthHook, default_auth
from langmem_vault.api._guards import BodyGuard, SecurityHeaders
from langmem_vault.api._origin import CrossOriginGuard
from langmem_vault.api._resources import open_service
from langmem_vault.api._sessions import Sessions
from langmem_vault.service import MemoryService
from langmem_vault.service._analytics import LatencyLog

__all__ = ["DEFAULT_PREFIX", "create_app"]

logger = logging.getLogger("langmem_vault.api")

DEFAULT_PREFIX = "/vault"
VERSION = "1"

ServiceSource = MemoryService | Callable[[], AbstractAsyncContextManager[MemoryService]] | None


def _check_prefix(prefix: str) -> str:
    if prefix in ("", "/"):
        return ""
    if not prefix.startswith("/") or prefix.endswith("/") or "//" in prefix:
        raise ValueError(f"prefix must start with '/' and not end with '/', got {prefix!r}")
    return prefix


#: the modules holding the REST routes, each with its ``router``
API_MODULES = (memories, instructions, insights, privacy, jobs)


def api_router() -> APIRouter:
    """Every REST route (without the prefix)."""
    router = APIRouter()
    for module in API_MODULES:
        router.include_router(module.router)
    return router


def create_app(
    service: ServiceSource = None,
    *,
    prefix: str = DEFAULT_PREFIX,
    auth: AuthHook | None = None,
    dsn: str | None = None,
) -> FastAPI:
    """The API and dashboard app.

    ``service``: a ready :class:`~langmem_vault.service.MemoryService`, or a function
    returning an async context manager of one (entered by the app's lifespan); by default
    the lifespan opens one on ``dsn`` (``$LANGMEM_VAULT_DSN``, else the embedded server)
    with the store, the saver, the audit log and the job queue on one pool. ``auth``: a hook
    ``(request) -> Identity | None``; by default API keys from the environment, or
    local-only access when none are set (see :mod:`langmem_vault.api._auth`).
    """
    prefix = _check_prefix(prefix)
    auth_hook: Any = auth if auth is not None else default_auth()
    mcp = mcp_http.McpEndpoint()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened: AbstractAsyncContextManager[MemoryService]
        if isinstance(service, MemoryService):
            opened = nullcontext(service)
        elif service is not None:
            opened = service()
        else:
            opened = open_service(dsn)
        async with opened as ready, mcp.running():
            app.state.vault_service = ready
            if getattr(auth_hook, "local", False):
                logger.warning(
                    "langmem-vault API: no auth configured (%s / %s unset): only local "
                    "clients are served, as an admin",
                    ADMIN_KEY_ENV,
                    USER_KEYS_ENV,
                )
            logger.info("langmem-vault API and dashboard at %s/", prefix)
            yield

    app = FastAPIOffline(
        title="langmem-vault memory API",
        version=VERSION,
        description="Inspect and correct what a LangGraph app remembers about its users.",
        openapi_url=f"{prefix}/openapi.json",
        docs_url=f"{prefix}/docs",
        redoc_url=None,
        static_url=f"{prefix}/docs/static",
        lifespan=lifespan,
    )
    app.state.vault_auth = auth_hook
    app.state.vault_prefix = prefix
    app.state.vault_latency = LatencyLog()
    app.state.vault_templates = dashboard.load_templates()
    if isinstance(service, MemoryService):  # usable before the lifespan runs (tests)
        app.state.vault_service = service
    app.state.vault_sessions = Sessions()
    errors.install(app)
    # Outermost last: every answer (a refusal too) carries the security headers; no page of
    # another site posts here as the operator; no body is read before its sender is known.
    # Other routes of a server this app is mounted in (LangGraph's, which Studio calls from
    # its own site) are left alone.
    app.add_middleware(BodyGuard, prefix=prefix)
    app.add_middleware(CrossOriginGuard, prefix=prefix)
    app.add_middleware(SecurityHeaders, prefix=prefix)
    app.include_router(api_router(), prefix=f"{prefix}/api")
    app.include_router(dashboard.build_router(), prefix=prefix)
    if prefix:  # a LangGraph server does not redirect slashes: /vault would be a 404

        @app.get(prefix, include_in_schema=False)
        async def to_dashboard() -> RedirectResponse:
            return RedirectResponse(f"{prefix}/")

    app.router.routes.append(Route(prefix + mcp_http.PATH, mcp, methods=mcp_http.METHODS))
    static = Path(str(resources.files("langmem_vault.api").joinpath("static")))
    app.mount(f"{prefix}/static", StaticFiles(directory=static), name="vault-static")
    return app
