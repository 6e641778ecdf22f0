"""Query vectors sent to Postgres in pgvector's binary form.

pgvector's text form costs about 0.2 ms per 384-dimension vector to write in Python (a float
repr each) and more to parse in the server; the binary form is a ``struct.pack``. The dumper is
registered on psycopg's global adapters for :class:`QueryVector` only, so every connection, ours
or a caller's, sends it without a per-database type lookup: its type OID is left unknown (0)
and the statement's ``::vector`` cast tells the server how to read it.

>>> QueryVector([1.0, 0.5]).data.hex()
'000200003f8000003f000000'
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format

__all__ = ["QueryVector"]


class QueryVector:
    """A vector parameter, packed once: ``%(qv)s::vector`` in a statement reads it."""

    __slots__ = ("data",)

    def __init__(self, values: Sequence[float]) -> None:
        # pgvector's vector_recv: int16 dimensions, int16 unused, then float4s, big-endian.
        self.data = struct.pack(f">HH{len(values)}f", len(values), 0, *values)


class _QueryVectorTextDumper(Dumper):
    # Only where a parameter must be text: a ClientCursor binds every parameter in the client.
    format = Format.TEXT
    oid = 0

    def dump(self, obj: QueryVector) -> bytes:
        (dims,) = struct.unpack_from(">H", obj.data)
        values = struct.unpack_from(f">{dims}f", obj.data, 4)
        return ("[" + ",".join(map(repr, values)) + "]").encode()


class _QueryVectorDumper(Dumper):
    format = Format.BINARY
    oid = 0  # unknown: the server takes the type from the statement's cast

    def dump(self, obj: QueryVector) -> bytes:
        return obj.data


# Registered last, the binary dumper is the one ``%s`` (the automatic format) picks.
psycopg.adapters.register_dumper(QueryVector, _QueryVectorTextDumper)
psycopg.adapters.register_dumper(QueryVector, _QueryVectorDumper)
