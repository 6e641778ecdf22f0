"""Per-request dependencies: the identity (from a dashboard session, else the auth hook), the
user it acts for, and the service acting as that identity.

The service checks again that the identity may act for the user (a user key only for its own
user), and records every write in the audit log with the identity's name as the actor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request

from langmem_vault.api._auth import acting_for, identify
from langmem_vault.api._errors import NotAuthenticated
from langmem_vault.api._sessions import COOKIE, Sessions
from langmem_vault.service import Identity, MemoryService
from langmem_vault.service._analytics import LatencyLog

__all__ = ["Acting", "ActingDep", "acting", "identity", "service"]


def service(request: Request) -> MemoryService:
    found: MemoryService | None = getattr(request.app.state, "vault_service", None)
    if found is None:
        raise RuntimeError("the memory API has not started (its lifespan did not run)")
    return found


async def identity(request: Request) -> Identity:
    """The identity of the request's dashboard session, else the app's auth hook's; 401
    when neither finds one."""
    cached: Identity | None = getattr(request.state, "vault_identity", None)
    if cached is not None:
        return cached
    sessions: Sessions = request.app.state.vault_sessions
    found = sessions.identity(request.cookies.get(COOKIE))
    if found is None:
        found = await identify(request.app.state.vault_auth, request)
    if found is None:
        raise NotAuthenticated("a valid API key is required (Authorization: Bearer KEY)")
    request.state.vault_identity = found
    return found


@dataclass(frozen=True)
class Acting:
    """One request: who acts, for which user, through which service."""

    identity: Identity
    user_id: str
    service: MemoryService
    latency: LatencyLog


async def acting(
    request: Request,
    who: Annotated[Identity, Depends(identity)],
    user_id: Annotated[
        str | None,
        Query(
            max_length=256,
            description="The user to act for (required for an admin; a user key acts for itself)",
        ),
    ] = None,
) -> Acting:
    return Acting(
        identity=who,
        user_id=acting_for(who, user_id),
        service=service(request).acting_as(who),
        latency=request.app.state.vault_latency,
    )


ActingDep = Annotated[Acting, Depends(acting)]
