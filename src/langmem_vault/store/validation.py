"""Input checks run before anything is written: a bad op fails the whole batch up front."""

from __future__ import annotations

import json
from typing import Any

from langgraph.store.base import InvalidNamespaceError

# A value's JSON encoding may not exceed this many bytes (configurable per store). Postgres
# accepts up to 255 MB of jsonb, but a memory that large is a bug upstream, not a memory.
DEFAULT_MAX_VALUE_BYTES = 1_000_000
MAX_KEY_CHARS = 1024
MAX_LABEL_CHARS = 256
MAX_QUERY_CHARS = 10_000


class InvalidValueError(ValueError):
    """A value, key or query that cannot be stored or searched; nothing was written."""


def check_namespace(namespace: tuple[str, ...], *, allow_empty: bool = False) -> None:
    """Namespace labels: non-empty strings without '.' or NUL.

    The reserved root label "langgraph" is refused by ``BaseStore.put`` itself; ops passed to
    ``batch`` directly may use it, as in InMemoryStore.
    """
    if not isinstance(namespace, tuple):
        raise InvalidNamespaceError(f"namespace must be a tuple of str, got {namespace!r}")
    if not namespace and not allow_empty:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"Namespace labels must be strings, got {label!r} in {namespace!r}"
            )
        if not label:
            raise InvalidNamespaceError(f"Namespace labels cannot be empty strings: {namespace!r}")
        if "." in label:
            raise InvalidNamespaceError(
                f"Namespace labels cannot contain periods ('.'): {label!r} in {namespace!r}"
            )
        if "\x00" in label:
            raise InvalidNamespaceError(f"Namespace labels cannot contain NUL: {namespace!r}")
        if len(label) > MAX_LABEL_CHARS:
            raise InvalidNamespaceError(
                f"Namespace label longer than {MAX_LABEL_CHARS} characters in {namespace!r}"
            )


def check_key(key: str) -> None:
    if not isinstance(key, str):
        raise InvalidValueError(f"key must be a str, got {type(key).__name__}")
    if not key:
        raise InvalidValueError("key cannot be empty")
    if "\x00" in key:
        raise InvalidValueError(f"key cannot contain NUL characters: {key!r}")
    if len(key) > MAX_KEY_CHARS:
        raise InvalidValueError(f"key is longer than {MAX_KEY_CHARS} characters")


def check_query(query: str) -> None:
    if not isinstance(query, str):
        raise InvalidValueError(f"query must be a str, got {type(query).__name__}")
    if "\x00" in query:
        raise InvalidValueError("query cannot contain NUL characters")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidValueError(f"query is longer than {MAX_QUERY_CHARS} characters")


def _reject_nul(obj: Any, path: str) -> None:
    # Postgres text and jsonb cannot hold NUL (\u0000).
    if isinstance(obj, str):
        if "\x00" in obj:
            raise InvalidValueError(f"value at {path} contains a NUL character")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if "\x00" in k:
                raise InvalidValueError(f"key {k!r} in value at {path} contains a NUL character")
            _reject_nul(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _reject_nul(v, f"{path}[{i}]")


def encode_value(value: Any, *, max_bytes: int) -> str:
    """Validate a value and return its JSON text.

    Raises InvalidValueError for non-dict values, values JSON cannot encode (NaN and
    Infinity included), NUL characters, or an encoding larger than ``max_bytes``.
    """
    if not isinstance(value, dict):
        raise InvalidValueError(f"value must be a dict, got {type(value).__name__}")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"value is not JSON-serialisable: {exc}") from exc
    for k in value:
        if not isinstance(k, str):  # json.dumps silently turns 1 into "1"
            raise InvalidValueError(f"value keys must be strings, got {k!r}")
    _reject_nul(value, "$")
    size = len(text.encode())
    if size > max_bytes:
        raise InvalidValueError(
            f"value is {size} bytes as JSON, over the limit of {max_bytes} bytes (max_value_bytes)"
        )
    return text
