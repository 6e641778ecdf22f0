"""The MCP server: tools and a resource over :class:`~langmem_vault.service.MemoryService`.

Every tool is one service call for the caller's user; the service checks again that the
identity may act for that user, and audits every write with the identity's name.

- ``remember``: store a fact the client states, through PII redaction, the user's consent
  and reconcile (:meth:`~langmem_vault.service.MemoryService.remember`);
- ``search_memories``, ``list_memories``, ``forget_memory`` (soft: restorable);
- ``confirm_memory`` / ``reject_memory`` (a pending fact);
- ``add_instruction``, ``list_instructions`` (standing instructions);
- resource ``vault://profile``: the user's top facts and active instructions, as JSON, for a
  client to attach as context.

Who calls: a fixed :class:`Caller` (stdio), or the one the HTTP endpoint put on the request
(``request.state.vault_mcp_caller``, see :mod:`langmem_vault.api._mcp_http`).

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.service import MemoryService
>>> server = build_server(Caller(MemoryService(InMemoryStore()), "ana"))
>>> server.name
'langmem-vault'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from langmem_vault.memory._models import FactCategory
from langmem_vault.service import Identity, MemoryService, ServiceError
from langmem_vault.service._agent import Profile, Remembered
from langmem_vault.service._records import Kind, MemoryPage, MemoryRecord, SearchResults, Status

__all__ = ["CALLER_STATE", "PROFILE_URI", "Caller", "build_server"]

T = TypeVar("T")
PROFILE_URI = "vault://profile"
#: the ``request.state`` attribute where the HTTP endpoint leaves the request's caller
CALLER_STATE = "vault_mcp_caller"

INSTRUCTIONS = """The user's long-term memory (langmem-vault). Search it before answering \
when the answer may depend on what the user said in an earlier conversation; call remember \
when the user states a lasting fact or preference, or asks you to remember something; \
attach the vault://profile resource for the user's top facts and standing instructions."""


@dataclass(frozen=True)
class Caller:
    """Who calls: the service (acting as the caller's identity) and the user it acts for."""

    service: MemoryService
    user_id: str

    @classmethod
    def acting(cls, service: MemoryService, identity: Identity, user_id: str) -> Caller:
        """The caller ``identity`` acting for ``user_id`` through ``service``."""
        return cls(service.acting_as(identity), user_id)


_caller: ContextVar[Caller] = ContextVar("langmem_vault_mcp_caller")


async def _call(operation: Callable[[MemoryService, str], Awaitable[T]]) -> T:
    """Run one service operation for the current caller; a service error reaches the client
    as the tool's error message (naming the field), anything else as the SDK's generic one."""
    caller = _caller.get()
    try:
        return await operation(caller.service, caller.user_id)
    except ServiceError as exc:
        raise ToolError(str(exc)) from exc


def build_server(caller: Caller | None = None) -> MCPServer:
    """The MCP server; ``caller`` fixed (stdio), or None to take each request's caller from
    the HTTP endpoint (a request without one is refused)."""

    async def bind_caller(ctx: Any, call_next: Any) -> Any:
        found = caller
        if found is None:
            found = getattr(getattr(ctx.request, "state", None), CALLER_STATE, None)
        if found is None:
            raise PermissionError("no caller: the MCP endpoint did not authenticate this request")
        token = _caller.set(found)
        try:
            return await call_next(ctx)
        finally:
            _caller.reset(token)

    server = MCPServer("langmem-vault", instructions=INSTRUCTIONS, middleware=[bind_caller])

    @server.tool()
    async def remember(
        text: str, category: FactCategory = "general", private: bool = False
    ) -> Remembered:
        """Remember a lasting fact about the user (a preference, a decision, a detail of
        their life). PII is redacted, the user's consent applies, and a fact already known
        is reinforced rather than stored twice. Returns what happened and the memory."""
        return await _call(lambda s, u: s.aremember(u, text, category=category, private=private))

    @server.tool()
    async def search_memories(
        query: str, limit: int = 10, kind: Kind | None = None, include_pending: bool = False
    ) -> SearchResults:
        """Search the user's current memories (facts, instructions, episodes), best first."""
        status: list[Status] = ["active", "pending"] if include_pending else ["active"]
        return await _call(
            lambda s, u: s.asearch_memories(u, query, kind=kind, status=status, limit=limit)
        )

    @server.tool()
    async def list_memories(
        kind: Kind | None = None,
        status: list[Status] | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> MemoryPage:
        """List the user's memories, newest first (``status``: e.g. ``["pending"]`` for the
        facts waiting for the user's confirmation). ``total`` counts up to 1,000 matches
        (``total_capped`` when more) for a listing by kind, none with a status."""
        return await _call(
            lambda s, u: s.alist_memories(u, kind=kind, status=status, limit=limit, offset=offset)
        )

    @server.tool()
    async def forget_memory(key: str) -> MemoryRecord:
        """Forget a memory by key (a fact is closed, an instruction turned off; both can be
        restored from the dashboard)."""
        return await _call(lambda s, u: s.aforget_memory(u, key))

    @server.tool()
    async def confirm_memory(key: str) -> MemoryRecord:
        """Confirm a pending fact: it becomes active."""
        return await _call(lambda s, u: s.aconfirm_memory(u, key))

    @server.tool()
    async def reject_memory(key: str) -> MemoryRecord:
        """Reject a pending fact: it is closed and never injected."""
        return await _call(lambda s, u: s.areject_memory(u, key))

    @server.tool()
    async def add_instruction(
        text: str, priority: int = 5, condition: str | None = None
    ) -> MemoryRecord:
        """Add a standing instruction for every conversation (priority 1-10; condition,
        e.g. ``topic contains travel``, limits when it applies)."""
        return await _call(
            lambda s, u: s.aadd_instruction(u, text, priority=priority, condition=condition)
        )

    @server.tool()
    async def list_instructions(active_only: bool = True) -> list[MemoryRecord]:
        """The user's standing instructions, highest priority first."""
        return await _call(lambda s, u: s.alist_instructions(u, active_only=active_only))

    @server.resource(PROFILE_URI, name="profile", mime_type="application/json")
    async def profile() -> str:
        """The user's top facts and active standing instructions."""
        found: Profile = await _call(lambda s, u: s.aprofile(u))
        return found.model_dump_json()

    return server
