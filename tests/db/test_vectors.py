"""Query vectors go to Postgres in pgvector's binary form and read back as the same vector."""

from __future__ import annotations

import psycopg
import pytest
from langgraph.store.base import PutOp

from langmem_vault.db._vectors import QueryVector
from langmem_vault.store import VaultStore
from tests.support.embeddings import TrigramEmbeddings, index_config

VALUES = [1.0, -0.5, 0.25, 3.0e-8, 123456.0]
TEXT = "[1,-0.5,0.25,3e-08,123456]"


@pytest.mark.parametrize("prepare", [False, True])
def test_a_query_vector_is_sent_binary_and_read_as_the_vector(pg_uri: str, prepare: bool) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        with conn.cursor() as cur:
            cur.execute("SELECT %(qv)s::vector::text", {"qv": QueryVector(VALUES)}, prepare=prepare)
            assert cur.fetchone() == (TEXT,)
            # the cosine distance of a vector to itself: the server read the floats exactly
            cur.execute(
                "SELECT %(qv)s::vector <=> %(t)s::vector", {"qv": QueryVector(VALUES), "t": TEXT}
            )
            row = cur.fetchone()
            assert row is not None and row[0] == pytest.approx(0.0, abs=1e-7)
        with conn.pipeline():
            cur = conn.execute("SELECT %s::vector::text", [QueryVector([2.0])])
        assert cur.fetchone() == ("[2]",)


async def test_async_a_query_vector_is_sent_binary(pg_uri: str) -> None:
    async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as conn:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        cur = await conn.execute("SELECT %s::vector::text", [QueryVector(VALUES)])
        assert await cur.fetchone() == (TEXT,)


def test_a_client_side_binding_cursor_gets_the_text_form(pg_uri: str) -> None:
    # A ClientCursor (some PgBouncer setups) binds parameters as text in the client.
    with psycopg.connect(pg_uri, autocommit=True, cursor_factory=psycopg.ClientCursor) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        assert conn.execute("SELECT %s::vector::text", [QueryVector(VALUES)]).fetchone() == (TEXT,)


def test_the_binary_form_is_pgvectors() -> None:
    # dimensions (int16), unused (int16), float4s: all big-endian (pgvector's vector_recv)
    assert QueryVector([1.0]).data == b"\x00\x01\x00\x00\x3f\x80\x00\x00"


def test_a_store_on_a_client_side_binding_connection_searches(pg_uri: str, schema: str) -> None:
    with psycopg.connect(pg_uri, autocommit=True, cursor_factory=psycopg.ClientCursor) as conn:
        store = VaultStore(conn, schema=schema, index=index_config(TrigramEmbeddings()))  # type: ignore[arg-type]
        store.setup()
        store.batch(
            [PutOp(("u",), "a", {"text": "tea time"}), PutOp(("u",), "b", {"text": "jazz"})]
        )
        assert [h.key for h in store.search(("u",), query="tea")][:1] == ["a"]
