"""What every request under the API's prefix passes before a route sees it, and what every
response carries.

- :class:`SecurityHeaders`: a Content-Security-Policy that runs only the app's own scripts
  (the vendored htmx and Chart.js, and the dashboard's ``dashboard.js``) and lets no page
  frame the dashboard (``frame-ancestors 'none'``, and ``X-Frame-Options: DENY`` for older
  browsers), ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin``, on
  every response. Styles come from the app's stylesheet; ``style`` attributes (a category's
  colour, a confidence bar's width) are allowed, as they cannot run script.
- :class:`BodyGuard`: a request that may carry a body (POST, PUT, PATCH, DELETE) is
  authenticated from its headers before a byte of the body is read (an unknown key gets its
  401 at once, however large the body), and its body is capped per route:
  :data:`IMPORT_LIMIT` for an import, :data:`BODY_LIMIT` for anything else. A declared
  ``Content-Length`` over the cap is refused at once, a streamed body as soon as it passes
  the cap: 413 naming the limit, before the body is parsed.

>>> limit_for("/api/import"), limit_for("/api/memories")
(33554432, 1048576)
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from langmem_vault.api._deps import identity
from langmem_vault.api._errors import NotAuthenticated, forbidden, http_error, unauthenticated

__all__ = [
    "BODY_LIMIT",
    "CSP",
    "IMPORT_LIMIT",
    "SECURITY_HEADERS",
    "BodyGuard",
    "SecurityHeaders",
    "limit_for",
]

#: the largest body of a request other than an import (a memory is at most a few kB)
BODY_LIMIT = 1 << 20
#: the largest export document ``POST /api/import`` reads
IMPORT_LIMIT = 32 << 20
_LIMITS = {"/api/import": IMPORT_LIMIT}
#: routes a browser posts to without (or with an expired) sign-in
_OPEN = frozenset({"/login", "/logout"})
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
#: the OpenAPI browser (Swagger UI, its files served by the app) starts itself with an
#: inline script; it changes no memory by itself, and no page may frame it either
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}


def limit_for(path: str) -> int:
    """The body cap of a route (``path`` without the app's prefix)."""
    return _LIMITS.get(path, BODY_LIMIT)


class _Prefixed:
    def __init__(self, app: ASGIApp, *, prefix: str = "") -> None:
        self.app = app
        self.prefix = prefix

    def _local_path(self, scope: Scope) -> str | None:
        """The path under the prefix, or None for a route of another app (a LangGraph
        server's own) that this app is mounted beside."""
        path: str = scope["path"]
        if not self.prefix:
            return path
        if path == self.prefix or path.startswith(self.prefix + "/"):
            return path[len(self.prefix) :]
        return None


class SecurityHeaders(_Prefixed):
    """ASGI middleware adding the security headers to every response under ``prefix``."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        local = self._local_path(scope) if scope["type"] == "http" else None
        if local is None:
            await self.app(scope, receive, send)
            return
        csp = DOCS_CSP if local == "/docs" or local.startswith("/docs/") else CSP
        extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
        extra.append((b"content-security-policy", csp.encode()))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k for k, _ in extra}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": kept + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyTooLarge(HTTPException):
    """A body over its route's cap (413 naming ``body``). Raised by the capped body stream
    as an HTTPException, so FastAPI's body reader lets it through to the app's handlers."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is over the limit of {limit} bytes for this route")


class BodyGuard(_Prefixed):
    """ASGI middleware: authenticate before the body is read, and cap the body (see above).

    The identity it finds is left in the request's state, where the routes' ``identity``
    dependency takes it instead of asking the auth hook again.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        local = self._local_path(scope) if scope["type"] == "http" else None
        if local is None or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        limit = limit_for(local)
        if local not in _OPEN:
            refusal = await self._authenticate(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await http_error(BodyTooLarge(limit))(scope, receive, send)
            return
        seen = 0

        async def capped() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, capped, send)

    async def _authenticate(self, scope: Scope) -> JSONResponse | None:
        """None when the request may go on (its identity cached); else the refusal."""
        try:
            await identity(Request(scope))
        except NotAuthenticated as exc:
            return unauthenticated(exc)
        except PermissionError as exc:
            return forbidden(exc)
        return None


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
