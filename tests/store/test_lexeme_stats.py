"""The keyword statistics of a partitioned store go stale as its partitions grow: autovacuum
analyzes the partitions, never the partitioned table whose statistics (``inherited``) the
store reads, so the search's own staleness check must see the partitions' rows."""

from __future__ import annotations

import psycopg
from langgraph.store.base import PutOp

from langmem_vault.store import VaultStore
from langmem_vault.store._keyword_sql import LEXEME_FREQ
from langmem_vault.store._lexemes import LexemeStats
from langmem_vault.store._sql import lexeme_stats


def _stale(uri: str, schema: str) -> tuple[bool, float]:
    params = {"schema_name": schema, "common_rows": 500}
    with psycopg.connect(uri) as conn:
        row = conn.execute(lexeme_stats(schema), params).fetchone()
    assert row is not None
    return bool(row[3]), float(row[2])


def test_a_partitioned_store_sees_its_statistics_go_stale(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup(partitions=4)
        assert _stale(pg_uri, schema) == (False, 0.0)  # empty: nothing to analyze
        ns = ("memories", "u1", "semantic")
        store.batch([PutOp(ns, f"k{n}", {"text": f"tea and cake {n}"}) for n in range(600)])
        with psycopg.connect(pg_uri, autocommit=True) as conn:  # what autovacuum does
            conn.execute(f"ANALYZE {schema}.store_items_p0, {schema}.store_items_p1")
            conn.execute(f"ANALYZE {schema}.store_items_p2, {schema}.store_items_p3")
        stale, rows = _stale(pg_uri, schema)
        assert stale and rows == 600
        # a search analyzes the partitioned table, and the statistics hold
        assert store.search(ns, query="tea", limit=1)
        assert _stale(pg_uri, schema) == (False, 600.0)


def test_the_statistics_are_read_in_one_row_holding_every_listed_lexeme(
    pg_uri: str, schema: str
) -> None:
    # The search looks a lexeme up in the text the read builds (LEXEME_FREQ): each listed
    # lexeme must come back with its listed frequency, and the rarest must be the smallest
    # (a lexeme not listed counts as half of it).
    params = {"schema_name": schema, "common_rows": 500}
    listed_sql = """SELECT e.elem, e.freq FROM pg_stats AS st CROSS JOIN LATERAL
        unnest(st.most_common_elems::text::text[], st.most_common_elem_freqs) AS e(elem, freq)
        WHERE st.schemaname = %s AND st.tablename = 'store_items'
          AND st.attname = 'search_tsv' AND e.elem IS NOT NULL"""
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            assert conn.execute(lexeme_stats(schema), params).fetchall() == [
                ("\x01", None, 0.0, False)
            ]
            ns = ("memories", "u1", "semantic")
            texts = [f"tea w{n % 300} v{n % 7} x{n % 41}" for n in range(900)]
            store.batch([PutOp(ns, f"k{n}", {"text": t}) for n, t in enumerate(texts)])
            conn.execute(f"ANALYZE {schema}.store_items")
            listed = dict(conn.execute(listed_sql, [schema]).fetchall())
            ((freqs, rarest, rows, stale),) = conn.execute(lexeme_stats(schema), params).fetchall()
            found = conn.execute(
                f"SELECT l, {LEXEME_FREQ} FROM unnest(%(lexemes)s::text[]) AS q(l)",
                LexemeStats(freqs, rows, rarest).params() | {"lexemes": list(listed)},
            ).fetchall()
    assert len(listed) > 300 and (rows, stale) == (900.0, False)
    assert dict(found) == listed
    assert rarest == min(listed.values())
