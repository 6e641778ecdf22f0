"""Deterministic offline embeddings for tests that need ranking without a model."""

from __future__ import annotations

import hashlib
import math
from typing import Any

from langchain_core.embeddings import Embeddings

DIMS = 64


class TrigramEmbeddings(Embeddings):
    """Deterministic fake embeddings: hashed character trigrams, L2-normalised.

    Similar spellings give similar vectors, so ranking is meaningful without a model.
    """

    def __init__(self, dims: int = DIMS) -> None:
        self.dims = dims
        self.calls: list[list[str]] = []

    def _one(self, text: str) -> list[float]:
        vec = [0.0] * self.dims
        padded = f"  {text.lower()}  "
        for i in range(len(padded) - 2):
            h = hashlib.blake2b(padded[i : i + 3].encode(), digest_size=4).digest()
            vec[int.from_bytes(h, "little") % self.dims] += 1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


HASH_DIMS = 32


class HashEmbeddings(Embeddings):
    """Deterministic offline embeddings (hashed words): only the LLM-free parts are tested."""

    def _one(self, text: str) -> list[float]:
        vec = [0.0] * HASH_DIMS
        for word in text.lower().split():
            vec[hashlib.blake2b(word.encode(), digest_size=2).digest()[0] % HASH_DIMS] += 1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def index_config(embeddings: Embeddings, fields: list[str] | None = None) -> dict[str, Any]:
    return {"dims": DIMS, "embed": embeddings, "fields": fields or ["text"]}
