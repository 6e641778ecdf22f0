"""Health checks of a server: the pgvector smoke test run by ``langmem-vault doctor`` and by
the test suite before anything else.

The smoke test is what crashed on CPUs without AVX-512 with the old embedded build: an HNSW
index build, an insert into the index and an index search. It runs on a temporary table
dropped at commit, so it leaves nothing behind.

>>> from langmem_vault.db import open_pool
>>> from langmem_vault.db._connection import Database
>>> Database(open_pool()).run(vector_smoke_plan())  # doctest: +SKIP
'0.8.6'
"""

from __future__ import annotations

from langmem_vault.db._runner import Plan, Query

SMOKE_ROWS = 200


class VectorCheckError(RuntimeError):
    """pgvector is missing, or its HNSW index gave a wrong answer."""


def vector_smoke_plan() -> Plan[str]:
    """Build, fill and search an HNSW index; returns pgvector's version."""
    rows = yield Query("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    if not rows:
        raise VectorCheckError(
            "the vector extension is not installed in this database: run "
            "`CREATE EXTENSION vector` as a superuser (or call setup() on a VaultStore)"
        )
    version = str(rows[0]["extversion"])
    yield Query("CREATE TEMP TABLE lmv_vector_smoke (id int, e vector(3)) ON COMMIT DROP")
    yield Query(
        "INSERT INTO lmv_vector_smoke SELECT i, ('[' || i || ',1,2]')::vector"
        " FROM generate_series(1, %s) i",
        (SMOKE_ROWS,),
    )
    yield Query("CREATE INDEX ON lmv_vector_smoke USING hnsw (e vector_cosine_ops)")
    yield Query("INSERT INTO lmv_vector_smoke VALUES (0, '[1,2,3]')")
    # The table is tiny: without this the planner would scan it and never touch the index.
    yield Query("SET LOCAL enable_seqscan = off")
    found = yield Query("SELECT id FROM lmv_vector_smoke ORDER BY e <=> '[1,1,1]' LIMIT 5")
    if not found or len(found) != 5:
        raise VectorCheckError(
            f"an HNSW search returned {len(found or [])} rows instead of 5 (pgvector {version})"
        )
    return version
