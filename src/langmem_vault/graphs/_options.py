"""Typed options of the memory nodes, for ``build_memory_graph`` and ``add_memory``.

Each class holds the keyword options of one node factory, with the factory's own defaults
(read from its signature, so the two cannot drift apart). A misspelt option fails where it is
written, and an editor completes the names.

>>> from langmem_vault.graphs import InjectOptions
>>> InjectOptions(max_tokens=600).max_tokens
600
>>> InjectOptions().max_facts == InjectOptions.__dataclass_fields__["max_facts"].default
True
>>> InjectOptions(max_tokns=600)
Traceback (most recent call last):
...
TypeError: InjectOptions.__init__() got an unexpected keyword argument 'max_tokns'

Before 0.2 these were plain dicts (``inject_options={"max_tokens": 600}``); a dict still works,
with a ``DeprecationWarning``, and is checked the same way.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from langmem_vault.nodes import (
    create_compact_node,
    create_extract_node,
    create_inject_node,
    create_reconcile_node,
    create_respond_node,
)

__all__ = [
    "CompactOptions",
    "ExtractOptions",
    "InjectOptions",
    "NodeOptions",
    "ReconcileOptions",
    "RespondOptions",
]


def _defaults(factory: Callable[..., Any]) -> dict[str, Any]:
    return {
        name: p.default
        for name, p in inspect.signature(factory).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


_INJECT = _defaults(create_inject_node)
_RESPOND = _defaults(create_respond_node)
_EXTRACT = _defaults(create_extract_node)
_RECONCILE = _defaults(create_reconcile_node)
_COMPACT = _defaults(create_compact_node)


class NodeOptions:
    """What every options class shares: its fields as the factory's keyword arguments."""

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments (shallow: a ``ScoringWeights`` stays one)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class InjectOptions(NodeOptions):
    """Options of :func:`~langmem_vault.nodes.create_inject_node` (see it for each one)."""

    max_tokens: int = _INJECT["max_tokens"]
    token_counter: Any = _INJECT["token_counter"]
    max_facts: int = _INJECT["max_facts"]
    max_episodes: int = _INJECT["max_episodes"]
    max_instructions: int = _INJECT["max_instructions"]
    candidates: int = _INJECT["candidates"]
    max_share: float = _INJECT["max_share"]
    include_private: bool = _INJECT["include_private"]
    weights: Any = _INJECT["weights"]
    record_access: Any = _INJECT["record_access"]
    emit_events: bool = _INJECT["emit_events"]
    documents: Any = _INJECT["documents"]
    document_tokens: int = _INJECT["document_tokens"]


@dataclass(frozen=True, kw_only=True)
class RespondOptions(NodeOptions):
    """Options of :func:`~langmem_vault.nodes.create_respond_node` (``system_prompt`` is a
    parameter of ``build_memory_graph`` itself)."""

    cite: bool = _RESPOND["cite"]
    record_utility: Any = _RESPOND["record_utility"]


@dataclass(frozen=True, kw_only=True)
class ExtractOptions(NodeOptions):
    """Options of :func:`~langmem_vault.nodes.create_extract_node` (``mode`` and ``queue``
    are the builders' ``extract_mode`` and ``queue``)."""

    every_n_messages: int = _EXTRACT["every_n_messages"]
    debounce_seconds: float | None = _EXTRACT["debounce_seconds"]
    similar_limit: int = _EXTRACT["similar_limit"]
    redaction: Any = _EXTRACT["redaction"]
    start_worker: bool = _EXTRACT["start_worker"]
    max_attempts: int = _EXTRACT["max_attempts"]
    idle_seconds: float | None = _EXTRACT["idle_seconds"]


@dataclass(frozen=True, kw_only=True)
class ReconcileOptions(NodeOptions):
    """Options of :func:`~langmem_vault.nodes.create_reconcile_node`."""

    similarity_threshold: float = _RECONCILE["similarity_threshold"]
    confirm_threshold: float = _RECONCILE["confirm_threshold"]


@dataclass(frozen=True, kw_only=True)
class CompactOptions(NodeOptions):
    """Options of :func:`~langmem_vault.nodes.create_compact_node` (its model is the
    builders' ``summarizer``)."""

    max_tokens: int = _COMPACT["max_tokens"]
    trigger_ratio: float = _COMPACT["trigger_ratio"]
    keep_last_exchanges: int = _COMPACT["keep_last_exchanges"]
    token_counter: Any = _COMPACT["token_counter"]
    archive: bool = _COMPACT["archive"]
    redaction: Any = _COMPACT["redaction"]


OptionsT = TypeVar("OptionsT", bound=NodeOptions)


def coerce_options(
    value: OptionsT | Mapping[str, Any] | None,
    cls: type[OptionsT],
    argument: str,
    *,
    stacklevel: int = 3,
) -> OptionsT:
    """``value`` as ``cls``: ``None`` gives the defaults; a dict is the deprecated form (its
    warning names the line ``stacklevel`` frames up: the caller of the public function)."""
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        warnings.warn(
            f"{argument}= as a dict is deprecated; pass {cls.__name__}(...) instead",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
        try:
            return cls(**value)
        except TypeError as error:
            raise TypeError(f"{argument}: {error}") from None
    raise TypeError(f"{argument} must be {cls.__name__}, got {type(value).__name__}")
