"""Reading a value of the run from a LangGraph config: the one rule the memory nodes (their
namespace templates) and the checkpointer (a thread's owner) share.

A name is looked up in ``config["configurable"]``; for ``user_id`` (and ``langgraph_user_id``)
the other of the two is tried next, since LangGraph Platform's auth sets
``langgraph_user_id`` and LangMem's templates use it too; then LangGraph's run context
(``graph.invoke(..., context={"user_id": ...})``), a dict, a dataclass or a pydantic model.
An empty string counts as missing.

>>> config_value("user_id", {"configurable": {"langgraph_user_id": "u1"}})
'u1'
>>> config_value("user_id", {"configurable": {}}, context={"user_id": "u2"})
'u2'
>>> config_value("user_id", {}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

__all__ = ["config_value", "run_context"]

_USER_KEYS = {"user_id": "langgraph_user_id", "langgraph_user_id": "user_id"}


def run_context(config: Mapping[str, Any] | None) -> Any:
    """LangGraph's run context (``invoke(..., context=...)``) carried by a config."""
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    for value in configurable.values():  # langgraph keeps the Runtime under a private key
        if isinstance(value, Runtime):
            return value.context
    return None


def _attribute(context: Any, name: str) -> Any:
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


def config_value(name: str, config: Mapping[str, Any] | None, *, context: Any = None) -> Any:
    """The run's value for ``name`` (see the module docstring), or None when it has none.

    ``context`` defaults to the run context found in ``config``.
    """
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    value = configurable.get(name)
    if (value is None or value == "") and name in _USER_KEYS:
        value = configurable.get(_USER_KEYS[name])
    if value is None or value == "":
        if context is None:
            context = run_context(config)
        if context is not None:
            value = _attribute(context, name)
    return None if value == "" else value
