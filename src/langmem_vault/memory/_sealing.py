"""Encryption at rest of private memories: AES-256-GCM envelopes and key ids.

A private fact (``SemanticFact.private``, set by the user or by redaction's ``private``
action) is stored with its ``text`` and ``evidence`` (and the ``entities`` and ``relations``
it names, ``memory._entities``) sealed: they move into an ``enc``
envelope (AES-256-GCM, a fresh 96-bit nonce per write, the key id in clear beside it), and
``text`` becomes the placeholder ``"[private]"``. The namespace and key of the memory are the
envelope's associated data, so a sealed value copied onto another memory or another user does
not decrypt.

What stays searchable, and what does not (the choice, and why):

- **Not searchable**: the fact's words. Private memories are stored with ``index=[]``
  (:mod:`langmem_vault.memory._writes`): no embedding and no full-text vector. An embedding
  is a lossy copy of the meaning (inversion attacks recover much of a sentence from its
  vector), so embedding the plaintext would leak what encryption hides; embedding the
  placeholder would be useless. Full-text lexemes would leak the words outright.
- **Searchable**: the fields left in clear: ``category``, ``tags``, ``status``, ``private``,
  confidence, timestamps, source. Find private facts by filters
  (``{"private": True, "category": "personal"}``) and decrypt after reading. Do not put
  secrets in tags.

Keys: 32 bytes, from ``$LANGMEM_VAULT_KEY`` (base64, optionally ``kid:base64``; older keys
for decryption in ``$LANGMEM_VAULT_OLD_KEYS``, comma separated ``kid:base64``) or from a
callable (a KMS hook) ``fetch(kid | None) -> (kid, key)``, where ``None`` asks for the
current key. :func:`~langmem_vault.privacy._rotation.rotate_keys` re-encrypts every private
fact sealed under another key (and seals any private fact still in clear) in batches, each
batch one atomic store write.

This module imports nothing else from the package: the memory layer (the facade, the write
rule) seals with it, and privacy (rotation, export/import, the gate) builds on it.

>>> import os, base64
>>> ring = Keyring({"k1": os.urandom(32)}, current="k1")
>>> sealed = encrypt_fact({"text": "born 1985", "private": True}, ring, ("m", "u1"), "f1")
>>> sealed["text"], sealed["enc_kid"]
('[private]', 'k1')
>>> decrypt_fact(sealed, ring, ("m", "u1"), "f1")["text"]
'born 1985'
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = [
    "ENV_KEY",
    "ENV_OLD_KEYS",
    "PLACEHOLDER",
    "DecryptionError",
    "Keyring",
    "decrypt_fact",
    "default_keyring",
    "encrypt_fact",
    "is_sealed",
    "open_item",
    "open_or_mark",
    "open_value",
]

ENV_KEY = "LANGMEM_VAULT_KEY"
ENV_OLD_KEYS = "LANGMEM_VAULT_OLD_KEYS"
PLACEHOLDER = "[private]"
ALG = "AES-256-GCM"
ENVELOPE_VERSION = 1
SEALED_FIELDS = ("text", "evidence", "entities", "relations")
MAX_KID = 64

KeyFetcher = Callable[[str | None], tuple[str, bytes]]


class DecryptionError(ValueError):
    """A sealed value could not be opened: unknown key id, wrong key, or tampered data."""


def key_id(key: bytes) -> str:
    """A key's default id: a short fingerprint that does not reveal the key.

    >>> key_id(bytes(32))
    'a5dc29dd'
    """
    return hashlib.sha256(b"langmem-vault-kid\0" + key).hexdigest()[:8]


def _check_key(kid: str, key: bytes) -> bytes:
    if not isinstance(kid, str) or not kid or len(kid) > MAX_KID or ":" in kid or "," in kid:
        raise ValueError(f"key id must be 1..{MAX_KID} characters without ':' or ',': {kid!r}")
    if not isinstance(key, bytes) or len(key) != 32:
        size = len(key) if isinstance(key, bytes) else type(key).__name__
        raise ValueError(f"key {kid!r} must be 32 bytes (AES-256), got {size}")
    return key


def _parse_key(text: str, what: str) -> tuple[str, bytes]:
    text = text.strip()
    kid, sep, b64 = text.rpartition(":")
    if not sep:
        b64, kid = text, ""
    try:
        key = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{what}: not valid base64 (expected 32 random bytes)") from None
    kid = kid or key_id(key)
    return kid, _check_key(kid, key)


@dataclass
class Keyring:
    """The keys that seal and open private memories: a current one, and older ones to read.

    >>> ring = Keyring.generate()
    >>> len(ring.key(ring.current))
    32
    """

    keys: dict[str, bytes] = field(default_factory=dict)
    current: str = ""
    fetch: KeyFetcher | None = None

    def __post_init__(self) -> None:
        for kid, key in self.keys.items():
            _check_key(kid, key)
        if self.fetch is None and self.current not in self.keys:
            raise ValueError(f"current key id {self.current!r} is not in the keyring")

    @classmethod
    def generate(cls) -> Keyring:
        """A keyring with one fresh random key (tests, demos)."""
        key = os.urandom(32)
        return cls({key_id(key): key}, current=key_id(key))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Keyring:
        """From ``$LANGMEM_VAULT_KEY`` (and ``$LANGMEM_VAULT_OLD_KEYS``).

        >>> import base64
        >>> env = {"LANGMEM_VAULT_KEY": "k2:" + base64.b64encode(bytes(32)).decode()}
        >>> Keyring.from_env(env).current
        'k2'
        """
        env = os.environ if environ is None else environ
        raw = env.get(ENV_KEY)
        if not raw:
            raise ValueError(
                f"${ENV_KEY} is not set: set it to base64 of 32 random bytes, e.g. "
                'python -c "import os,base64;print(base64.b64encode(os.urandom(32)).decode())"'
            )
        kid, key = _parse_key(raw, f"${ENV_KEY}")
        keys = {kid: key}
        for part in (env.get(ENV_OLD_KEYS) or "").split(","):
            if part.strip():
                old_kid, old = _parse_key(part, f"${ENV_OLD_KEYS}")
                keys.setdefault(old_kid, old)
        return cls(keys, current=kid)

    @classmethod
    def from_callable(cls, fetch: KeyFetcher) -> Keyring:
        """Keys from a KMS hook: ``fetch(None)`` gives the current ``(kid, key)``,
        ``fetch(kid)`` an older one. Results are cached for the keyring's lifetime."""
        ring = cls({}, current="", fetch=fetch)
        kid, key = fetch(None)
        ring.keys[kid] = _check_key(kid, key)
        ring.current = kid
        return ring

    def key(self, kid: str) -> bytes:
        """The key with id ``kid``; :class:`DecryptionError` if it is unknown."""
        found = self.keys.get(kid)
        if found is None and self.fetch is not None:
            got_kid, key = self.fetch(kid)
            if got_kid != kid:
                raise DecryptionError(f"key fetcher returned key {got_kid!r} for {kid!r}")
            found = self.keys[kid] = _check_key(kid, key)
        if found is None:
            raise DecryptionError(
                f"no key with id {kid!r}: add it to ${ENV_OLD_KEYS} (or the KMS hook) to read "
                "memories sealed before the last key change"
            )
        return found


_DEFAULT: dict[tuple[str, str], Keyring] = {}


def default_keyring(environ: Mapping[str, str] | None = None) -> Keyring | None:
    """The keyring from ``$LANGMEM_VAULT_KEY`` when it is set, else ``None`` (encryption off).

    Built once per distinct key setting, so hooks can call it on every write.

    >>> default_keyring({}) is None
    True
    """
    env = os.environ if environ is None else environ
    raw = env.get(ENV_KEY)
    if not raw:
        return None
    cache_key = (raw, env.get(ENV_OLD_KEYS) or "")
    ring = _DEFAULT.get(cache_key)
    if ring is None:
        ring = _DEFAULT[cache_key] = Keyring.from_env(env)
    return ring


def _aad(namespace: tuple[str, ...], key: str) -> bytes:
    return json.dumps(["langmem-vault", ENVELOPE_VERSION, list(namespace), key]).encode()


def is_sealed(value: Mapping[str, Any]) -> bool:
    """Whether a stored value carries an encryption envelope."""
    return isinstance(value.get("enc"), dict)


def encrypt_fact(
    value: Mapping[str, Any], keyring: Keyring, namespace: tuple[str, ...], key: str
) -> dict[str, Any]:
    """Seal a fact value's ``text`` and ``evidence`` under the keyring's current key.

    Returns a new dict (writes go through :func:`langmem_vault.memory._writes.memory_put`,
    which calls this). Sealing a sealed value re-seals its plaintext (opened with
    ``keyring``) under the current key.
    """
    if not isinstance(value, Mapping):
        raise TypeError(f"value must be a dict, got {type(value).__name__}")
    plain = decrypt_fact(value, keyring, namespace, key) if is_sealed(value) else dict(value)
    # Fields a value lacks stay out (not null): a fact without entities opens without them.
    secret = {name: plain[name] for name in SEALED_FIELDS if name in plain}
    if not isinstance(secret.get("text"), str) or not secret["text"]:
        raise ValueError("value.text must be a non-empty string to encrypt")
    nonce = os.urandom(12)
    kid = keyring.current
    ct = AESGCM(keyring.key(kid)).encrypt(nonce, json.dumps(secret).encode(), _aad(namespace, key))
    sealed = {k: v for k, v in plain.items() if k not in SEALED_FIELDS}
    sealed.update(
        text=PLACEHOLDER,
        evidence=None,
        entities=[],
        relations=[],
        private=True,
        enc_kid=kid,
        enc={
            "v": ENVELOPE_VERSION,
            "alg": ALG,
            "nonce": base64.b64encode(nonce).decode(),
            "ct": base64.b64encode(ct).decode(),
        },
    )
    return sealed


def decrypt_fact(
    value: Mapping[str, Any], keyring: Keyring, namespace: tuple[str, ...], key: str
) -> dict[str, Any]:
    """Open a sealed fact value: ``text`` and ``evidence`` restored, the envelope removed.

    An unsealed value comes back as a plain copy. Raises :class:`DecryptionError` for an
    unknown key id, a wrong key, or a value moved from another memory.
    """
    if not is_sealed(value):
        return dict(value)
    env = value["enc"]
    kid = value.get("enc_kid")
    if env.get("v") != ENVELOPE_VERSION or env.get("alg") != ALG or not isinstance(kid, str):
        raise DecryptionError(f"unsupported envelope version/alg: {env.get('v')}/{env.get('alg')}")
    try:
        nonce = base64.b64decode(env["nonce"], validate=True)
        ct = base64.b64decode(env["ct"], validate=True)
        plain = AESGCM(keyring.key(kid)).decrypt(nonce, ct, _aad(namespace, key))
    except InvalidTag:
        raise DecryptionError(
            f"memory {key!r} did not decrypt with key {kid!r}: wrong key, or the value was "
            "altered or moved from another memory"
        ) from None
    except (KeyError, TypeError, binascii.Error, ValueError) as exc:
        if isinstance(exc, DecryptionError):
            raise
        raise DecryptionError(f"memory {key!r}: malformed envelope ({exc})") from None
    secret = json.loads(plain)
    opened = {k: v for k, v in value.items() if k not in ("enc", "enc_kid")}
    opened.update({name: secret[name] for name in SEALED_FIELDS if name in secret})
    return opened


def open_item(item: Any, keyring: Keyring | None) -> dict[str, Any]:
    """A stored item's value ready for ``SemanticFact.from_store``: opened when sealed and a
    keyring is given, else as stored (sealed facts then read as ``"[private]"``).

    The one-line read hook for the facade, reconcile and inject.

    >>> from langgraph.store.base import Item
    >>> from datetime import datetime, UTC
    >>> ring = Keyring.generate()
    >>> ns = ("memories", "u1", "semantic")
    >>> now = datetime.now(UTC)
    >>> item = Item(value=encrypt_fact({"text": "t"}, ring, ns, "k"), key="k", namespace=ns,
    ...             created_at=now, updated_at=now)
    >>> open_item(item, ring)["text"], open_item(item, None)["text"]
    ('t', '[private]')
    """
    return open_value(item.value, keyring, tuple(item.namespace), item.key)


def open_value(
    value: Mapping[str, Any], keyring: Keyring | None, namespace: tuple[str, ...], key: str
) -> dict[str, Any]:
    """:func:`open_item` for a value whose namespace and key the caller knows."""
    if keyring is None or not is_sealed(value):
        return dict(value)
    return decrypt_fact(value, keyring, namespace, key)


#: the field :func:`open_or_mark` adds to a value it could not open
UNREADABLE = "unreadable"


def open_or_mark(
    value: Mapping[str, Any], keyring: Keyring | None, namespace: tuple[str, ...], key: str
) -> dict[str, Any]:
    """:func:`open_value`, or, when the value cannot be opened (its key is gone, the data is
    damaged), the value still sealed with an ``unreadable`` field saying why and how to
    recover: one such memory must not hide the user's others."""
    try:
        return open_value(value, keyring, namespace, key)
    except DecryptionError as exc:
        kid = value.get("enc_kid")
        reason = (
            f"sealed with key {kid!r}, which cannot open it ({exc}). To recover, set the old "
            f"key in ${ENV_OLD_KEYS} (then `langmem-vault rotate-keys` re-seals it under the "
            "current key)"
        )
        return {**value, UNREADABLE: reason}
