"""The MCP server (the ``[mcp]`` extra, on the official ``mcp`` SDK): the user's memory as
tools and a profile resource for Claude Desktop, Cursor and any MCP client.

:func:`~langmem_vault.mcp._server.build_server` maps each tool to one
:class:`~langmem_vault.service.MemoryService` operation and nothing more. Two transports
serve it: stdio (``langmem-vault mcp --user-id U``, :mod:`langmem_vault.cli._mcp`) and
streamable HTTP at ``/vault/mcp`` in the API app (:mod:`langmem_vault.api._mcp_http`), where
the API's keys say who the caller is.

>>> from langmem_vault.mcp import Caller, build_server  # doctest: +SKIP
"""

from typing import Any

from langmem_vault._lazy import LazyNames

__all__ = ["Caller", "build_server"]

_NAMES = LazyNames(globals(), {"langmem_vault.mcp._server": ("Caller", "build_server")})


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
