"""Reading a value of the run from a LangGraph config: the one rule the memory nodes (their
namespace templates) and the checkpointer (a thread's owner) share.

A name is looked up in ``config["configurable"]``; for ``user_id`` (and ``langgraph_user_id``)
the other of the two is tried next, since LangGraph Platform's auth sets
``langgraph_user_id`` and LangMem's templates use it too; then LangGraph's run context
(``graph.invoke(..., context={"user_id": ...})``), a dict, a dataclass or a pydantic model.
An empty string counts as missing.

User ids follow one rule everywhere (graph, middleware, tools, checkpointer, CLI, API):
:func:`check_user_id`. A user id found nowhere is None (the namespace templates then say which
key they need); one that is empty or blank wherever it was read, with no usable one
elsewhere, is a :class:`UserIdError` naming ``user_id`` and where it was read from.

>>> config_value("user_id", {"configurable": {"langgraph_user_id": "u1"}})
'u1'
>>> config_value("user_id", {"configurable": {}}, context={"user_id": "u2"})
'u2'
>>> config_value("user_id", {}) is None
True
>>> try:
...     config_value("user_id", {"configurable": {"user_id": "  "}})
... except UserIdError as exc:
...     print(exc)
user_id (from configurable['user_id']): must be a non-empty string, got '  '
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

__all__ = [
    "MAX_USER_ID",
    "RunConfigError",
    "UserIdError",
    "check_user_id",
    "config_value",
    "run_context",
]

_USER_KEYS = {"user_id": "langgraph_user_id", "langgraph_user_id": "user_id"}
#: the longest user id (characters): it is a namespace label and an audit field
MAX_USER_ID = 256


class RunConfigError(Exception):
    """The run lacks what memory needs (a user id, a thread id): the app's mistake, so it is
    raised whatever a node's ``on_error`` says."""


class UserIdError(RunConfigError, ValueError):
    """A user id that is empty, blank, too long or not storable text; the message names
    ``user_id`` and where it was read from."""


def check_user_id(value: object, where: str = "the argument", *, any_text: bool = False) -> str:
    """``value`` when it is a usable user id, else :class:`UserIdError` naming ``user_id``
    and ``where`` it was read from.

    ``any_text``: NUL and lone surrogates are allowed (the checkpointer keeps any id, as
    langgraph's own savers do; memory namespaces cannot hold them).

    >>> check_user_id("ana", "the CLI")
    'ana'
    >>> try:
    ...     check_user_id("", "the CLI")
    ... except UserIdError as error:
    ...     print(error)
    user_id (from the CLI): must be a non-empty string, got ''
    """
    if not isinstance(value, str) or not value.strip():
        raise UserIdError(f"user_id (from {where}): must be a non-empty string, got {value!r}")
    if len(value) > MAX_USER_ID:
        raise UserIdError(
            f"user_id (from {where}): must be at most {MAX_USER_ID} characters, got {len(value)}"
        )
    if not any_text and ("\x00" in value or any("\ud800" <= c <= "\udfff" for c in value)):
        raise UserIdError(f"user_id (from {where}): must not hold NUL or lone surrogates")
    return value


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


def config_value(
    name: str, config: Mapping[str, Any] | None, *, context: Any = None, any_text: bool = False
) -> Any:
    """The run's value for ``name`` (see the module docstring), or None when it has none.

    ``context`` defaults to the run context found in ``config``; ``any_text``: see
    :func:`check_user_id`.
    """
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    if name not in _USER_KEYS:
        value = configurable.get(name)
        if value is None or value == "":
            if context is None:
                context = run_context(config)
            value = None if context is None else _attribute(context, name)
        return None if value == "" else value
    # A user id: the first usable one of the three places; a blank one only counts when
    # none is usable, and then it is an error naming where it was read from.
    blank: tuple[object, str] | None = None
    for key in (name, _USER_KEYS[name]):
        value = configurable.get(key)
        if _blank(value):
            blank = blank or (value, f"configurable[{key!r}]")
        elif value is not None:
            return _checked(value, f"configurable[{key!r}]", any_text)
    if context is None:
        context = run_context(config)
    value = None if context is None else _attribute(context, name)
    if _blank(value):
        blank = blank or (value, "the run context")
    elif value is not None:
        return _checked(value, "the run context", any_text)
    if blank is not None:
        check_user_id(*blank)
    return None


def _checked(value: object, where: str, any_text: bool) -> object:
    return check_user_id(value, where, any_text=any_text) if isinstance(value, str) else value


def _blank(value: object) -> bool:
    return isinstance(value, str) and not value.strip()
