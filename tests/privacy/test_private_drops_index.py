"""A fact made private loses the embedding and full-text vector it had while public."""

from __future__ import annotations

import psycopg

from langmem_vault.memory.vault import MemoryVault
from langmem_vault.store import VaultStore
from tests.support.embeddings import TrigramEmbeddings, index_config


def test_fact_made_private_is_no_longer_indexed(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(
        pg_uri, schema=schema, index=index_config(TrigramEmbeddings())
    ) as store:
        store.setup()
        vault = MemoryVault(store, user_id="u1")
        key = vault.remember("User sees a cardiologist every March").key
        [hit] = store.search(("memories", "u1", "semantic"), query="cardiologist")
        assert hit.score is not None and hit.score > 0.5
        vault.update(key, private=True)
        with psycopg.connect(pg_uri) as conn:
            row = conn.execute(
                f"SELECT (SELECT count(*) FROM {schema}.store_vectors), "
                f"(SELECT count(*) FROM {schema}.store_items WHERE search_tsv IS NOT NULL)"
            ).fetchone()
        assert row == (0, 0)
        [hit] = store.search(("memories", "u1", "semantic"), query="cardiologist")
        assert hit.score is None
