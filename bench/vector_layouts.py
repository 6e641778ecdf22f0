"""How a bench database's vectors are laid out (issue 28, ``partitions_bench.py``): main's
layout before ``store_vectors_namespace_idx``, and that index grown as the rows arrive.

A running store grows the index row by row, in the order users' items arrive (interleaved),
so its leaf pages split as they fill and a user's pages end up spread over the file; built
after the load (as the migration builds it on an existing table) they would lie in order.
``regrow`` makes the grown index without a second load through the store: the vectors are
written again in their arrival order (the heap's order: the load only appended) into the
emptied table, under all its indexes, as the puts wrote them.
"""

from __future__ import annotations

import time
from typing import Any

INDEX = "store_vectors_namespace_idx"
LONG_KEYS = "store_vectors_long_keys_idx"
_LENGTH = "octet_length(tenant) + octet_length(prefix) + octet_length(key) + octet_length(field)"


def _create(conn: Any, schema: str, dims: int) -> None:
    """The two indexes as store_vectors/0004 makes them."""
    # imported here: search_ab.py's workers import this module with older trees' src too
    from langmem_vault.store._vector_sql import namespace_key_bytes

    room = namespace_key_bytes(dims)
    key = f"ON {schema}.store_vectors (tenant, prefix, key, field)"
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {INDEX} {key} INCLUDE (embedding) WHERE {_LENGTH} <= {room}"
    )
    conn.execute(f"CREATE INDEX IF NOT EXISTS {LONG_KEYS} {key} WHERE {_LENGTH} > {room}")


def without_namespace_index(conn: Any, schema: str) -> None:
    """Main's layout: the indexes gone, their migration kept as applied (setup() leaves it)."""
    conn.execute(f"DROP INDEX IF EXISTS {schema}.{INDEX}")
    conn.execute(f"DROP INDEX IF EXISTS {schema}.{LONG_KEYS}")


def regrow(conn: Any, schema: str, dims: int) -> float:
    """Write ``schema.store_vectors`` again in arrival order under every index of a store set
    up by this tree (the namespace index included); returns the seconds it took."""
    s = schema
    t0 = time.perf_counter()
    conn.execute(
        f"CREATE TEMP TABLE arrival AS SELECT row_number() OVER (ORDER BY ctid) AS n, *"
        f" FROM {s}.store_vectors"
    )
    conn.execute(f"TRUNCATE {s}.store_vectors")
    _create(conn, s, dims)
    conn.execute(
        f"INSERT INTO {s}.store_vectors (tenant, prefix, key, field, embedding)"
        " SELECT tenant, prefix, key, field, embedding FROM arrival ORDER BY n"
    )
    conn.execute("DROP TABLE arrival")
    return time.perf_counter() - t0


def rebuild(conn: Any, schema: str) -> float:
    """The index rebuilt online (``REINDEX CONCURRENTLY``): its leaves in key order on disk,
    each user's together; returns the seconds it took."""
    t0 = time.perf_counter()
    conn.execute(f"REINDEX INDEX CONCURRENTLY {schema}.{INDEX}")
    return time.perf_counter() - t0
