"""The write rule (memory/_writes.py) on every write path: a private fact has no embedding and no
full-text vector on VaultStore, whichever path wrote it, so a search for its words finds nothing.
"""

from __future__ import annotations

import base64
import os
from typing import Any

import psycopg
import pytest

from langmem_vault.memory._models import Extraction, ProposedFact
from langmem_vault.memory._sealing import ENV_KEY, Keyring, is_sealed
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._reconcile import aapply_extraction, apply_extraction
from langmem_vault.privacy._subject_rights.erase import erase_user, restore_user
from langmem_vault.privacy._subject_rights.portability import (
    aexport_user,
    aimport_user,
    export_user,
    import_user,
)
from langmem_vault.store import AsyncVaultStore, VaultStore

NS = ("memories", "u1", "semantic")
TEXT = "User sees a cardiologist every March"


def _index_rows(pg_uri: str, schema: str, key: str) -> tuple[int, int]:
    """(vectors, full-text vectors) VaultStore holds for the memory ``key``."""
    with psycopg.connect(pg_uri) as conn:
        row = conn.execute(
            f"SELECT (SELECT count(*) FROM {schema}.store_vectors WHERE key = %(k)s), "
            f"(SELECT count(*) FROM {schema}.store_items "
            f" WHERE key = %(k)s AND search_tsv IS NOT NULL)",
            {"k": key},
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def _found_by_word(store: VaultStore, key: str) -> bool:
    hits = store.search(NS, query="cardiologist", limit=10)
    return any(h.key == key and h.score is not None for h in hits)


def _private_doc(store: VaultStore) -> tuple[str, dict[str, Any]]:
    """A public fact, indexed, and an export of it edited to be private."""
    key = MemoryVault(store, user_id="u1").remember(TEXT).key
    assert _found_by_word(store, key)
    doc = export_user(store, "u1")
    [row] = doc["memories"]
    row["value"]["private"] = True
    return key, doc


@pytest.mark.parametrize("sealed", [False, True], ids=["no key", "keyring"])
def test_import_of_a_private_fact_is_not_searchable(
    store: VaultStore, pg_uri: str, schema: str, sealed: bool
) -> None:
    key, doc = _private_doc(store)
    import_user(store, doc, keyring=Keyring.generate() if sealed else None)
    assert is_sealed(store.get(NS, key).value) is sealed  # type: ignore[union-attr]
    assert _index_rows(pg_uri, schema, key) == (0, 0)
    assert not _found_by_word(store, key)


async def test_async_import_of_a_private_fact_is_not_searchable(
    store: VaultStore, astore: AsyncVaultStore, pg_uri: str, schema: str
) -> None:
    key, doc = _private_doc(store)
    await aimport_user(astore, doc, keyring=Keyring.generate())
    assert _index_rows(pg_uri, schema, key) == (0, 0)
    assert (await aexport_user(astore, "u1"))["memories"][0]["value"]["text"] != TEXT


def test_restore_after_soft_erase_keeps_a_private_fact_unindexed(
    store: VaultStore, pg_uri: str, schema: str
) -> None:
    vault = MemoryVault(store, user_id="u1", keyring=None)
    public = vault.remember("User plays the cello").key
    private = vault.remember(TEXT, private=True).key
    erase_user(store, "u1", soft_days=7)
    restore_user(store, "u1")
    assert _index_rows(pg_uri, schema, public) == (1, 1)
    assert _index_rows(pg_uri, schema, private) == (0, 0)


@pytest.mark.parametrize("with_key", [False, True], ids=["no key", "env key"])
def test_reconcile_stores_private_facts_unindexed(
    store: VaultStore,
    pg_uri: str,
    schema: str,
    monkeypatch: pytest.MonkeyPatch,
    with_key: bool,
) -> None:
    if with_key:
        monkeypatch.setenv(ENV_KEY, base64.b64encode(os.urandom(32)).decode())
    else:
        monkeypatch.delenv(ENV_KEY, raising=False)
    facts = [
        ProposedFact(text=TEXT, confidence=0.9, private=True),
        ProposedFact(text="User prefers green tea", confidence=0.9),
    ]
    apply_extraction(store, Extraction(facts=facts), config={"configurable": {"user_id": "u1"}})
    items = {i.value.get("private"): i for i in store.search(NS)}
    private, public = items[True], items[False]
    assert is_sealed(private.value) is with_key
    assert _index_rows(pg_uri, schema, private.key) == (0, 0)
    assert _index_rows(pg_uri, schema, public.key) == (1, 1)
    assert not _found_by_word(store, private.key)


async def test_async_reconcile_stores_private_facts_unindexed(
    astore: AsyncVaultStore, pg_uri: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_KEY, raising=False)
    fact = ProposedFact(text=TEXT, confidence=0.9, private=True)
    await aapply_extraction(
        astore, Extraction(facts=[fact]), config={"configurable": {"user_id": "u1"}}
    )
    [item] = await astore.asearch(NS)
    assert item.value["private"] is True
    assert _index_rows(pg_uri, schema, item.key) == (0, 0)
