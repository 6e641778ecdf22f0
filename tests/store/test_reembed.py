"""``reembed``: every stored vector made again with the store's current embeddings, in place,
on the real embedded Postgres (sync and async)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp

from langmem_vault.db._steps import Embed
from langmem_vault.store import AsyncVaultStore, VaultStore
from langmem_vault.store._reembed import DEFAULT_PAGE
from tests.support.embeddings import TrigramEmbeddings
from tests.support.routing import partition_of, partitions_read, recorded


class Reversed(TrigramEmbeddings):
    """Another model of the same dimensions: the trigrams of the reversed text."""

    def _one(self, text: str) -> list[float]:
        return super()._one(text[::-1])


OLD, NEW = TrigramEmbeddings(), Reversed()
ITEMS = [
    (("memories", "u1", "semantic"), "f1", {"text": "Lives in Lyon"}, None),
    (
        ("memories", "u1", "semantic"),
        "f2",
        {"text": "Works at Acme", "tags": ["job", "acme"]},
        ["text", "tags[*]"],
    ),
    (("memories", "u2", "semantic"), "f3", {"content": "Likes jazz"}, None),  # LangMem's shape
    (("memories", "u1", "semantic"), "raw", {"text": "not indexed"}, False),
    (("docs",), "d1", {"text": "Release notes"}, None),
]


def _index(embed: Any) -> dict[str, Any]:
    return {"dims": 64, "embed": embed, "fields": ["text"]}


def _vectors(pg_uri: str, schema: str) -> dict[tuple[str, str, str], list[float]]:
    with psycopg.connect(pg_uri) as conn:
        rows = conn.execute(
            f"SELECT prefix, key, field, embedding::text FROM {schema}.store_vectors"
        ).fetchall()
    return {(p, k, f): [float(x) for x in e.strip("[]").split(",")] for p, k, f, e in rows}


def _stamps(pg_uri: str, schema: str) -> dict[str, datetime]:
    with psycopg.connect(pg_uri) as conn:
        rows = conn.execute(f"SELECT key, updated_at FROM {schema}.store_items").fetchall()
    return dict(rows)


def _close(a: list[float], b: list[float]) -> bool:
    return all(abs(x - y) < 1e-5 for x, y in zip(a, b, strict=True))


EXPECTED = {
    ("memories.u1.semantic", "f1", "text"): "Lives in Lyon",
    ("memories.u1.semantic", "f2", "text"): "Works at Acme",
    ("memories.u1.semantic", "f2", "tags[*].0"): "job",
    ("memories.u1.semantic", "f2", "tags[*].1"): "acme",
    ("memories.u2.semantic", "f3", "content"): "Likes jazz",
    ("docs", "d1", "text"): "Release notes",
}


@pytest.fixture
def stores(pg_uri: str, schema: str) -> Iterator[tuple[VaultStore, VaultStore]]:
    """The same tables, first with the old model, then with the new one."""
    with (
        VaultStore.from_conn_string(pg_uri, schema=schema, index=_index(OLD)) as old,  # type: ignore[arg-type]
        VaultStore.from_conn_string(pg_uri, schema=schema, index=_index(NEW)) as new,  # type: ignore[arg-type]
    ):
        old.setup()
        old.batch([PutOp(ns, key, value, index=index) for ns, key, value, index in ITEMS])
        yield old, new


def test_every_vector_is_made_again_and_items_keep_their_times(
    stores: tuple[VaultStore, VaultStore], pg_uri: str, schema: str
) -> None:
    _, new = stores
    before, stamps = _vectors(pg_uri, schema), _stamps(pg_uri, schema)
    assert set(before) == set(EXPECTED)
    assert new.reembed(page=2) == len(EXPECTED)  # pages of 2: the keyset walk goes on
    after = _vectors(pg_uri, schema)
    for row, text in EXPECTED.items():
        assert _close(after[row], NEW.embed_query(text)), row
        assert not _close(after[row], before[row]), row
    assert _stamps(pg_uri, schema) == stamps  # "newest first" orders do not move
    (hit,) = new.search(("memories", "u1"), query="Lives in Lyon", limit=1)
    assert hit.key == "f1"


def test_a_prefix_scopes_it(
    stores: tuple[VaultStore, VaultStore], pg_uri: str, schema: str
) -> None:
    _, new = stores
    before = _vectors(pg_uri, schema)
    assert new.reembed(("memories", "u1")) == 4  # f1, and f2 with its two tags
    after = _vectors(pg_uri, schema)
    changed = {row for row in before if not _close(before[row], after[row])}
    assert changed == {row for row in EXPECTED if row[0] == "memories.u1.semantic"}


@pytest.mark.parametrize(
    "put",
    [
        {"value": {"text": "Changed notes"}, "index": None},  # a new text, embedded by the put
        {"value": {"text": "Release notes", "seen": 2}, "index": False},  # keeps its old vector
    ],
)
def test_an_item_changed_during_the_run_is_done_again(
    stores: tuple[VaultStore, VaultStore], pg_uri: str, schema: str, put: dict[str, Any]
) -> None:
    _, new = stores
    steps = new._reembedding(new._db, (), DEFAULT_PAGE)
    sent: Any = None
    embeds = 0
    while True:
        try:
            step = steps.send(sent)
        except StopIteration as done:
            written = done.value
            break
        sent = step.run(None)
        if isinstance(step, Embed):
            embeds += 1
            if embeds == 1:  # the page is read and embedded; then d1 changes
                new.put(("docs",), "d1", put["value"], index=put["index"])
    assert embeds == 2  # d1's row went round again, read afresh
    assert written == len(EXPECTED)
    text = put["value"]["text"]
    assert _close(_vectors(pg_uri, schema)[("docs", "d1", "text")], NEW.embed_query(text))


def test_bad_input_is_named_and_nothing_is_written(
    stores: tuple[VaultStore, VaultStore], pg_uri: str, schema: str
) -> None:
    old, _ = stores
    before = _vectors(pg_uri, schema)
    with pytest.raises(ValueError, match="page must be >= 1"):
        old.reembed(page=0)
    with pytest.raises(ValueError, match="Namespace labels cannot be empty"):
        old.reembed(("a", ""))
    with (
        VaultStore.from_conn_string(
            pg_uri, schema=schema, index=_index(TrigramEmbeddings(32))
        ) as wrong,  # type: ignore[arg-type]
        pytest.raises(ValueError, match="64"),
    ):
        wrong.reembed()
    with VaultStore.from_conn_string(pg_uri, schema=schema) as plain:
        with pytest.raises(ValueError, match="needs a store with an index"):
            plain.reembed()
    assert _vectors(pg_uri, schema) == before


async def test_async_reembed(
    stores: tuple[VaultStore, VaultStore], pg_uri: str, schema: str
) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=schema, index=_index(NEW)) as new:  # type: ignore[arg-type]
        assert await new.reembed(page=4) == len(EXPECTED)
    after = _vectors(pg_uri, schema)
    for row, text in EXPECTED.items():
        assert _close(after[row], NEW.embed_query(text)), row


def test_pages_walk_every_tenant_and_partition(pg_uri: str, schema: str) -> None:
    # Pages of the key (tenant, prefix, key, field) on a partitioned store: every row of every
    # user and of the shared tenant once, whatever partition; a prefix across users covers
    # each of them, and a user's prefix reads that user's partition only.
    items = [
        *(
            (("memories", f"u{n}", "semantic"), f"f{k}", {"text": f"u{n} fact {k}"}, None)
            for n in range(6)
            for k in range(3)
        ),
        (("docs",), "d1", {"text": "Release notes"}, None),
    ]
    with (
        VaultStore.from_conn_string(pg_uri, schema=schema, index=_index(OLD)) as old,  # type: ignore[arg-type]
        VaultStore.from_conn_string(pg_uri, schema=schema, index=_index(NEW)) as new,  # type: ignore[arg-type]
    ):
        old.setup(partitions=4)
        old.batch([PutOp(ns, key, value, index=index) for ns, key, value, index in items])
        before = _vectors(pg_uri, schema)
        assert len(before) == len(items)
        assert new.reembed(("memories",), page=4) == len(items) - 1  # every user's, not docs
        after = _vectors(pg_uri, schema)
        changed = {row for row in before if not _close(before[row], after[row])}
        assert changed == {row for row in before if row[0] != "docs"}
        assert new.reembed(page=2) == len(items)  # every tenant, pages across partitions
        after = _vectors(pg_uri, schema)
        for ns, key, value, _ in items:
            row = (".".join(ns), key, "text")
            assert _close(after[row], NEW.embed_query(value["text"])), row
        with recorded() as sent:
            assert new.reembed(("memories", "u3"), page=2) == 3
        pages = [(q, p) for q, p in sent if "ORDER BY v.tenant" in str(q)]
        assert len(pages) == 2  # 3 rows in pages of 2
        for scanned in partitions_read(pg_uri, schema, pages, "store_", _PARTITION):
            assert {p for _, p in scanned} == {_partition_of(pg_uri, schema, "u3")}


_PARTITION = re.compile(r"^(store_items|store_vectors)_p(\d+)$")


def _partition_of(uri: str, schema: str, tenant: str) -> int:
    match = _PARTITION.match(partition_of(uri, schema, "store_vectors", tenant))
    assert match
    return int(match.group(2))
