"""Namespace templates for the three memory kinds, filled from the run's config and context.

A template is a tuple of labels; a label like ``"{user_id}"`` is replaced by the value of that
key in the run, found by the rule the checkpointer uses too
(:func:`langmem_vault._run_config.config_value`): ``config["configurable"]``, then (for
``user_id`` only) ``configurable["langgraph_user_id"]``, set by LangGraph Platform's auth,
then LangGraph's run context (``graph.invoke(..., context={"user_id": ...})``).
Keeping every user's memories under their own namespace prefix is the hard per-user partition
the nodes rely on.

Store labels may not contain ``.``, so a value is encoded reversibly: ``%`` becomes ``%25`` and
``.`` becomes ``%2E`` (an email address works as a user id). :func:`decode_label` reverses it
where ids are read back from namespaces.

>>> resolve_namespace(SEMANTIC, {"configurable": {"user_id": "u1"}})
('memories', 'u1', 'semantic')
>>> resolve_namespace(SEMANTIC, {"configurable": {"user_id": "ana.g@example.com"}})
('memories', 'ana%2Eg@example%2Ecom', 'semantic')
>>> decode_label('ana%2Eg@example%2Ecom')
'ana.g@example.com'
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langmem_vault._run_config import RunConfigError, config_value, run_context
from langmem_vault._tenants import decode_label, encode_label

__all__ = [
    "EPISODES",
    "INSTRUCTIONS",
    "SEMANTIC",
    "TAILS_ROOT",
    "WATERMARK_NAMESPACE",
    "MemoryNamespaces",
    "MissingConfigKeyError",
    "NamespaceTemplate",
    "decode_label",
    "encode_label",
    "resolve_namespace",
    "run_context",
    "tails_namespace",
]

NamespaceTemplate = tuple[str, ...]

SEMANTIC: NamespaceTemplate = ("memories", "{user_id}", "semantic")
EPISODES: NamespaceTemplate = ("memories", "{user_id}", "episodes")
INSTRUCTIONS: NamespaceTemplate = ("memories", "{user_id}", "instructions")
#: Where the extract node keeps each thread's inline watermark (one item per thread id).
#: Defined here, below both extraction and privacy, so erase finds it without a copy.
WATERMARK_NAMESPACE: tuple[str, ...] = ("langmem_vault", "watermarks", "extract")
#: Inline extraction keeps each thread's not-yet-extracted messages (its tail) under
#: ``tails_namespace(semantic)``, one item per thread id; erase takes them with the user.
TAILS_ROOT: tuple[str, ...] = ("langmem_vault", "tails")

_FORMATTER = string.Formatter()


def tails_namespace(namespace: tuple[str, ...]) -> tuple[str, ...]:
    """Where inline extraction keeps the unextracted tails of the threads whose facts go to
    ``namespace`` (outside it, so no search of the memories ever returns a tail).

    >>> tails_namespace(("memories", "u1", "semantic"))
    ('langmem_vault', 'tails', 'memories', 'u1', 'semantic')
    """
    return (*TAILS_ROOT, *namespace)


class MissingConfigKeyError(RunConfigError, KeyError):
    """A namespace template needs a key that ``config["configurable"]`` does not hold."""

    def __init__(self, key: str, template: NamespaceTemplate) -> None:
        self.key = key
        self.template = template
        super().__init__(
            f"namespace template {template!r} needs {key!r}; pass it as "
            f"graph.invoke(..., config={{'configurable': {{{key!r}: ...}}}}) or in the run "
            f"context, graph.invoke(..., context={{{key!r}: ...}})"
        )

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


def _fields(label: str) -> list[str]:
    return [name for _, name, _, _ in _FORMATTER.parse(label) if name]


def resolve_namespace(
    template: NamespaceTemplate, config: Mapping[str, Any] | None, *, context: Any = None
) -> tuple[str, ...]:
    """Fill a namespace template's ``{key}`` labels from the run (see the module docstring).

    ``context`` defaults to the run context found in ``config``. Raises
    :class:`MissingConfigKeyError` (a ``KeyError``) naming the missing key, and ``ValueError``
    when a filled label is empty.

    >>> resolve_namespace(("memories", "{user_id}", "episodes"), {"configurable": {"user_id": "a"}})
    ('memories', 'a', 'episodes')
    >>> resolve_namespace(("m", "{user_id}"), {}, context={"user_id": "b"})
    ('m', 'b')
    """
    if context is None:
        context = run_context(config)
    resolved: list[str] = []
    for label in template:
        names = _fields(label)
        if not names:
            resolved.append(label)
            continue
        values: dict[str, str] = {}
        for name in names:
            value = config_value(name, config, context=context)
            if value is None:
                raise MissingConfigKeyError(name, template)
            values[name] = encode_label(str(value))
        filled = label.format(**values)
        if not filled:
            raise ValueError(f"namespace label {label!r} filled to an empty label")
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

    def resolve(
        self, config: Mapping[str, Any] | None, *, context: Any = None
    ) -> ResolvedNamespaces:
        """Fill all three templates from one config (and run context)."""
        if context is None:
            context = run_context(config)
        return ResolvedNamespaces(
            semantic=resolve_namespace(self.semantic, config, context=context),
            episodes=resolve_namespace(self.episodes, config, context=context),
            instructions=resolve_namespace(self.instructions, config, context=context),
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
