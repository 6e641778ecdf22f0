"""Dashboard sessions: the sign-in form trades an API key for a session, never storing the key
in the browser.

The cookie (``lmv_session``) holds a random session id signed with a timestamp
(``itsdangerous``); the server keeps each live session's identity and expiry. A session ends
when it expires (``$LANGMEM_VAULT_SESSION_HOURS``, default 8), when its user signs out
(``POST /logout``: the server forgets it, so a copied cookie is dead too), or when the server
restarts. The cookie is ``HttpOnly`` (scripts never see it), ``SameSite=Strict`` (no
cross-site request carries it) and ``Secure`` when the request came over HTTPS (the request's
scheme: behind a proxy, run uvicorn with ``--proxy-headers`` and ``--forwarded-allow-ips``
naming the proxy, so a trusted ``X-Forwarded-Proto`` sets it). The signing secret is
``$LANGMEM_VAULT_SESSION_SECRET``, else random per process.

>>> sessions = Sessions(secret="s", max_age=60)
>>> cookie = sessions.start(Identity.for_user("alice"))
>>> sessions.identity(cookie).user_id
'alice'
>>> sessions.end(cookie); sessions.identity(cookie) is None
True
>>> sessions.identity("forged.value") is None
True
"""

from __future__ import annotations

import os
import secrets
import time
from typing import Any

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import Request

from langmem_vault.service._records import Identity

__all__ = ["COOKIE", "SECRET_ENV", "SESSION_HOURS_ENV", "Sessions"]

#: the session cookie
COOKIE = "lmv_session"
SECRET_ENV = "LANGMEM_VAULT_SESSION_SECRET"
SESSION_HOURS_ENV = "LANGMEM_VAULT_SESSION_HOURS"
MAX_SESSIONS = 10_000


class Sessions:
    """Live sessions of one server process (see the module docstring)."""

    def __init__(self, secret: str | bytes | None = None, *, max_age: float | None = None) -> None:
        secret = secret or os.environ.get(SECRET_ENV) or secrets.token_bytes(32)
        if max_age is None:
            max_age = float(os.environ.get(SESSION_HOURS_ENV) or 8) * 3600
        if max_age <= 0:
            raise ValueError(f"max_age must be positive, got {max_age}")
        self.max_age = max_age
        self._signer = URLSafeTimedSerializer(secret, salt="langmem-vault-session")
        self._live: dict[str, tuple[Identity, float]] = {}

    def start(self, identity: Identity) -> str:
        """A new session for ``identity``: the cookie's value."""
        now = time.monotonic()
        self._live = {s: v for s, v in self._live.items() if v[1] > now}
        if len(self._live) >= MAX_SESSIONS:  # drop the oldest rather than grow without end
            self._live.pop(min(self._live, key=lambda s: self._live[s][1]))
        sid = secrets.token_urlsafe(32)
        self._live[sid] = (identity, now + self.max_age)
        return str(self._signer.dumps(sid))

    def _sid(self, cookie: str) -> str | None:
        try:
            sid = self._signer.loads(cookie, max_age=int(self.max_age))
        except BadSignature:  # also SignatureExpired
            return None
        return sid if isinstance(sid, str) else None

    def identity(self, cookie: str | None) -> Identity | None:
        """The identity of a live session, or None (unknown, forged, expired or ended)."""
        sid = self._sid(cookie) if cookie else None
        entry = self._live.get(sid) if sid else None
        if entry is None:
            return None
        if entry[1] <= time.monotonic():
            self._live.pop(sid, None)  # type: ignore[arg-type]
            return None
        return entry[0]

    def end(self, cookie: str | None) -> None:
        """Forget the session (signing out)."""
        sid = self._sid(cookie) if cookie else None
        if sid:
            self._live.pop(sid, None)

    def cookie_options(self, request: Request) -> dict[str, Any]:
        """The ``set_cookie`` options of the session cookie for ``request``."""
        prefix: str = request.app.state.vault_prefix
        return {
            "httponly": True,
            "samesite": "strict",
            "secure": request.url.scheme == "https",
            "max_age": int(self.max_age),
            "path": prefix or "/",
        }
