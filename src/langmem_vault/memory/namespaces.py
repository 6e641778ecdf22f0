"""Namespace templates for the three memory kinds, filled from ``config["configurable"]``.

A template is a tuple of labels; a label like ``"{user_id}"`` is replaced by the value of
that key in the run's configurable dict. Keeping every user's memories under their own
namespace prefix is the hard per-user partition the nodes rely on.

>>> resolve_namespace(SEMANTIC, {"configurable": {"user_id": "u1"}})
('memories', 'u1', 'semantic')
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EPISODES",
    "INSTRUCTIONS",
    "SEMANTIC",
    "WATERMARK_NAMESPACE",
    "MemoryNamespaces",
    "MissingConfigKeyError",
    "NamespaceTemplate",
    "resolve_namespace",
]

NamespaceTemplate = tuple[str, ...]

SEMANTIC: NamespaceTemplate = ("memories", "{user_id}", "semantic")
EPISODES: NamespaceTemplate = ("memories", "{user_id}", "episodes")
INSTRUCTIONS: NamespaceTemplate = ("memories", "{user_id}", "instructions")
#: Where the extract node keeps each thread's inline watermark (one item per thread id).
#: Defined here, below both extraction and privacy, so erase finds it without a copy.
WATERMARK_NAMESPACE: tuple[str, ...] = ("langmem_vault", "watermarks", "extract")

_FORMATTER = string.Formatter()


class MissingConfigKeyError(KeyError):
    """A namespace template needs a key that ``config["configurable"]`` does not hold."""

    def __init__(self, key: str, template: NamespaceTemplate) -> None:
        self.key = key
        self.template = template
        super().__init__(
            f"namespace template {template!r} needs config['configurable'][{key!r}]; "
            f"pass it as graph.invoke(..., config={{'configurable': {{{key!r}: ...}}}})"
        )

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


def _fields(label: str) -> list[str]:
    return [name for _, name, _, _ in _FORMATTER.parse(label) if name]


def resolve_namespace(
    template: NamespaceTemplate, config: Mapping[str, Any] | None
) -> tuple[str, ...]:
    """Fill a namespace template's ``{key}`` labels from ``config["configurable"]``.

    Raises :class:`MissingConfigKeyError` (a ``KeyError``) naming the missing key, and
    ``ValueError`` when a filled label is empty or contains a dot (not a valid store label).

    >>> resolve_namespace(("memories", "{user_id}", "episodes"), {"configurable": {"user_id": "a"}})
    ('memories', 'a', 'episodes')
    """
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    resolved: list[str] = []
    for label in template:
        names = _fields(label)
        if not names:
            resolved.append(label)
            continue
        values: dict[str, str] = {}
        for name in names:
            value = configurable.get(name)
            if value is None or value == "":
                raise MissingConfigKeyError(name, template)
            values[name] = str(value)
        filled = label.format(**values)
        if not filled or "." in filled:
            raise ValueError(
                f"namespace label {label!r} filled to {filled!r}: labels must be non-empty "
                "and contain no '.'"
            )
        resolved.append(filled)
    return tuple(resolved)


@dataclass(frozen=True)
class MemoryNamespaces:
    """The three namespace templates the nodes read and write.

    >>> ns = MemoryNamespaces()
    >>> ns.resolve({"configurable": {"user_id": "u1"}}).semantic
    ('memories', 'u1', 'semantic')
    """

    semantic: NamespaceTemplate = SEMANTIC
    episodes: NamespaceTemplate = EPISODES
    instructions: NamespaceTemplate = INSTRUCTIONS

    def resolve(self, config: Mapping[str, Any] | None) -> ResolvedNamespaces:
        """Fill all three templates from one config."""
        return ResolvedNamespaces(
            semantic=resolve_namespace(self.semantic, config),
            episodes=resolve_namespace(self.episodes, config),
            instructions=resolve_namespace(self.instructions, config),
        )

    def config_keys(self) -> set[str]:
        """The configurable keys these templates need (for example ``{"user_id"}``)."""
        keys: set[str] = set()
        for template in (self.semantic, self.episodes, self.instructions):
            for label in template:
                keys.update(_fields(label))
        return keys


@dataclass(frozen=True)
class ResolvedNamespaces:
    """Concrete namespaces for one user/run (the output of ``MemoryNamespaces.resolve``)."""

    semantic: tuple[str, ...]
    episodes: tuple[str, ...]
    instructions: tuple[str, ...]
