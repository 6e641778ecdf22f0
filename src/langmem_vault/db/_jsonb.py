"""jsonb values decoded by orjson on the connections of our pools.

Every store read decodes one JSON value per row (inject reads about 100 rows a turn);
orjson decodes a memory value in about 2.5 us where the standard library's ``json`` takes
about 9 us (bench/RESULTS.md, issue 14 inject). The result is the same value, with two
exceptions orjson handles differently, so those go to ``json``: integers of more than 64 bits
(orjson returns a float; jsonb numbers have no such bound) and what orjson refuses (a lone
surrogate escape). Connections a caller passes in are left as they are.

>>> loads(b'{"n": 123456789012345678901234567890, "x": [1.5, null]}')
{'n': 123456789012345678901234567890, 'x': [1.5, None]}
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from psycopg import AsyncConnection, Connection
from psycopg.types.json import set_json_loads

__all__ = ["aconfigure", "configure", "loads"]

# A run of 19 digits may be an integer past 64 bits (the longest int64 has 19): json keeps
# it exact. Digits inside strings take this path too, which only costs time. Found by mapping
# every digit to "0" and every other byte to "." (bytes.translate, then a substring search):
# 1.2 us for a 590-byte fact, where the regex \d{19} took 5.7 us, more than orjson's decoding.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x2E for b in range(256))
_LONG_RUN = b"0" * 19


def _long_digit_run(raw: bytes) -> bool:
    """Whether ``raw`` holds 19 digits in a row.

    >>> _long_digit_run(b'{"n": 1234567890123456789}'), _long_digit_run(b'{"n": 1.5e300}')
    (True, False)
    """
    return _LONG_RUN in raw.translate(_DIGITS_ONLY)


def loads(data: bytes | str) -> Any:
    """``json.loads``, by orjson where orjson gives the same value."""
    raw = data.encode() if isinstance(data, str) else data
    if not _long_digit_run(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # json raises the same error, or reads what orjson refuses
    return json.loads(raw)


def configure(conn: Connection[Any]) -> None:
    """Decode json and jsonb with :func:`loads` on this connection (a pool's ``configure``)."""
    set_json_loads(loads, conn)


async def aconfigure(conn: AsyncConnection[Any]) -> None:
    """Async twin of :func:`configure`."""
    set_json_loads(loads, conn)
