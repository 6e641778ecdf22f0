"""Recall of the owner's private facts: found by meaning, without an index anyone else can read.

Private facts are never in the store's index (see :mod:`langmem_vault.memory._writes`): no
full-text vector, no embedding row (an embedding can be inverted to much of its sentence). So
the store's search cannot find them. For the owner's own assistant inject instead

1. reads the owner's private facts by filter (``{"private": True}``, bounded, in the same
   batch as its other reads: one round trip);
2. opens the sealed ones in process with the keyring;
3. ranks them against the turn's query vector by cosine similarity, the scale
   InMemoryStore, PostgresStore and VaultStore report (VaultStore's score is the cosine when
   no keyword matches), so they join recall's vector branch beside the public candidates
   (:func:`~langmem_vault.memory._recall.recall_plan.rank_found`).

The facts' vectors are computed from the opened text and cached in this process only (an LRU
keyed by a hash of namespace, key and text): never written anywhere. The query vector comes
from the store's query cache when it has one (VaultStore), else from its embedder. A store
without embeddings ranks private facts by the share of the query's words they contain.

>>> ranker = PrivateRanker()
>>> ranker.lexical("what is my name", "User's name is Dana") > 0
True
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Item, SearchItem, SearchOp

from langmem_vault.memory._sealing import DecryptionError, Keyring, is_sealed, open_item

__all__ = ["DEFAULT_MAX_PRIVATE", "PrivateRanker", "open_private", "private_search_op"]

DEFAULT_MAX_PRIVATE = 200
DEFAULT_CACHE_SIZE = 20_000
_WORD = re.compile(r"[a-z0-9]{3,}")
# fmt: off
_COMMON = frozenset({"the", "and", "what", "who", "where", "which", "when", "how", "does", "did",
                     "are", "was", "you", "your"})
# fmt: on


def private_search_op(namespace: tuple[str, ...], *, limit: int = DEFAULT_MAX_PRIVATE) -> SearchOp:
    """The owner's private facts by filter (no query: they are not in the index)."""
    return SearchOp(namespace, filter={"private": True}, limit=limit, refresh_ttl=False)


def open_private(items: Sequence[Item], keyring: Keyring | None) -> list[Item]:
    """The private facts readable in this process: clear ones, and sealed ones the keyring
    opens. A sealed fact without its key is skipped: inject only shows what it can read."""
    opened: list[Item] = []
    for item in items:
        if is_sealed(item.value):
            if keyring is None:
                continue
            try:
                value = open_item(item, keyring)
            except DecryptionError:
                continue
        else:
            value = dict(item.value)
        opened.append(
            Item(
                value=value,
                key=item.key,
                namespace=tuple(item.namespace),
                created_at=item.created_at,
                updated_at=item.updated_at,
            )
        )
    return opened


def _embeddings(store: BaseStore) -> Embeddings | None:
    # Wrappers (the audited store, the privacy gate) keep the real store in ``.store``.
    for _ in range(4):
        found = getattr(store, "embeddings", None)
        if isinstance(found, Embeddings):
            return found
        inner = getattr(store, "store", None)
        if not isinstance(inner, BaseStore):
            return None
        store = inner
    return None


def _cached_query(store: BaseStore, query: str) -> list[float] | None:
    for _ in range(4):
        lookup = getattr(store, "cached_query_vector", None)
        if callable(lookup):
            vector = lookup(query)
            return list(vector) if vector is not None else None
        inner = getattr(store, "store", None)
        if not isinstance(inner, BaseStore):
            return None
        store = inner
    return None


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def _digest(item: Item) -> str:
    text = str(item.value.get("text", ""))
    raw = "\x00".join([*item.namespace, item.key, text]).encode()
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


class PrivateRanker:
    """Scores opened private facts for a query; caches their vectors in this process."""

    def __init__(self, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._size = cache_size
        self._lock = threading.Lock()

    @staticmethod
    def lexical(query: str, text: str) -> float:
        """Share of the query's words (3+ letters, not the commonest) found in ``text``."""
        words = {w for w in _WORD.findall(query.lower()) if w not in _COMMON}
        if not words:
            return 0.0
        have = set(_WORD.findall(text.lower()))
        return len(words & have) / len(words)

    def _known(self, items: Sequence[Item]) -> tuple[dict[str, list[float]], list[Item]]:
        found: dict[str, list[float]] = {}
        missing: list[Item] = []
        with self._lock:
            for item in items:
                digest = _digest(item)
                vector = self._vectors.get(digest)
                if vector is None:
                    missing.append(item)
                else:
                    self._vectors.move_to_end(digest)
                    found[digest] = vector
        return found, missing

    def _keep(self, items: Sequence[Item], vectors: Sequence[Sequence[float]]) -> None:
        with self._lock:
            for item, vector in zip(items, vectors, strict=True):
                self._vectors[_digest(item)] = list(vector)
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)

    def _scored(
        self, items: Sequence[Item], query: str | None, qvec: list[float] | None
    ) -> list[SearchItem]:
        out: list[SearchItem] = []
        for item in items:
            score: float | None = None
            if query and qvec is not None:
                vector = self._vectors.get(_digest(item))
                score = _cosine(qvec, vector) if vector is not None else None
            elif query:
                score = self.lexical(query, str(item.value.get("text", "")))
            out.append(
                SearchItem(
                    namespace=tuple(item.namespace),
                    key=item.key,
                    value=item.value,
                    created_at=item.created_at,
                    updated_at=item.updated_at,
                    score=score,
                )
            )
        return out

    def rank(self, store: BaseStore, query: str | None, items: Sequence[Item]) -> list[SearchItem]:
        """``items`` (opened) as search results scored against ``query`` (sync)."""
        embeddings = _embeddings(store) if query and items else None
        qvec: list[float] | None = None
        if embeddings is not None and query:
            _, missing = self._known(items)
            if missing:
                texts = [str(i.value.get("text", "")) for i in missing]
                self._keep(missing, embeddings.embed_documents(texts))
            qvec = _cached_query(store, query) or embeddings.embed_query(query)
        return self._scored(items, query, qvec)

    async def arank(
        self, store: BaseStore, query: str | None, items: Sequence[Item]
    ) -> list[SearchItem]:
        """Async :meth:`rank`: embeds with the embedder's async methods."""
        embeddings = _embeddings(store) if query and items else None
        qvec: list[float] | None = None
        if embeddings is not None and query:
            _, missing = self._known(items)
            if missing:
                texts = [str(i.value.get("text", "")) for i in missing]
                self._keep(missing, await embeddings.aembed_documents(texts))
            qvec = _cached_query(store, query) or await embeddings.aembed_query(query)
        return self._scored(items, query, qvec)
