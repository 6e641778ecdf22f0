"""The LangGraph server's own endpoints behind the REST API's keys: a ``langgraph_sdk.Auth``.

``langgraph dev`` (and the LangGraph platform) serve ``/threads``, ``/runs``, ``/assistants``
and ``/store/...`` beside the mounted ``/vault`` API. ``langgraph.json`` names this handler::

    "auth": {"path": "langmem_vault.api.langgraph_auth:auth", "disable_studio_auth": true}

Every request then authenticates exactly as ``/vault/api`` does (:mod:`langmem_vault.api._auth`:
``Authorization: Bearer KEY`` with the keys of ``$LANGMEM_VAULT_API_KEYS`` and
``$LANGMEM_VAULT_ADMIN_KEY``), and a user key is scoped to its user:

- threads (and their runs, state, history) belong to the user that created them: their
  metadata records ``owner``, and every read, search, update, delete and run filters on it;
- a run acts for the caller: its ``user_id`` (configurable and context) is set to the key's
  user whatever the request says, so the graph's memory namespaces are the caller's;
- assistants: the graphs of ``langgraph.json`` are readable by all; an assistant a user
  creates is that user's to change or delete; crons are owner-only;
- the store: only the caller's memory namespaces (``("memories", <user>, ...)`` and the
  extraction tails under them); a search or listing over a wider prefix (``()``,
  ``("memories",)``) is narrowed to the caller's namespaces; any other namespace is a 403.

The admin key acts for everyone, unscoped. ``disable_studio_auth`` matters: without it a
request sending ``x-auth-scheme: langsmith`` would skip the key check under ``langgraph dev``.

With no key configured the rule of the REST API holds: only loopback clients are served (each
as the admin ``local``), others get a 403; a WARNING says so when the server loads this.

>>> scoped_namespace("alice", ("memories",), narrow=True)
('memories', 'alice')
>>> scoped_namespace("alice", ("memories", "alice", "semantic"), narrow=False)
('memories', 'alice', 'semantic')
>>> scoped_namespace("ana.g@example.com", (), narrow=True)
('memories', 'ana%2Eg@example%2Ecom')
>>> scoped_namespace("alice", ("memories", "bob", "semantic"), narrow=True) is None
True
"""

from __future__ import annotations

import logging
from itertools import takewhile
from typing import Any

from langgraph_sdk import Auth
from starlette.requests import Request

from langmem_vault.api._auth import ADMIN_KEY_ENV, USER_KEYS_ENV, default_auth, identify
from langmem_vault.memory._namespaces import MemoryNamespaces, tails_namespace

__all__ = ["ADMIN_PERMISSION", "auth", "scoped_namespace"]

logger = logging.getLogger("langmem_vault.api")

#: the permission an admin identity carries (a user key has none)
ADMIN_PERMISSION = "langmem_vault:admin"
#: the thread, assistant and cron metadata key naming the user that created it
OWNER = "owner"

_hook = default_auth()
if getattr(_hook, "local", False):
    logger.warning(
        "langmem-vault: no API keys configured (%s / %s unset): the LangGraph server serves "
        "only local clients, each as an admin",
        ADMIN_KEY_ENV,
        USER_KEYS_ENV,
    )

auth = Auth()


@auth.authenticate
async def authenticate(request: Request) -> Auth.types.MinimalUserDict:
    """The caller, from the same keys (and local-only rule) as ``/vault/api``."""
    try:
        who = await identify(_hook, request)
    except PermissionError as exc:  # local-only: a client that is not local
        raise Auth.exceptions.HTTPException(403, detail=str(exc)) from None
    if who is None:
        raise Auth.exceptions.HTTPException(
            401,
            detail="a valid API key is required (Authorization: Bearer KEY)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return {
        "identity": who.user_id or who.name,
        "display_name": who.name,
        "is_authenticated": True,
        "permissions": [ADMIN_PERMISSION] if who.is_admin else [],
    }


def _is_admin(ctx: Auth.types.AuthContext) -> bool:
    return ADMIN_PERMISSION in ctx.permissions


def _owned(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Owner-only access: what is created is marked as the caller's, the rest is filtered."""
    if _is_admin(ctx):
        return None
    if ctx.action in ("create", "create_run", "update") and isinstance(value, dict):
        metadata = value.get("metadata")
        if not isinstance(metadata, dict):
            metadata = value["metadata"] = {}
        metadata[OWNER] = ctx.user.identity
    return {OWNER: ctx.user.identity}


@auth.on.threads
async def threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """A user's threads are theirs alone; a run acts for the caller."""
    if ctx.action == "create_run" and not _is_admin(ctx):
        _pin_user(value.get("kwargs"), ctx.user.identity)
    return _owned(ctx, value)


def _pin_user(kwargs: Any, user_id: str) -> None:
    """Make a run act for ``user_id``: the graph reads it from ``configurable`` first, then
    the run context; both are set, so no request can name another user."""
    if not isinstance(kwargs, dict):
        return
    config = kwargs.get("config")
    if isinstance(config, dict):
        configurable = config.get("configurable")
        if not isinstance(configurable, dict):
            configurable = config["configurable"] = {}
        configurable["user_id"] = user_id
    if isinstance(kwargs.get("context"), dict):
        kwargs["context"]["user_id"] = user_id


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Everyone reads the served graphs; what a user creates only they change."""
    if ctx.action in ("read", "search"):
        return None
    return _owned(ctx, value)


@auth.on
async def everything_else(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Crons and any resource a newer server adds: owner-only."""
    return _owned(ctx, value)


def scoped_namespace(
    user_id: str, namespace: tuple[str, ...], *, narrow: bool
) -> tuple[str, ...] | None:
    """``namespace`` if it lies in ``user_id``'s memory namespaces; with ``narrow`` (a search
    or a listing), a wider prefix becomes the user's own root; else None (refused)."""
    resolved = MemoryNamespaces().resolve({"configurable": {"user_id": user_id}})
    kinds = (resolved.semantic, resolved.episodes, resolved.instructions)
    # ("memories", user): the labels the three kinds share, the user's among them
    shared = takewhile(lambda labels: len(set(labels)) == 1, zip(*kinds, strict=False))
    root = tuple(labels[0] for labels in shared)
    for mine in (root, tails_namespace(root)):
        if namespace[: len(mine)] == mine:
            return namespace
    if narrow and root[: len(namespace)] == namespace:
        return root
    return None


@auth.on.store()
async def store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Only the caller's memory namespaces (see the module docstring)."""
    if _is_admin(ctx):
        return
    asked = value.get("namespace")
    narrow = ctx.action in ("search", "list_namespaces")
    scoped = scoped_namespace(ctx.user.identity, tuple(asked or ()), narrow=narrow)
    if scoped is None:
        raise Auth.exceptions.HTTPException(
            403, detail=f"namespace {list(asked or ())!r} is not among this user's memories"
        )
    value["namespace"] = scoped
