"""CountOp: each label's count in one statement, the default label's counted in an index.

Each label no time changes (``fixed_sql``) is counted index-only on its own partial index of
store/0011; of the items whose label may depend on the time (``judged_sql``), only those
whose end time has passed at the op's time are read (store/0011's index of their end time);
the default label's count is every live item's, counted in store/0008's index without
reading them, less the others. The counts equal Python's labels of every live item (sync
and async, partitioned or not, at two times, capped or not), ``EXPLAIN ANALYZE`` shows the
statement reads only the ended items' rows, and store/0011's index conditions are the text
the statement writes."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp

from langmem_vault.db._status_counts_index import ENDS, FIXED, JUDGED
from langmem_vault.service._records import STATUS_RULES
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._labels import Rule, fixed_sql, judged_sql, label_of, past_sql
from langmem_vault.store._page_plan import count_plan
from langmem_vault.store._pages import CountOp
from langmem_vault.store._validation import InvalidValueError
from tests.store.test_pages import _batch
from tests.support.vacuum import all_visible

FACTS = ("memories", "u1", "semantic")
RULES = ("memories", "u1", "instructions")
TALKS = ("memories", "u1", "episodes")
OTHER = ("memories", "u2", "semantic")
LABELS = (STATUS_RULES["semantic"], STATUS_RULES["instruction"], STATUS_RULES["episode"])
#: (namespace, value) at each rule's edges; the plain ones are the default's
EDGES: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (FACTS, {}),
    (FACTS, {"status": "active"}),
    (FACTS, {"status": "pending_confirmation", "valid_to": "2020-01-01"}),
    (FACTS, {"status": "superseded", "superseded_by": "k"}),
    (FACTS, {"status": "superseded", "superseded_by": ""}),
    (FACTS, {"valid_to": "2020-01-01T00:00:00+00:00"}),
    (FACTS, {"valid_to": "2030-06-01T00:00:00Z"}),  # active now, expired at LATER
    (FACTS, {"valid_to": "2020-02-30"}),  # no such date: active
    (FACTS, {"valid_to": None}),
    (RULES, {}),
    (RULES, {"active": False}),
    (RULES, {"active": 0}),  # 0 is not false
    (RULES, {"expires_at": "2020-01-01"}),
    (TALKS, {"status": "superseded", "valid_to": "2020-01-01"}),  # episodes: always active
    (OTHER, {"status": "pending_confirmation"}),
]
LATER = datetime(2031, 1, 1, tzinfo=UTC)


@pytest.fixture(params=[("vault", 0), ("avault", 0), ("vault", 4), ("avault", 4)])
async def store(request: pytest.FixtureRequest, pg_uri: str, schema: str) -> Any:
    kind, partitions = request.param
    if kind == "vault":
        with VaultStore.from_conn_string(pg_uri, schema=schema) as s:
            s.setup(partitions=partitions)
            yield s
    else:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as a:
            await a.setup(partitions=partitions)
            yield a


def _expected(values: list[tuple[tuple[str, ...], dict[str, Any]]], now: datetime) -> Counter[Any]:
    labeling = dict(zip((FACTS, RULES, TALKS), LABELS, strict=True))
    return Counter(label_of(labeling[ns], v, now) for ns, v in values if ns in labeling)


async def test_counts_are_the_labels_python_gives_every_live_item(store: Any) -> None:
    values = [(ns, v) for n in range(3) for ns, v in EDGES] + [(FACTS, {})] * 7
    ops = [PutOp(ns, f"k{n}", v, index=False) for n, (ns, v) in enumerate(values)]
    await _batch(store, ops)
    op = CountOp((FACTS, RULES, TALKS), LABELS)
    for now in (datetime.now(UTC), LATER):
        expected = _expected(values, now)
        assert set(expected) == {"active", "pending", "superseded", "forgotten", "expired"} | {
            "disabled"
        }
        (counts,) = await _batch(store, [op._replace(now=now)])
        assert counts == expected, now
        # capped: the default's count is exact up to the limit, at least the limit beyond it;
        # the others are exact whatever the limit
        for limit in (1, expected["active"] - 1, expected["active"], 10_000):
            (capped,) = await _batch(store, [op._replace(now=now, limit=limit)])
            assert {k: n for k, n in capped.items() if k != "active"} == {
                k: n for k, n in expected.items() if k != "active"
            }
            assert capped["active"] == min(expected["active"], max(limit, capped["active"]))
            assert limit <= capped["active"] <= expected["active"] or capped == expected
    (facts,) = await _batch(store, [CountOp((FACTS,), LABELS[:1], {"status": "superseded"})])
    assert facts == {"superseded": 3, "forgotten": 3}
    (talks,) = await _batch(store, [CountOp((TALKS,), LABELS[2:])])
    assert talks == {"active": 3}
    # labelings with different defaults: every row judged, the same counts
    mixed = CountOp((FACTS, TALKS), (LABELS[0], (Rule("talk"),)), now=LATER)
    (walked,) = await _batch(store, [mixed])
    labeling = {FACTS: LABELS[0], TALKS: (Rule("talk"),)}
    assert walked == Counter(label_of(labeling[ns], v, LATER) for ns, v in values if ns in labeling)
    with pytest.raises(InvalidValueError, match="limit"):
        await _batch(store, [op._replace(limit=0)])


def test_a_count_reads_only_the_rows_whose_status_may_not_be_active(
    pg_uri: str, schema: str
) -> None:
    for partitions, name in ((0, schema), (4, schema + "_p")):
        with VaultStore.from_conn_string(pg_uri, schema=name) as store:
            store.setup(partitions=partitions)
            plain = [PutOp(FACTS, f"f{n}", {"text": "x"}, index=False) for n in range(300)]
            odd = [PutOp(FACTS, f"g{n}", v, index=False) for n, (_, v) in enumerate(EDGES[2:8])]
            store.batch([*plain, *odd, PutOp(OTHER, "o", {"status": "superseded"}, index=False)])
            # others' rows, so that the user's are a small part of the table (and partition)
            store.batch(
                [
                    PutOp(("memories", f"v{u}", "semantic"), f"o{n}", {"text": "y"}, index=False)
                    for u in range(20)
                    for n in range(150)
                ]
            )
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            all_visible(conn, f"{name}.store_items")
            query = next(count_plan(CountOp((FACTS,), LABELS[:1], limit=1001), name))
            row = conn.execute(
                f"EXPLAIN (ANALYZE, FORMAT JSON) {query.sql}",  # type: ignore[attr-defined]
                query.params,  # type: ignore[attr-defined]
            ).fetchone()
            assert row is not None
            nodes = list(_nodes(row[0][0]["Plan"]))
            shown = json.dumps(row[0][0]["Plan"])
            read = [n for n in nodes if n.get("Relation Name", "").startswith("store_items")]
            indexes = _status_indexes(conn, name)
            ends = [n for n in nodes if indexes.get(n.get("Index Name", "")) == "semantic_ends_idx"]
            # EDGES[5]: the one end time passed (of EDGES[5:8]: an end time and no status)
            assert sum(n["Actual Rows"] for n in ends) == 1, shown
            only = [n for n in read if n["Node Type"] == "Index Only Scan"]
            assert all(n["Heap Fetches"] == 0 for n in only), shown
            fixed = Counter(
                indexes[n["Index Name"]] for n in only for _ in range(int(n["Actual Rows"]))
            )
            # EDGES[2:5], each in its status' index; every live row in store/0008's
            assert fixed == {
                "pending_idx": 1,
                "superseded_idx": 1,
                "forgotten_idx": 1,
                "every": 306,
            }, shown
            # the heap: only the ended row's (a bitmap scan of it, or an index scan)
            heap = [n for n in read if n not in only]
            assert sum(n["Actual Rows"] + n.get("Rows Removed by Filter", 0) for n in heap) == 1


def test_the_indexes_hold_what_the_count_writes() -> None:
    """store/0011's conditions (db/_status_counts_index.py, written out for the index) are
    the text store/_labels writes from STATUS_RULES, so the planner can match them."""
    for kind, fixed in FIXED.items():
        labels = [(label, where) for label, _, where in fixed]
        assert fixed_sql(STATUS_RULES[kind], "value") == labels
        assert judged_sql(STATUS_RULES[kind], "value") == JUDGED[kind]
        assert past_sql(STATUS_RULES[kind], "value") == ("expired", f"(value -> '{ENDS[kind]}')")
    assert set(FIXED) == set(JUDGED) == set(ENDS)
    assert set(ENDS) == {k for k, r in STATUS_RULES.items() if len(r) > 1}


def _status_indexes(conn: psycopg.Connection[Any], schema: str) -> dict[str, str]:
    """Every index of the schema (a partition's too, named by Postgres when built on the
    parent) by what it holds: store/0011's suffix (its parent's, for a partition's), else
    "every" (the count of all live rows)."""
    rows = conn.execute(
        """SELECT c.relname::text, coalesce(p.relname, c.relname)::text
        FROM pg_class AS c
        LEFT JOIN pg_inherits AS h ON h.inhrelid = c.oid
        LEFT JOIN pg_class AS p ON p.oid = h.inhparent
        WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('i', 'I')""",
        (schema,),
    ).fetchall()
    suffixes = [s for kind in FIXED.values() for _, s, _ in kind]
    suffixes += [f"{kind}_ends_idx" for kind in ENDS]
    return {
        name: next((s for s in suffixes if parent.endswith("status_" + s)), "every")
        for name, parent in rows
    }


def _nodes(node: dict[str, Any]) -> Any:
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)
