"""Any Python string in the saver's text and jsonb columns, kept exactly.

A graph's state may hold NUL characters or lone surrogates (``"\\ud800"``) in message text,
and so may the thread and user ids of a config; InMemorySaver keeps them, but Postgres text
and jsonb cannot hold NUL, and UTF-8 cannot encode a lone surrogate. Such a string (and one
that happens to start with the marker) is stored as the marker followed by its JSON escape,
which is plain ASCII; every other string is stored as it is, so ordinary ids, titles and
metadata look and sort in the database exactly as before.

>>> to_db("hi\\x00there")
'\\x01\\x1ahi\\\\u0000there'
>>> from_db(to_db("lone \\ud800")) == "lone \\ud800"
True
>>> to_db("plain")
'plain'
"""

from __future__ import annotations

import json
import re
from typing import Any

MARKER = "\x01\x1a"  # two control characters no id or title starts with
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def to_db(text: str) -> str:
    """``text`` in a form Postgres text and jsonb accept; :func:`from_db` gives it back."""
    if _UNSTORABLE.search(text) is None and not text.startswith(MARKER):
        return text
    return MARKER + json.dumps(text)[1:-1]


def from_db(text: str) -> str:
    if not text.startswith(MARKER):
        return text
    decoded: str = json.loads('"' + text[len(MARKER) :] + '"')
    return decoded


def opt_to_db(text: str | None) -> str | None:
    return None if text is None else to_db(text)


def opt_from_db(text: str | None) -> str | None:
    return None if text is None else from_db(text)


def tree_to_db(obj: Any) -> Any:
    """Every string (keys included) of a JSON-like value through :func:`to_db`."""
    if isinstance(obj, str):
        return to_db(obj)
    if isinstance(obj, dict):
        return {to_db(k) if isinstance(k, str) else k: tree_to_db(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [tree_to_db(v) for v in obj]
    return obj


def tree_from_db(obj: Any) -> Any:
    if isinstance(obj, str):
        return from_db(obj)
    if isinstance(obj, dict):
        return {from_db(k) if isinstance(k, str) else k: tree_from_db(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [tree_from_db(v) for v in obj]
    return obj
