"""MirrorSearchOp: a search whose results come with their mirror items (the item at the same
key under ``(*root, *namespace)``), read in the search's own statement. The results must be
exactly the plain search's; each mirror exactly what a get of it returns (None when absent or
expired)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from langgraph.store.base import GetOp, Item, PutOp, SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore

from langmem_vault.memory._recall.usage import USAGE_ROOT
from langmem_vault.store import AsyncVaultStore, PageOp, SearchRanking, VaultStore
from langmem_vault.store._mirrors import Mirrored, MirrorSearchOp, runs_mirror_search
from tests.support.embeddings import TrigramEmbeddings

NS = ("memories", "u1", "semantic")
SUB = (*NS, "work")
OTHER = ("memories", "u2", "semantic")
ROOT = ("lv", "usage")
TOPICS = ["green tea", "black coffee", "hiking boots", "jazz records", "sourdough bread"]

SEARCHES = [
    SearchOp(NS, limit=50),  # newest first, the namespace and the one below it
    SearchOp(NS, limit=4, offset=3),
    SearchOp(NS, filter={"private": True}),  # the private read, by its partial index
    SearchOp(("memories",), limit=100),  # two users
    SearchOp((), limit=100),  # no namespace: every item, mirrors included
    SearchOp(NS, query="tea", limit=8),  # ranked, in the namespace (exactly: a small one)
    SearchOp((), query="jazz", limit=6),  # ranked, by the HNSW index
    SearchOp(NS, query="coffee records", limit=100),  # ranked, then the un-indexed items
    SearchOp(NS, query="boots", filter={"category": "b"}, limit=5),  # scoped
]


def _writes() -> list[PutOp]:
    ops = [
        PutOp(NS, f"f{i}", {"text": f"fact {i} {TOPICS[i % 5]}", "category": "ab"[i % 2]})
        for i in range(30)
    ]
    ops += [PutOp(SUB, f"s{i}", {"text": f"work {TOPICS[i % 5]}"}) for i in range(5)]
    ops += [PutOp(OTHER, f"f{i}", {"text": f"other {TOPICS[i % 5]}"}) for i in range(5)]
    # never indexed: a ranked search returns them last, unscored
    ops += [
        PutOp(NS, f"p{i}", {"text": f"secret {i}", "private": True}, index=False) for i in range(3)
    ]
    # mirrors of some items of each namespace, and records elsewhere that are no mirrors
    ops += [PutOp((*ROOT, *NS), f"f{i}", {"n": i}, index=False) for i in range(0, 30, 3)]
    ops += [PutOp((*ROOT, *NS), "p1", {"n": 101}, index=False)]
    ops += [PutOp((*ROOT, *SUB), "s2", {"n": 202}, index=False)]
    ops += [PutOp((*ROOT, *OTHER), "f4", {"n": 304}, index=False)]
    ops += [PutOp((*ROOT, *NS), "f6-not-an-item", {"n": 0}, index=False)]
    ops += [PutOp(("lv", "other", *NS), f"f{i}", {"n": -1}, index=False) for i in range(30)]
    ops += [PutOp(ROOT, "f1", {"n": -2}, index=False)]  # the root itself mirrors nothing
    return ops


def _expire(uri: str, schema: str, namespace: tuple[str, ...], key: str) -> None:
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(
            f"UPDATE {schema}.store_items SET expires_at = now() - interval '1 minute'"
            " WHERE prefix = %s AND key = %s",
            (".".join(namespace), key),
        )


def _shape(item: SearchItem) -> tuple[Any, ...]:
    return (item.namespace, item.key, item.value, item.created_at, item.updated_at, item.score)


def _check(plain: list[SearchItem], mirrored: list[Mirrored], gets: list[Item | None]) -> None:
    assert all(isinstance(m, Mirrored) for m in mirrored)
    assert [_shape(m.item) for m in mirrored] == [_shape(i) for i in plain]
    assert [m.mirror for m in mirrored] == gets
    for m in mirrored:
        if m.mirror is not None:
            assert m.mirror.namespace == (*ROOT, *m.item.namespace)
            assert m.mirror.key == m.item.key


async def _batch(store: Any, ops: list[Any]) -> list[Any]:
    if isinstance(store, AsyncVaultStore):
        return await store.abatch(ops)
    return store.batch(ops)  # type: ignore[no-any-return]


async def _same_as_plain_search(store: Any, uri: str, schema: str) -> None:
    await _batch(store, _writes())
    _expire(uri, schema, (*ROOT, *NS), "f9")  # an expired mirror is no mirror
    ops: list[Any] = [*SEARCHES, *(MirrorSearchOp(op, ROOT) for op in SEARCHES)]
    results = await _batch(store, ops)
    plain, mirrored = results[: len(SEARCHES)], results[len(SEARCHES) :]
    seen = 0
    for op, found, with_mirrors in zip(SEARCHES, plain, mirrored, strict=True):
        assert found, op
        gets = [GetOp((*ROOT, *i.namespace), i.key, refresh_ttl=False) for i in found]
        _check(found, with_mirrors, await _batch(store, gets))
        seen += sum(m.mirror is not None for m in with_mirrors)
        keys = {(m.item.namespace, m.item.key) for m in with_mirrors if m.mirror is not None}
        assert (NS, "f9") not in keys
    assert seen > 10  # the scenario does find mirrors
    by_key = {(m.item.namespace, m.item.key): m.mirror for m in mirrored[0]}
    assert by_key[(NS, "f3")] is not None and by_key[(NS, "f3")].value == {"n": 3}
    assert by_key[(NS, "f4")] is None
    assert by_key[(SUB, "s2")] is not None and by_key[(SUB, "s2")].value == {"n": 202}
    private = {m.item.key: m.mirror for m in mirrored[2]}
    assert set(private) == {"p0", "p1", "p2"}
    assert private["p1"] is not None and private["p1"].value == {"n": 101}
    ranked = mirrored[7]
    fill = ranked[-3:]  # the un-indexed items, unscored, last
    assert {m.item.key for m in fill} == {"p0", "p1", "p2"}
    assert all(m.item.score is None for m in fill) and ranked[-4].item.score is not None
    assert {m.item.key: m.mirror.value for m in fill if m.mirror} == {"p1": {"n": 101}}


# The filter's HNSW walk, forced and cut short (see test_vault_store.WALK_INDEX): scopes past
# exact_scan_rows=5 are walked, and the walk runs out, so the filtered search is run again on
# its exact branch; the mirrors must come with that statement too.
WALK_RUNS_OUT = "-c enable_seqscan=off -c enable_sort=off -c hnsw.max_scan_tuples=20"


@pytest.mark.parametrize("walk", [False, True])
@pytest.mark.parametrize("kind", ["vault", "avault"])
async def test_results_are_the_searchs_and_mirrors_what_get_reads(
    pg_uri: str, schema: str, kind: str, walk: bool
) -> None:
    index = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}
    ranking = SearchRanking(exact_scan_rows=5) if walk else SearchRanking()
    uri = f"{pg_uri}&options={quote(WALK_RUNS_OUT)}" if walk else pg_uri
    if kind == "vault":
        with VaultStore.from_conn_string(uri, schema=schema, index=index, ranking=ranking) as store:
            store.setup()
            await _same_as_plain_search(store, pg_uri, schema)
    else:
        async with AsyncVaultStore.from_conn_string(
            uri, schema=schema, index=index, ranking=ranking
        ) as astore:
            await astore.setup()
            await _same_as_plain_search(astore, pg_uri, schema)


# Under USAGE_ROOT a mirror belongs to its item's user (the default tenant templates), so
# its probe names the user: one constant when the search or page is one user's, else each
# row's own (a search across users, a page of two users' namespaces).
ACROSS_USERS = [
    SearchOp(("memories",), limit=100),
    SearchOp(("memories",), query="tea coffee", limit=20),
    SearchOp(NS, query="tea", limit=8),
    SearchOp(OTHER, limit=10),
]


@pytest.mark.parametrize("kind", ["vault", "avault"])
async def test_mirrors_of_each_users_items_under_a_user_root(
    pg_uri: str, schema: str, kind: str
) -> None:
    async def run(store: Any) -> None:
        mirrors = {(NS, "f3"): 3, (NS, "f6"): 6, (SUB, "s2"): 202, (OTHER, "f4"): 304}
        writes = [
            PutOp((*USAGE_ROOT, *ns), k, {"n": n}, index=False) for (ns, k), n in mirrors.items()
        ]
        await _batch(store, [*_writes(), *writes])
        ops: list[Any] = [MirrorSearchOp(op, USAGE_ROOT) for op in ACROSS_USERS]
        ops += [
            PageOp((NS, OTHER), limit=50, mirror=USAGE_ROOT),
            PageOp((OTHER,), mirror=USAGE_ROOT),
        ]
        results = await _batch(store, ops)
        pairs = [(m.item, m.mirror) for m in (*results[0], *results[1], *results[2], *results[3])]
        pairs += [p for page in results[4:] for p in zip(page.items, page.mirrors, strict=True)]
        found = {}
        for item, mirror in pairs:
            (get,) = await _batch(store, [GetOp((*USAGE_ROOT, *item.namespace), item.key)])
            assert mirror == get, (item.namespace, item.key)
            if mirror is not None:
                found[(item.namespace, item.key)] = mirror.value["n"]
        assert found == mirrors  # each user's mirrors, every one of them found

    index = {"dims": 64, "embed": TrigramEmbeddings(), "fields": ["text"]}
    if kind == "vault":
        with VaultStore.from_conn_string(pg_uri, schema=schema, index=index) as store:
            store.setup()
            await run(store)
    else:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=index) as astore:
            await astore.setup()
            await run(astore)


def test_keyword_only_store(pg_uri: str, schema: str) -> None:
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        store.setup()
        store.batch(_writes())
        ops = [SearchOp(NS, query="tea", limit=20), SearchOp(NS, limit=10)]
        plain = store.batch(ops)
        mirrored = store.batch([MirrorSearchOp(op, ROOT) for op in ops])
        for found, with_mirrors in zip(plain, mirrored, strict=True):
            gets = store.batch([GetOp((*ROOT, *i.namespace), i.key) for i in found])
            _check(found, with_mirrors, gets)


@pytest.mark.parametrize("kind", ["vault", "avault"])
async def test_the_search_refreshes_its_items_not_their_mirrors(
    pg_uri: str, schema: str, kind: str
) -> None:
    async def run(store: Any) -> None:
        await _batch(store, [PutOp(NS, "k", {"text": "x"}, ttl=10.0)])
        await _batch(store, [PutOp((*ROOT, *NS), "k", {"n": 1}, ttl=10.0, index=False)])
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(
                f"UPDATE {schema}.store_items SET expires_at = now() + interval '1 minute'"
            )
            (found,) = await _batch(store, [MirrorSearchOp(SearchOp(NS, refresh_ttl=True), ROOT)])
            assert found[0].mirror is not None
            rows = dict(
                conn.execute(
                    f"SELECT prefix, expires_at - now() > interval '5 minutes'"
                    f" FROM {schema}.store_items"
                ).fetchall()
            )
        assert rows == {".".join(NS): True, ".".join((*ROOT, *NS)): False}

    ttl = {"default_ttl": 10.0, "refresh_on_read": True}
    if kind == "vault":
        with VaultStore.from_conn_string(pg_uri, schema=schema, ttl=ttl) as store:
            store.setup()
            await run(store)
    else:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, ttl=ttl) as astore:
            await astore.setup()
            await run(astore)


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (MirrorSearchOp(SearchOp(NS), ()), "mirror must be a non-empty namespace"),
        (MirrorSearchOp(SearchOp(NS), ["lv"]), "mirror must be a non-empty namespace"),  # type: ignore[arg-type]
        (MirrorSearchOp(SearchOp(NS), ("lv", "a.b")), "a.b"),
        (MirrorSearchOp(GetOp(NS, "k"), ROOT), "search must be a SearchOp"),  # type: ignore[arg-type]
        (MirrorSearchOp(SearchOp(NS, limit=-1), ROOT), "limit"),
    ],
)
@pytest.mark.parametrize("kind", ["vault", "avault"])
async def test_bad_op_fails_the_batch_before_any_write(
    pg_uri: str, schema: str, kind: str, op: MirrorSearchOp, message: str
) -> None:
    async def run(store: Any) -> None:
        with pytest.raises(ValueError, match=message):
            await _batch(store, [PutOp(NS, "new", {"text": "x"}), op])
        assert (await _batch(store, [GetOp(NS, "new")])) == [None]

    if kind == "vault":
        with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
            store.setup()
            await run(store)
    else:
        async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema) as astore:
            await astore.setup()
            await run(astore)


def test_which_stores_run_it(pg_uri: str, schema: str) -> None:
    assert not runs_mirror_search(InMemoryStore())
    assert not runs_mirror_search(object())
    with VaultStore.from_conn_string(pg_uri, schema=schema) as store:
        assert runs_mirror_search(store)
    assert AsyncVaultStore.supports_mirror_search is True
