"""The app object that servers load: ``langgraph.json``'s ``"http": {"app":
"langmem_vault.api.server:app"}`` and ``uvicorn langmem_vault.api.server:app``.

Configured from the environment: ``LANGMEM_VAULT_DSN`` (default: the embedded server),
``LANGMEM_VAULT_API_PREFIX`` (default ``/vault``), and the API keys of
:mod:`langmem_vault.api.auth`.
"""

from __future__ import annotations

import os

from langmem_vault.api.app import DEFAULT_PREFIX, create_app

__all__ = ["PREFIX_ENV", "app"]

PREFIX_ENV = "LANGMEM_VAULT_API_PREFIX"

app = create_app(prefix=os.environ.get(PREFIX_ENV, DEFAULT_PREFIX))
