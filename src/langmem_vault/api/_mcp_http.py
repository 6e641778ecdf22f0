"""The MCP server over streamable HTTP, at ``{prefix}/mcp`` in the API app (so
``langmem-vault serve`` and ``langgraph dev`` serve it too).

Identity is the REST API's: the app's auth hook (:mod:`langmem_vault.api._auth`) runs on every
request. A user's key acts for its own user and nobody else's; an admin key (and local-only
access, where the caller is the admin ``local``) names the user in the URL,
``/vault/mcp?user_id=alice``, as it does on the REST API. No key: 401; a user key naming
someone else: 403; an admin naming no one: 400. The caller is worked out per request (never
per session), so a session id taken from another client gives nothing.

The server runs stateless (each POST stands alone; any worker of a multi-process server can
answer it) and answers JSON. Without the ``[mcp]`` extra the endpoint answers 501, naming it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from langmem_vault.api._auth import acting_for
from langmem_vault.api._deps import identity, service

__all__ = ["METHODS", "PATH", "McpEndpoint"]

#: where the endpoint is, under the API's prefix
PATH = "/mcp"
METHODS = ["GET", "POST", "DELETE"]


class McpEndpoint:
    """The ASGI endpoint: authenticates, puts the caller on the request, then hands the
    request to the SDK's session manager (a new one each time the app starts).

    Refusals are raised, so the app's error handlers answer them as they answer the REST
    API's (:mod:`langmem_vault.api._errors`): 401, 403, or 400 naming ``user_id``.
    """

    def __init__(self) -> None:
        self.available = importlib.util.find_spec("mcp") is not None
        self._server: Any = None
        self._running = False
        if self.available:
            from langmem_vault.mcp._server import build_server

            self._server = build_server()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the session manager for the app's lifetime (entered by the app's lifespan)."""
        if not self.available:
            yield
            return
        from mcp.server.transport_security import TransportSecuritySettings

        # A new manager per start (one runs only once). The SDK's DNS-rebinding check is off:
        # the API's own (LocalOnlyAuth's Host check, CrossOriginGuard) covers this route.
        self._server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with self._server.session_manager.run():
            self._running = True
            try:
                yield
            finally:
                self._running = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.available:
            message = "the MCP server needs the mcp extra: pip install 'langmem-vault[mcp]'"
            raise HTTPException(501, message)
        if not self._running:
            raise HTTPException(
                503, "the MCP endpoint has not started (the app's lifespan did not run)"
            )
        from langmem_vault.mcp._server import CALLER_STATE, Caller

        request = Request(scope, receive)
        who = await identity(request)
        user_id = acting_for(who, request.query_params.get("user_id"))
        setattr(request.state, CALLER_STATE, Caller.acting(service(request), who, user_id))
        await self._server.session_manager.handle_request(scope, receive, send)
