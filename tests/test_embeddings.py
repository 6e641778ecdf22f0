"""Local embeddings load offline and quietly."""

from __future__ import annotations

import subprocess
import sys


def test_loading_the_local_model_prints_nothing() -> None:
    code = (
        "from langmem_vault.embeddings import local_embeddings;"
        "assert len(local_embeddings().embed_query('tea')) == 384"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and done.stdout == ""
