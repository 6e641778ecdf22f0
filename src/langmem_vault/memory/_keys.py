"""The one rule for a memory's key: an identifier, never a path.

A key is 1 to 128 characters of ASCII letters, digits, ``-``, ``_`` and ``.``, starting with
a letter or a digit (the keys this package makes are UUIDs). Keys end up in URLs, HTML
attributes, file names and audit rows; a key that held ``/``, ``?``, ``#``, ``..`` or spaces
could be read as a path or a query by whoever builds a link from it (a planted key once
turned a dashboard click against another user). Every memory write checks it
(:func:`~langmem_vault.memory._writes.memory_put`: the vault, reconcile, import, the tools, the
API), so no stored key needs more than this.

>>> check_key("3f1c2a9e-8d4b-4f7e-9a61-0c2b5d7e8f90")
'3f1c2a9e-8d4b-4f7e-9a61-0c2b5d7e8f90'
>>> check_key("x/../instructions/k/delete?user_id=bob")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
langmem_vault.memory._keys.InvalidKeyError: key: must be 1..128 characters of letters, ...
"""

from __future__ import annotations

import re

__all__ = ["KEY_PATTERN", "MAX_KEY", "InvalidKeyError", "check_key", "is_valid_key"]

MAX_KEY = 128
#: the allowed keys, as a regular expression (also the API's path parameter pattern)
KEY_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_KEY - 1}}}$"
_KEY = re.compile(KEY_PATTERN)
RULE = (
    f"must be 1..{MAX_KEY} characters of letters, digits, '-', '_' or '.', starting with a "
    "letter or digit (keys are identifiers, not paths)"
)


class InvalidKeyError(ValueError):
    """A key outside the rule; the message names ``key`` and the rule."""


def is_valid_key(key: object) -> bool:
    """Whether ``key`` follows the rule."""
    return isinstance(key, str) and _KEY.fullmatch(key) is not None


def check_key(key: object, *, field: str = "key") -> str:
    """``key`` if it follows the rule, else :class:`InvalidKeyError` naming ``field``."""
    if not is_valid_key(key):
        shown = repr(key) if not isinstance(key, str) or len(key) <= 200 else repr(key[:200])
        raise InvalidKeyError(f"{field}: {RULE}, got {shown}")
    return key  # type: ignore[return-value]
