"""When pytest runs the notebooks (``--nbmake``): one embedded server for all of them.

Each notebook runs in its own kernel process, which inherits this process's environment. The
kernels connect to ``$LANGMEM_VAULT_DSN``: the server CI names, else a server started here in
a temporary directory on the first notebook and stopped when the session ends, so a run never
touches the user's own embedded data, writes nothing into the repository and leaves no server
running.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_started: Path | None = None


def pytest_runtest_setup(item: pytest.Item) -> None:
    global _started
    if item.path.suffix != ".ipynb" or os.environ.get("LANGMEM_VAULT_DSN"):
        return
    from langmem_vault.db import embedded_uri

    # Not under pytest's tmp_path: see tests/conftest.py (the server's OS user needs access).
    _started = Path(tempfile.mkdtemp(prefix="lmv-notebooks-"))
    os.environ["LANGMEM_VAULT_DSN"] = embedded_uri(_started / "pg")


def pytest_sessionfinish(session: pytest.Session) -> None:
    global _started
    if _started is None:
        return
    from langmem_vault.db.embedded import release

    os.environ.pop("LANGMEM_VAULT_DSN", None)
    release(_started / "pg")
    shutil.rmtree(_started, ignore_errors=True)
    _started = None
