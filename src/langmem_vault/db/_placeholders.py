"""A statement's named placeholders (``%(name)s``) turned into Postgres's own (``$1``), once
per statement text, so a long statement is not parsed again at every run.

psycopg converts a statement's placeholders at every ``execute`` and caches the conversion
only for statements up to 4 KiB and 50 parameters (psycopg discussion #628: ORMs' generated
texts rarely repeat). The store's search statements are longer (the namespace search about
6 KiB, 20 parameters) and repeat at every search: converting one cost 0.1-0.4 ms of client
CPU per search, about a tenth of a warm namespace search at 20k items (issue 26). Converted
here once, the statement runs on a :class:`psycopg.RawCursor`, which sends its text as it is
and binds the parameters in order; dumping the values is the same either way.

Only the placeholders psycopg's default cursor takes in a statement with named parameters
are handled the same way: ``%(name)s`` (a name used twice is one parameter), ``%%`` (a
literal ``%``); any other ``%`` (``%(name)b``, ``%s``...) leaves the statement to psycopg.

>>> raw("SELECT %(a)s + %(b)s, %(a)s, 100 %% 7")
('SELECT $1 + $2, $1, 100 % 7', ('a', 'b'))
>>> raw("SELECT %(a)b") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

_PERCENT = re.compile(r"%(?:(%)|\(([^)]+)\)s)?")

#: Distinct statement texts remembered (the store runs a few dozen).
CACHED_STATEMENTS = 256


@lru_cache(maxsize=CACHED_STATEMENTS)
def raw(statement: str) -> tuple[str, tuple[str, ...]] | None:
    """``statement`` with ``$n`` placeholders and the parameter names in ``$n`` order, or None
    when it holds a ``%`` form this does not convert."""
    names: dict[str, int] = {}
    out: list[str] = []
    end = 0
    for match in _PERCENT.finditer(statement):
        literal, name = match.groups()
        if literal is None and name is None:
            return None
        out.append(statement[end : match.start()])
        if literal is not None:
            out.append("%")
        else:
            out.append(f"${names.setdefault(name, len(names) + 1)}")
        end = match.end()
    out.append(statement[end:])
    return "".join(out), tuple(names)


def named(statement: str, params: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """The inverse of :func:`raw` for a statement sent on a raw cursor: named placeholders
    ``%(pN)s`` again and its values by name, for tools that record what the store sends and
    replay it on psycopg's default cursor (the routing tests, the benches' EXPLAINs).

    >>> named("SELECT $1 + $2, $1, 100 % 7", [4, 5])
    ('SELECT %(p1)s + %(p2)s, %(p1)s, 100 %% 7', {'p1': 4, 'p2': 5})
    """
    text = re.sub(r"\$(\d+)", r"%(p\1)s", statement.replace("%", "%%"))
    return text, {f"p{n}": value for n, value in enumerate(params, 1)}
