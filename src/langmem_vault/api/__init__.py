"""The memory management REST API and web dashboard (FastAPI + Jinja2/htmx), mountable as
``http.app`` in ``langgraph.json`` and servable alone with ``langmem-vault serve``.

Needs the ``api`` extra (``pip install "langmem-vault[api]"``).

>>> from langmem_vault.api import create_app  # doctest: +SKIP
>>> app = create_app(prefix="/vault")  # doctest: +SKIP
"""

from langmem_vault.api.app import DEFAULT_PREFIX, create_app
from langmem_vault.api.auth import ApiKeyAuth, LocalOnlyAuth, default_auth

__all__ = ["DEFAULT_PREFIX", "ApiKeyAuth", "LocalOnlyAuth", "create_app", "default_auth"]
