"""Cross-site request protection: a page on another site cannot make the operator's browser
change or erase memories.

Local-only access (no API keys) lets any loopback client in, and the operator's browser is a
loopback client even when another site's page tells it to post a form to
``http://127.0.0.1:8765/vault/ui/erase``. Two checks close that:

- :class:`CrossOriginGuard` refuses a state-changing request (any method but GET, HEAD and
  OPTIONS) under the API's prefix that a browser marks as cross-site: ``Sec-Fetch-Site``
  other than ``same-origin`` or ``none``, or, from browsers too old to send it, an
  ``Origin`` whose host is not the request's ``Host``. Clients that send neither header
  (curl, SDKs, scripts) are not browsers acting for a page, and pass; so does a request
  carrying an ``Authorization`` header, which a page cannot make a browser add on its own.
  This is the check Go's ``net/http`` ``CrossOriginProtection`` makes, and OWASP's
  "verifying origin with standard headers". Other routes of the server the app is mounted in
  (a LangGraph server's ``/threads`` and ``/runs``, which Studio calls from its own site)
  are not the guard's to judge.
- :class:`~langmem_vault.api._auth.LocalOnlyAuth` serves only requests addressed to a local
  name (``Host``), so a page cannot reach the API under a name of its own that it re-points
  at 127.0.0.1 (DNS rebinding) and read it.

>>> cross_site("POST", {"sec-fetch-site": "cross-site"}, "127.0.0.1:8765")
'Sec-Fetch-Site is cross-site'
>>> cross_site("POST", {"origin": "http://127.0.0.1:8765"}, "127.0.0.1:8765") is None
True
>>> cross_site("GET", {"sec-fetch-site": "cross-site"}, "127.0.0.1:8765") is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["CrossOriginGuard", "cross_site"]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_SAME_SITE = frozenset({"same-origin", "none"})  # "none": typed in the address bar, a bookmark


def cross_site(method: str, headers: Mapping[str, str], host: str) -> str | None:
    """Why a request must be refused as cross-site, or None. ``headers`` by lower-case name."""
    if method.upper() in SAFE_METHODS or "authorization" in headers:
        return None
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return None if fetch_site in _SAME_SITE else f"Sec-Fetch-Site is {fetch_site}"
    origin = headers.get("origin")
    if origin is None:
        return None
    if origin == "null" or urlsplit(origin).netloc.lower() != host.lower():
        return f"Origin {origin} is not this server ({host})"
    return None


class CrossOriginGuard:
    """ASGI middleware answering 403 to cross-site state-changing requests under ``prefix``
    (see above)."""

    def __init__(self, app: ASGIApp, *, prefix: str = "") -> None:
        self.app = app
        self.prefix = prefix

    def _guarded(self, path: str) -> bool:
        return not self.prefix or path == self.prefix or path.startswith(self.prefix + "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._guarded(scope["path"]):
            headers = Headers(scope=scope)
            reason = cross_site(scope["method"], headers, headers.get("host", ""))
            if reason is not None:
                body = {
                    "error": "Forbidden",
                    "field": None,
                    "message": f"cross-site request refused: {reason}",
                }
                await JSONResponse(body, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
