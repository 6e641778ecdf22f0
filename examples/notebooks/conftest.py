"""When pytest runs the notebooks (``--nbmake``): one embedded server for all of them.

Each notebook runs in its own kernel process, which inherits this process's environment. The
kernels connect to ``$LANGMEM_VAULT_DSN``: the server CI names, else a server started here in
a temporary directory on the first notebook and stopped when the session ends, so a run never
touches the user's own embedded data, writes nothing into the repository and leaves no server
running. The variable is set only while a notebook runs, so other tests never see it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_server: dict[str, Path | str] = {}
_OURS = pytest.StashKey[bool]()  # this notebook runs on our server


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.path.suffix != ".ipynb" or os.environ.get("LANGMEM_VAULT_DSN"):
        return
    if not _server:
        from langmem_vault.db._embedded import embedded_uri

        # Not under pytest's tmp_path: see tests/conftest.py (the server's OS user needs it).
        path = Path(tempfile.mkdtemp(prefix="lmv-notebooks-"))
        _server.update(path=path, uri=embedded_uri(path / "pg"))
    os.environ["LANGMEM_VAULT_DSN"] = str(_server["uri"])
    item.stash[_OURS] = True


def pytest_runtest_teardown(item: pytest.Item) -> None:
    if item.stash.get(_OURS, False):
        os.environ.pop("LANGMEM_VAULT_DSN", None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _server:
        return
    from langmem_vault.db._embedded import release

    path = Path(_server.pop("path"))
    _server.clear()
    release(path / "pg")
    shutil.rmtree(path, ignore_errors=True)
