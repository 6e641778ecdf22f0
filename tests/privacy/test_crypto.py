"""Encryption at rest: envelopes, keys from env and KMS hooks, rotation on VaultStore."""

from __future__ import annotations

import base64
import os
from typing import Any

import psycopg
import pytest

from langmem_vault.memory._models import SemanticFact
from langmem_vault.memory._sealing import (
    PLACEHOLDER,
    DecryptionError,
    Keyring,
    decrypt_fact,
    default_keyring,
    encrypt_fact,
    is_sealed,
)
from langmem_vault.privacy._rotation import arotate_keys, rotate_keys
from langmem_vault.store import AsyncVaultStore, VaultStore

NS = ("memories", "alice", "semantic")


def _fact(text: str = "Was born on 3 March 1985 in Porto", **kw: Any) -> dict[str, Any]:
    return SemanticFact(text=text, category="personal", private=True, evidence="said so", **kw)\
        .to_store()  # fmt: skip


def test_round_trip_and_the_stored_form() -> None:
    ring = Keyring.generate()
    value = _fact()
    sealed = encrypt_fact(value, ring, NS, "k1")
    assert is_sealed(sealed) and sealed["text"] == PLACEHOLDER and sealed["evidence"] is None
    assert "Porto" not in str(sealed) and "said so" not in str(sealed)
    assert sealed["category"] == "personal" and sealed["enc_kid"] == ring.current
    SemanticFact.from_store(sealed)  # still a valid fact value for the facade
    assert decrypt_fact(sealed, ring, NS, "k1") == value
    # a fresh nonce per write: the same plaintext never gives the same ciphertext
    assert encrypt_fact(value, ring, NS, "k1")["enc"]["ct"] != sealed["enc"]["ct"]
    assert decrypt_fact(value, ring, NS, "k1") == value  # unsealed values pass through


def test_tampered_moved_or_unknown_values_do_not_open() -> None:
    ring = Keyring.generate()
    sealed = encrypt_fact(_fact(), ring, NS, "k1")
    with pytest.raises(DecryptionError, match="moved"):
        decrypt_fact(sealed, ring, ("memories", "bob", "semantic"), "k1")
    with pytest.raises(DecryptionError, match="moved"):
        decrypt_fact(sealed, ring, NS, "k2")
    ct = bytearray(base64.b64decode(sealed["enc"]["ct"]))
    ct[0] ^= 1
    tampered = {**sealed, "enc": {**sealed["enc"], "ct": base64.b64encode(ct).decode()}}
    with pytest.raises(DecryptionError, match="altered"):
        decrypt_fact(tampered, ring, NS, "k1")
    with pytest.raises(DecryptionError, match="no key with id"):
        decrypt_fact(sealed, Keyring.generate(), NS, "k1")
    broken = {**sealed, "enc": {**sealed["enc"], "nonce": "@@@"}}
    with pytest.raises(DecryptionError, match="malformed"):
        decrypt_fact(broken, ring, NS, "k1")
    with pytest.raises(DecryptionError, match="unsupported"):
        decrypt_fact({**sealed, "enc": {**sealed["enc"], "v": 99}}, ring, NS, "k1")


def test_keys_from_the_environment() -> None:
    k1, k2 = os.urandom(32), os.urandom(32)
    env = {
        "LANGMEM_VAULT_KEY": "new:" + base64.b64encode(k2).decode(),
        "LANGMEM_VAULT_OLD_KEYS": "old:" + base64.b64encode(k1).decode(),
    }
    ring = Keyring.from_env(env)
    assert ring.current == "new" and ring.key("old") == k1
    plain = Keyring.from_env({"LANGMEM_VAULT_KEY": base64.b64encode(k1).decode()})
    assert len(plain.current) == 8 and plain.key(plain.current) == k1
    with pytest.raises(ValueError, match="LANGMEM_VAULT_KEY is not set"):
        Keyring.from_env({})
    with pytest.raises(ValueError, match="base64"):
        Keyring.from_env({"LANGMEM_VAULT_KEY": "not base64!"})
    with pytest.raises(ValueError, match="32 bytes"):
        Keyring.from_env({"LANGMEM_VAULT_KEY": base64.b64encode(b"short").decode()})
    with pytest.raises(ValueError, match="current key id"):
        Keyring({"a": k1}, current="b")


def test_default_keyring_follows_the_environment() -> None:
    key = base64.b64encode(os.urandom(32)).decode()
    assert default_keyring({}) is None
    ring = default_keyring({"LANGMEM_VAULT_KEY": "k9:" + key})
    assert ring is not None and ring.current == "k9"
    assert default_keyring({"LANGMEM_VAULT_KEY": "k9:" + key}) is ring  # built once


def test_keys_from_a_kms_hook() -> None:
    keys = {"v1": os.urandom(32), "v2": os.urandom(32)}
    asked: list[str | None] = []

    def kms(kid: str | None) -> tuple[str, bytes]:
        asked.append(kid)
        kid = kid or "v2"
        return kid, keys[kid]

    old = Keyring({"v1": keys["v1"]}, current="v1")
    sealed = encrypt_fact(_fact(), old, NS, "k1")
    ring = Keyring.from_callable(kms)
    assert ring.current == "v2"
    assert decrypt_fact(sealed, ring, NS, "k1")["text"].startswith("Was born")
    decrypt_fact(sealed, ring, NS, "k1")
    assert asked == [None, "v1"]  # fetched once, then cached


def _put_private(store: VaultStore, n: int, ring: Keyring) -> None:
    for i in range(n):
        store.put(NS, f"p{i}", encrypt_fact(_fact(f"secret {i}"), ring, NS, f"p{i}"), index=False)


def test_private_memories_are_found_by_filter_not_by_meaning(store: VaultStore) -> None:
    ring = Keyring.generate()
    _put_private(store, 1, ring)
    store.put(NS, "pub", SemanticFact(text="Likes secret gardens").to_store())
    hits = store.search(NS, query="secret")
    # Like InMemoryStore, VaultStore lists un-indexed items after the ranked ones, unscored.
    assert [(h.key, h.score is None) for h in hits] == [("pub", False), ("p0", True)]
    found = store.search(NS, filter={"private": True, "category": "personal"})
    assert [h.key for h in found] == ["p0"]
    assert decrypt_fact(found[0].value, ring, NS, "p0")["text"] == "secret 0"


def test_rotation_reseals_in_atomic_batches(store: VaultStore, pg_uri: str, schema: str) -> None:
    old = Keyring.generate()
    _put_private(store, 7, old)
    # a private fact stored in clear (before encryption was on) gets sealed too
    store.put(NS, "clear", _fact("legacy secret"), index=False)
    store.put(("memories", "bob", "semantic"), "pub", SemanticFact(text="public").to_store())
    new_key = os.urandom(32)
    ring = Keyring({"old": old.key(old.current), "new": new_key}, current="new")
    ring.keys[old.current] = old.key(old.current)
    report = rotate_keys(store, ring, batch_size=3)
    assert (report.resealed, report.sealed, report.batches, report.failed) == (7, 1, 3, [])
    items = store.search(NS, limit=100)
    assert {i.value["enc_kid"] for i in items} == {"new"}
    only_new = Keyring({"new": new_key}, current="new")
    texts = sorted(decrypt_fact(i.value, only_new, NS, i.key)["text"] for i in items)
    assert texts == ["legacy secret", *[f"secret {i}" for i in range(7)]]
    assert rotate_keys(store, ring).batches == 0  # idempotent: nothing left to do
    with psycopg.connect(pg_uri) as conn:
        leaked = conn.execute(
            f"SELECT count(*) FROM {schema}.store_items WHERE value::text LIKE '%%secret%%'"
        ).fetchone()
        vectors = conn.execute(
            f"SELECT count(*) FROM {schema}.store_vectors WHERE key ~ '^p[0-9]+$'"
        ).fetchone()
    assert leaked == (0,) and vectors == (0,)


def test_rotation_reports_what_it_cannot_open(store: VaultStore) -> None:
    lost = Keyring.generate()
    _put_private(store, 2, lost)
    ring = Keyring.generate()
    report = rotate_keys(store, ring, batch_size=1)
    assert len(report.failed) == 2 and "no key with id" in report.failed[0][2]
    assert report.resealed == 0
    with pytest.raises(ValueError, match="batch_size"):
        rotate_keys(store, ring, batch_size=0)


async def test_async_rotation(astore: AsyncVaultStore) -> None:
    old = Keyring.generate()
    for i in range(4):
        value = encrypt_fact(_fact(f"s{i}"), old, NS, f"p{i}")
        await astore.aput(NS, f"p{i}", value, index=False)
    ring = Keyring({**old.keys, "n2": os.urandom(32)}, current="n2")
    report = await arotate_keys(astore, ring, batch_size=2)
    assert (report.resealed, report.batches) == (4, 2)
    items = await astore.asearch(NS, limit=10)
    assert {decrypt_fact(i.value, ring, NS, i.key)["text"] for i in items} == {
        "s0",
        "s1",
        "s2",
        "s3",
    }
