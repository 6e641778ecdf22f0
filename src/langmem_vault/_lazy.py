"""Names a package loads on first use (PEP 562), so importing it stays light.

The package, ``langmem_vault.nodes`` and ``langmem_vault.privacy`` list the public names of
each module they re-export and hand their module ``__getattr__`` and ``__dir__`` to
:class:`LazyNames`:

>>> ns = {"__name__": "pkg"}
>>> names = LazyNames(ns, {"textwrap": ("dedent", "indent")})
>>> names.load("dedent")("  x")
'x'
>>> "dedent" in ns, names.listing()
(True, ['__name__', 'dedent', 'indent'])
>>> names.load("missing")
Traceback (most recent call last):
AttributeError: module 'pkg' has no attribute 'missing'
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

__all__ = ["LazyNames"]


class LazyNames:
    """The lazily loaded names of one package: ``modules`` maps a module to the names it
    gives the package."""

    def __init__(
        self, namespace: MutableMapping[str, Any], modules: Mapping[str, Iterable[str]]
    ) -> None:
        self.namespace = namespace
        self.where = {name: module for module, names in modules.items() for name in names}

    def load(self, name: str) -> Any:
        """The value of ``name`` (the package's ``__getattr__``)."""
        module = self.where.get(name)
        if module is None:
            package = self.namespace["__name__"]
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        self.namespace[name] = value  # later lookups skip __getattr__
        return value

    def listing(self) -> list[str]:
        """The package's names, loaded or not (its ``__dir__``)."""
        return sorted({*self.namespace, *self.where})
