"""Input checks run before anything is written: a bad op fails the whole batch up front.

Limits are counted in UTF-8 bytes where Postgres stores the text in a btree (a btree row holds
at most 2,704 bytes): the primary keys of store_items (prefix, key) and store_vectors (prefix,
key, field) must fit, whatever the script of the text. Postgres text cannot hold NUL, and
UTF-8 cannot encode a lone surrogate ("\\ud800"), so both are refused wherever text goes.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from typing import Any

from langgraph.store.base import InvalidNamespaceError

# A value's JSON encoding may not exceed this many bytes (configurable per store). Postgres
# accepts up to 255 MB of jsonb, but a memory that large is a bug upstream, not a memory.
DEFAULT_MAX_VALUE_BYTES = 1_000_000
# prefix + key + field stay under the btree's 2,704 bytes with room for the row headers.
MAX_KEY_BYTES = 1024
MAX_LABEL_BYTES = 256
MAX_NAMESPACE_BYTES = 1024  # the labels joined by "."
MAX_FIELD_BYTES = 256  # an index path (IndexConfig fields or PutOp.index)
MAX_QUERY_CHARS = 10_000
# JSON deeper than this is refused (Python's encoder would hit its recursion limit near 1,000).
MAX_VALUE_DEPTH = 200
# A TTL beyond this overflows Postgres timestamps long before it is useful (~190 years).
MAX_TTL_MINUTES = 100_000_000
# limit and offset of searches and namespace listings (Postgres LIMIT takes a bigint; twice
# this still fits).
MAX_PAGE = 2**31 - 1

_SURROGATE = re.compile("[\ud800-\udfff]")


class InvalidValueError(ValueError):
    """A value, key or query that cannot be stored or searched; nothing was written."""


def check_text(
    text: str, what: str, error: type[ValueError] = InvalidValueError, *, nul: bool = True
) -> None:
    """Refuse NUL (when ``nul``) and lone surrogates, naming ``what`` holds them."""
    if nul and "\x00" in text:
        raise error(f"{what} cannot contain NUL characters (Postgres text cannot hold them)")
    found = _SURROGATE.search(text)
    if found:
        raise error(
            f"{what} contains a lone surrogate {found.group()!r} at index {found.start()}: "
            "not valid Unicode, so it cannot be stored as UTF-8"
        )


def _check_bytes(text: str, limit: int, what: str, error: type[ValueError]) -> None:
    size = len(text.encode())
    if size > limit:
        raise error(f"{what} is {size} bytes in UTF-8, over the limit of {limit} bytes")


def check_namespace(namespace: tuple[str, ...], *, allow_empty: bool = False) -> None:
    """Namespace labels: non-empty strings without '.', NUL or lone surrogates, each at most
    ``MAX_LABEL_BYTES`` and together (joined by '.') at most ``MAX_NAMESPACE_BYTES``.

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
    _check_labels(namespace)


# A pure function of the labels, called dozens of times a turn with the same few namespaces
# (inject's 50 usage reads share one): valid ones are remembered (a refusal raises, so it is
# never cached and is checked again each time).
@lru_cache(maxsize=1024)
def _check_labels(namespace: tuple[str, ...]) -> None:
    for label in namespace:
        if not label:
            raise InvalidNamespaceError(f"Namespace labels cannot be empty strings: {namespace!r}")
        if "." in label:
            raise InvalidNamespaceError(
                f"Namespace labels cannot contain periods ('.'): {label!r} in {namespace!r}"
            )
        check_text(label, f"namespace label {label[:40]!r}", InvalidNamespaceError)
        _check_bytes(
            label, MAX_LABEL_BYTES, f"namespace label {label[:40]!r}…", InvalidNamespaceError
        )
    _check_bytes(".".join(namespace), MAX_NAMESPACE_BYTES, "the namespace", InvalidNamespaceError)


def check_key(key: str) -> None:
    if not isinstance(key, str):
        raise InvalidValueError(f"key must be a str, got {type(key).__name__}")
    if not key:
        raise InvalidValueError("key cannot be empty")
    check_text(key, "key")
    _check_bytes(key, MAX_KEY_BYTES, "key", InvalidValueError)


def check_query(query: str) -> None:
    if not isinstance(query, str):
        raise InvalidValueError(f"query must be a str, got {type(query).__name__}")
    check_text(query, "query")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidValueError(f"query is longer than {MAX_QUERY_CHARS} characters")


def check_field(path: str, what: str) -> None:
    """An index path: it names an embedding row (store_vectors' primary key)."""
    if not isinstance(path, str) or not path:
        raise InvalidValueError(f"{what} must be a non-empty str, got {path!r}")
    check_text(path, what)
    _check_bytes(path, MAX_FIELD_BYTES, what, InvalidValueError)


def check_page(name: str, value: Any) -> None:
    """limit / offset: an int from 0 to ``MAX_PAGE``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValueError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if not 0 <= value <= MAX_PAGE:
        raise InvalidValueError(f"{name} must be between 0 and {MAX_PAGE}, got {value}")


def check_minutes(ttl: Any, what: str = "ttl") -> None:
    """A TTL in minutes: a finite number, > 0 and at most ``MAX_TTL_MINUTES``."""
    if isinstance(ttl, bool) or not isinstance(ttl, int | float):
        raise InvalidValueError(f"{what} must be a number of minutes, got {ttl!r}")
    if not (math.isfinite(ttl) and 0 < ttl <= MAX_TTL_MINUTES):
        raise InvalidValueError(
            f"{what} must be a finite number of minutes > 0 and <= {MAX_TTL_MINUTES}, got {ttl!r}"
        )


def check_tree(obj: Any, what: str, *, string_keys: bool = False) -> None:
    """Walk a JSON-like tree (without recursion): its strings and dict keys must be storable
    text, and it may nest at most ``MAX_VALUE_DEPTH`` levels (which also stops a value that
    contains itself). ``string_keys``: dict keys must be str (json.dumps would turn 1 into "1").
    """
    stack: list[tuple[Any, str, int]] = [(obj, "$", 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, str):
            check_text(node, f"{what} at {path}")
        elif isinstance(node, dict | list | tuple):
            if depth >= MAX_VALUE_DEPTH:
                raise InvalidValueError(
                    f"{what} is nested more than {MAX_VALUE_DEPTH} levels deep at {path[:80]}…"
                )
            if isinstance(node, dict):
                for k, v in node.items():
                    if isinstance(k, str):
                        check_text(k, f"key {k[:40]!r} of {what} at {path}")
                    elif string_keys:
                        raise InvalidValueError(
                            f"keys of {what} must be strings, got {k!r} at {path}"
                        )
                    stack.append((v, f"{path}.{k}", depth + 1))
            else:
                stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(node))


def encode_value(value: Any, *, max_bytes: int) -> str:
    """Validate a value and return its JSON text.

    Raises InvalidValueError for non-dict values, values JSON cannot encode (NaN and
    Infinity included), NUL characters or lone surrogates, nesting deeper than
    ``MAX_VALUE_DEPTH``, or an encoding larger than ``max_bytes``.
    """
    if not isinstance(value, dict):
        raise InvalidValueError(f"value must be a dict, got {type(value).__name__}")
    for k in value:
        if not isinstance(k, str):  # json.dumps silently turns 1 into "1"
            raise InvalidValueError(f"value keys must be strings, got {k!r}")
    check_tree(value, "value")  # before json.dumps, which recurses
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"value is not JSON-serialisable: {exc}") from exc
    size = len(text.encode())
    if size > max_bytes:
        raise InvalidValueError(
            f"value is {size} bytes as JSON, over the limit of {max_bytes} bytes (max_value_bytes)"
        )
    return text
