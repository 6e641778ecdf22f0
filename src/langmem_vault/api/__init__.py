"""The memory management REST API and web dashboard (FastAPI + Jinja2/htmx), mountable as
``http.app`` in ``langgraph.json`` and servable alone with ``langmem-vault serve``.

Needs the ``api`` extra (``pip install "langmem-vault[api]"``). Names load on first use, so
the CLI can register ``serve`` without importing FastAPI.

>>> from langmem_vault.api import create_app  # doctest: +SKIP
>>> app = create_app(prefix="/vault")  # doctest: +SKIP
"""

from typing import TYPE_CHECKING

from langmem_vault._lazy import LazyNames

if TYPE_CHECKING:
    from langmem_vault.api._app import DEFAULT_PREFIX, create_app
    from langmem_vault.api._auth import ApiKeyAuth, LocalOnlyAuth, default_auth

__all__ = ["DEFAULT_PREFIX", "ApiKeyAuth", "LocalOnlyAuth", "create_app", "default_auth"]

_NAMES = LazyNames(
    globals(),
    {
        "langmem_vault.api._app": ("DEFAULT_PREFIX", "create_app"),
        "langmem_vault.api._auth": ("ApiKeyAuth", "LocalOnlyAuth", "default_auth"),
    },
)


def __getattr__(name: str) -> object:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
