"""The ``langmem-vault`` command line (Typer + Rich).

- ``demo``, ``doctor`` (:mod:`.app`);
- ``memories``, ``instructions``, ``episodes``, ``threads`` (:mod:`.memories`,
  :mod:`.instructions`) and ``export``, ``import``, ``erase``, ``unerase``, ``consent``,
  ``audit``, ``stats``, ``users`` (:mod:`.admin`), ``jobs failed|retry`` (:mod:`.jobs`,
  the dead-letter list): the admin commands, over
  :class:`~langmem_vault.service.MemoryService`;
- ``citus-ddl`` (:mod:`.citus`): the statements that distribute a schema on Citus;
- ``eval locomo`` (:mod:`.eval`): the LoCoMo evaluation on a file the user supplies;
- ``serve`` (:mod:`langmem_vault.api._serve`) and ``mcp`` (:mod:`.mcp`: the MCP server over
  stdio).

Each command module has ``register(app)``; a new module of commands (``serve``...) is one
entry in ``COMMANDS``.

>>> main(["doctor", "--no-models"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import importlib
import sys

from langmem_vault.cli._app import app, main

__all__ = ["COMMANDS", "app", "main"]

#: modules whose ``register(app)`` adds their commands to the root app
COMMANDS = (
    "langmem_vault.cli._memories",
    "langmem_vault.cli._instructions",
    "langmem_vault.cli._admin",
    "langmem_vault.cli._eval",
    "langmem_vault.cli._jobs",
    "langmem_vault.cli._citus",
    "langmem_vault.api._serve",
    "langmem_vault.cli._mcp",
)

for _module in COMMANDS:
    importlib.import_module(_module).register(app)

if __name__ == "__main__":
    sys.exit(main())
