"""Who a request acts as: one user, or an admin acting for a user it names.

An *auth hook* is any callable ``(request) -> Identity | None`` (sync or async); ``None``
means "not authenticated" (401). The default, :class:`ApiKeyAuth`, reads bearer API keys from
the environment:

- ``LANGMEM_VAULT_ADMIN_KEY``: an admin key (acts for any user named by ``?user_id=``);
- ``LANGMEM_VAULT_API_KEYS``: user keys, ``alice=KEY1,bob=KEY2`` (each acts only for itself).

The key comes from ``Authorization: Bearer KEY``. The dashboard's sign-in form trades a key
for a session (:mod:`langmem_vault.api._sessions`): the browser never holds the key.

With neither variable set there is no auth: :class:`LocalOnlyAuth` lets only loopback clients
in, as an admin named ``local``, and ``langmem-vault serve`` binds 127.0.0.1.

An identity is the service's :class:`~langmem_vault.service.Identity`: its ``name`` is the
actor the audit log records.

>>> auth = ApiKeyAuth({"k1": Identity.for_user("alice")})
>>> auth.identity_for("k1").user_id, auth.identity_for("nope")
('alice', None)
>>> acting_for(Identity.for_user("alice"), "bob")
Traceback (most recent call last):
...
PermissionError: 'alice' may not act for user_id 'bob'
"""

from __future__ import annotations

import hmac
import inspect
import ipaddress
import os
from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request

from langmem_vault.service._records import Identity

__all__ = [
    "ADMIN_KEY_ENV",
    "USER_KEYS_ENV",
    "ApiKeyAuth",
    "AuthHook",
    "LocalOnlyAuth",
    "acting_for",
    "default_auth",
    "identify",
]

ADMIN_KEY_ENV = "LANGMEM_VAULT_ADMIN_KEY"
USER_KEYS_ENV = "LANGMEM_VAULT_API_KEYS"


def acting_for(identity: Identity, requested: str | None) -> str:
    """The user a request acts for: a user's own id; for an admin, ``requested``.

    ``PermissionError`` when a user names someone else; ``ValueError`` naming ``user_id``
    when an admin names no one.
    """
    if not identity.is_admin:
        if identity.user_id is None:
            raise PermissionError(f"identity {identity.name!r} acts for no user")
        if requested not in (None, "", identity.user_id):
            raise PermissionError(f"{identity.name!r} may not act for user_id {requested!r}")
        return identity.user_id
    if not requested:
        raise ValueError("user_id: an admin request must name the user it acts for")
    return requested


AuthHook = Callable[[Request], "Identity | Awaitable[Identity | None] | None"]


async def identify(hook: AuthHook, request: Request) -> Identity | None:
    """Run ``hook`` (sync or async) on ``request``: the identity, or None (not authenticated).

    The one place the REST API and the LangGraph server's auth
    (:mod:`langmem_vault.api.langgraph_auth`) run a hook; ``PermissionError`` passes through.
    """
    found = hook(request)
    if inspect.isawaitable(found):
        found = await found
    return found


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


class ApiKeyAuth:
    """Bearer API keys -> identities (keys compared in constant time)."""

    local = False

    def __init__(self, keys: Mapping[str, Identity]) -> None:
        if not keys:
            raise ValueError("ApiKeyAuth needs at least one key")
        self.keys = dict(keys)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ApiKeyAuth | None:
        """The keys of ``$LANGMEM_VAULT_ADMIN_KEY`` and ``$LANGMEM_VAULT_API_KEYS``; None if
        neither is set. A malformed ``user=key`` pair raises ``ValueError`` naming the variable."""
        env = os.environ if environ is None else environ
        keys: dict[str, Identity] = {}
        if admin := env.get(ADMIN_KEY_ENV, "").strip():
            keys[admin] = Identity.admin("admin-key")
        pairs = [p.strip() for p in env.get(USER_KEYS_ENV, "").split(",")]
        for position, pair in enumerate(pairs, start=1):
            if not pair:
                continue
            user, sep, key = pair.partition("=")
            if not sep or not user.strip() or not key.strip():
                # by position only: a malformed entry may hold a key, never echoed
                raise ValueError(
                    f"{USER_KEYS_ENV}: entry {position} is not a user=key pair (entries are "
                    "comma-separated, counted from 1)"
                )
            keys[key.strip()] = Identity.for_user(user.strip(), name=f"user:{user.strip()}")
        return cls(keys) if keys else None

    def identity_for(self, token: str | None) -> Identity | None:
        if not token:
            return None
        found = None
        for key, identity in self.keys.items():  # no early exit: constant time over keys
            if hmac.compare_digest(key.encode(), token.encode()):
                found = identity
        return found

    def __call__(self, request: Request) -> Identity | None:
        return self.identity_for(_bearer(request))


def _is_loopback(host: str | None) -> bool:
    if host in ("localhost", "testclient"):  # testclient: the client starlette's TestClient names
        return True
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class LocalOnlyAuth:
    """No auth configured: loopback clients act as the admin ``local``; others are refused,
    and so are requests addressed to a name that is not local (``Host``): a page that
    re-points a name of its own at 127.0.0.1 (DNS rebinding) must not read the API."""

    local = True

    def __call__(self, request: Request) -> Identity | None:
        client = request.client.host if request.client else None
        if not _is_loopback(client):
            raise PermissionError(
                f"no auth is configured, so only local clients are served (got {client}); set "
                f"{ADMIN_KEY_ENV} or {USER_KEYS_ENV}"
            )
        if not _is_loopback(request.url.hostname):
            raise PermissionError(
                f"no auth is configured, so only requests to a local address are served (Host "
                f"{request.headers.get('host')!r}); use 127.0.0.1 or localhost, or set "
                f"{ADMIN_KEY_ENV} or {USER_KEYS_ENV}"
            )
        return Identity.admin("local")


def default_auth() -> ApiKeyAuth | LocalOnlyAuth:
    """API keys from the environment, else local-only access."""
    return ApiKeyAuth.from_env() or LocalOnlyAuth()
