"""PageOp: a listing's pages cut in SQL on store_items_prefix_created_idx, in creation order.

Walking every page by cursor gives each matching item once, in (created_at, key) order; a
page's boundary stays where it was when items are added; a page reads the rows it returns
(EXPLAIN ANALYZE of its statement), not the namespace."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp, SearchOp

from langmem_vault.db._placeholders import raw
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._page_plan import FILTERED_PAGE_SETTINGS, page_plan
from langmem_vault.store._pages import Page, PageOp, runs_pages
from langmem_vault.store._validation import InvalidValueError
from tests.support.vacuum import all_visible

FACTS = ("memories", "u1", "semantic")
RULES = ("memories", "u1", "instructions")
OTHER = ("memories", "u2", "semantic")


async def _batch(store: Any, ops: list[Any]) -> list[Any]:
    return await store.abatch(ops) if isinstance(store, AsyncVaultStore) else store.batch(ops)


@pytest.fixture(params=["vault", "avault"])
async def store(request: pytest.FixtureRequest, pg_uri: str, schema: str) -> Any:
    if request.param == "vault":
        with VaultStore.from_conn_string(pg_uri, schema=schema) as s:
            s.setup()
            yield s
    else:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as a:
            await a.setup()
            yield a


async def _fill(store: Any) -> None:
    # Batches of three: items of one batch share a created_at (the transaction's), so the key
    # breaks ties, and the order is not simply the insertion order.
    for b in range(8):
        ops = [PutOp(FACTS, f"f{b}{k}", {"n": b, "odd": b % 2}, index=False) for k in "cab"]
        ops.append(PutOp(RULES, f"r{b}", {"n": b, "odd": b % 2}, index=False))
        ops.append(PutOp(OTHER, f"o{b}", {"n": b}, index=False))
        await _batch(store, ops)


async def _walk(store: Any, op: PageOp) -> list[Page]:
    pages = [(await _batch(store, [op]))[0]]
    while pages[-1].next is not None:
        pages.append((await _batch(store, [op._replace(after=pages[-1].next)]))[0])
    return pages


async def test_pages_by_cursor_give_every_match_once_in_creation_order(store: Any) -> None:
    await _fill(store)
    assert runs_pages(store)
    (everything,) = await _batch(store, [SearchOp(("memories", "u1"), limit=100)])
    mine = [i for i in everything if i.namespace in (FACTS, RULES)]
    newest = sorted(mine, key=lambda i: (i.created_at, i.key), reverse=True)
    op = PageOp((FACTS, RULES), limit=5, with_total=True)
    pages = await _walk(store, op)
    assert [len(p.items) for p in pages] == [5, 5, 5, 5, 5, 5, 2]
    assert [(i.namespace, i.key) for p in pages for i in p.items] == [
        (i.namespace, i.key) for i in newest
    ]
    assert pages[0].total == 32 and pages[-1].next is None
    oldest_op = op._replace(newest_first=False, filter={"odd": 1}, with_total=False)
    oldest = await _walk(store, oldest_op)
    odd = [i.key for i in reversed(newest) if i.value["odd"] == 1]
    assert [i.key for p in oldest for i in p.items] == odd and oldest[0].total is None
    (jump,) = await _batch(store, [op._replace(offset=7, limit=3)])
    assert [i.key for i in jump.items] == [i.key for i in newest[7:10]]
    bounded = [op._replace(count_limit=n, filter={"odd": 1}) for n in (3, 16, 17)]
    assert [p.total for p in await _batch(store, bounded)] == [3, 16, 16]


async def test_a_page_at_any_offset_is_the_orders_slice_ties_and_all(store: Any) -> None:
    await _fill(store)
    # the same key in both namespaces, one transaction (one time): only the namespace breaks
    # the tie, and a page may start between the two
    await _batch(
        store, [PutOp(ns, "tie", {"n": 9, "odd": 1}, index=False) for ns in (FACTS, RULES)]
    )
    (everything,) = await _batch(store, [SearchOp(("memories", "u1"), limit=100)])
    mine = [i for i in everything if i.namespace in (FACTS, RULES)]
    for newest_first, flt in [(True, None), (False, None), (True, {"odd": 1})]:
        kept = [i for i in mine if flt is None or i.value["odd"] == 1]
        kept.sort(key=lambda i: ".".join(i.namespace))  # ties: by namespace, ascending
        kept.sort(key=lambda i: (i.created_at, i.key), reverse=newest_first)
        order = [(i.namespace, i.key) for i in kept]
        op = PageOp((FACTS, RULES), limit=3, newest_first=newest_first, filter=flt)
        for offset in range(len(order) + 2):
            (page,) = await _batch(store, [op._replace(offset=offset)])
            assert [(i.namespace, i.key) for i in page.items] == order[offset : offset + 3]
            more = offset + 3 < len(order)
            assert (page.next is not None) == more, (offset, newest_first)
            if more and page.items[-1].key != "tie":  # a cursor names no namespace
                (rest,) = await _batch(store, [op._replace(after=page.next, limit=99)])
                assert [(i.namespace, i.key) for i in rest.items] == order[offset + 3 :]


async def test_a_cursor_page_keeps_its_boundary_when_items_are_added(store: Any) -> None:
    await _fill(store)
    op = PageOp((FACTS,), limit=4)
    (first,) = await _batch(store, [op])
    (second,) = await _batch(store, [op._replace(after=first.next)])
    await _batch(store, [PutOp(FACTS, f"new{n}", {"n": 99}, index=False) for n in range(5)])
    (again,) = await _batch(store, [op._replace(after=first.next)])
    assert [i.key for i in again.items] == [i.key for i in second.items]
    (top,) = await _batch(store, [op])
    assert [i.key for i in top.items][:4] == ["new4", "new3", "new2", "new1"]


async def test_a_bad_page_op_names_what_is_wrong(store: Any) -> None:
    for bad, field in [
        (PageOp(()), "namespaces"),
        (PageOp((FACTS,), limit=0), "limit"),
        (PageOp((FACTS,), with_total=True, count_limit=0), "count_limit"),
        (PageOp((FACTS,), after=("yesterday", "k")), "after"),  # type: ignore[arg-type]
        (PageOp((FACTS,), filter={"n": {"$near": 1}}), "$near"),
    ]:
        with pytest.raises(InvalidValueError, match=field.replace("$", r"\$")):
            await _batch(store, [bad])


def _thousand_facts(store: VaultStore, beside: tuple[str, ...], mark: str) -> None:
    """1,000 facts in 40 batches of 25, each batch with one item of ``beside`` (keys ``mark``)."""
    for b in range(40):
        ops = [PutOp(FACTS, f"f{b}_{k}", {"n": k}, index=False) for k in range(25)]
        store.batch([*ops, PutOp(beside, f"{mark}{b}", {"n": b}, index=False)])


def test_a_page_reads_only_the_rows_it_returns(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        _thousand_facts(store, OTHER, "o")
        (first,) = store.batch([PageOp((FACTS, RULES), limit=10)])
    cursor = first.next
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"ANALYZE {schema}.store_items")
        for op in (PageOp((FACTS, RULES), limit=10), PageOp((FACTS,), limit=10, after=cursor)):
            scans = _explained(conn, op, schema)
            walked = {s.get("Index Name") for s in scans}
            assert walked == {"store_items_prefix_created_idx"}
            assert sum(s["Actual Rows"] for s in scans) <= 11, json.dumps(scans)
        # A prepared statement's generic plan (psycopg prepares a statement run 5 times) walks
        # the same index: a filter must not turn it into a read of every match and a sort.
        filtered = PageOp((FACTS,), limit=10, filter={"n": 3}, after=cursor, newest_first=False)
        query = next(page_plan(filtered, schema)).queries[1]  # type: ignore[attr-defined]
        converted = raw(str(query.sql))
        assert converted is not None
        generic = converted[0]
        for name, value in FILTERED_PAGE_SETTINGS:  # as page_plan sends it
            conn.execute(f"SET {name} = {value}")
        plan = conn.execute(f"EXPLAIN (GENERIC_PLAN, FORMAT JSON) {generic}").fetchone()
        conn.execute("RESET ALL")
        assert plan is not None
        walked = {s.get("Index Name") for s in _scans(plan[0][0]["Plan"])}
        assert walked == {"store_items_prefix_created_idx"}, json.dumps(plan[0])


def test_a_page_at_an_offset_skips_its_rows_in_the_index_alone(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        _thousand_facts(store, RULES, "r")
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        all_visible(conn, f"{schema}.store_items")
        for op in (PageOp((FACTS, RULES), limit=10, offset=900), PageOp((FACTS,), offset=500)):
            scans = _explained(conn, op, schema)
            skips = [s for s in scans if s["Node Type"] == "Index Only Scan"]
            assert sum(s["Actual Rows"] for s in skips) >= op.offset, json.dumps(scans)
            assert all(s["Heap Fetches"] == 0 for s in skips), json.dumps(scans)
            read = sum(s["Actual Rows"] for s in scans if s not in skips)
            assert read <= len(op.namespaces) * (op.limit + 2), json.dumps(scans)


def _explained(conn: psycopg.Connection[Any], op: PageOp, schema: str) -> list[Any]:
    """The scans of store_items in the page statement's EXPLAIN ANALYZE."""
    query = next(page_plan(op, schema))
    row = conn.execute(
        f"EXPLAIN (ANALYZE, FORMAT JSON) {query.sql}",  # type: ignore[attr-defined]
        query.params,  # type: ignore[attr-defined]
    ).fetchone()
    assert row is not None
    return list(_scans(row[0][0]["Plan"]))


def _scans(node: dict[str, Any]) -> Any:
    if node.get("Relation Name") == "store_items":
        yield node
    for child in node.get("Plans", []):
        yield from _scans(child)


async def test_a_page_brings_each_items_mirror_in_its_statement(store: Any) -> None:
    await _fill(store)
    root = ("lv", "usage")
    await _batch(store, [PutOp((*root, *FACTS), "f7a", {"uses": 3}, index=False)])
    await _batch(store, [PutOp((*root, *OTHER), "f7b", {"uses": 9}, index=False)])  # not a mirror
    (page,) = await _batch(store, [PageOp((FACTS,), limit=3, mirror=root)])
    assert [i.key for i in page.items] == ["f7c", "f7b", "f7a"]
    assert page.mirrors is not None
    assert [m.value if m else None for m in page.mirrors] == [None, None, {"uses": 3}]
    assert page.mirrors[2] is not None and page.mirrors[2].namespace == (*root, *FACTS)
