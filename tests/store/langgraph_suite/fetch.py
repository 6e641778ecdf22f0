"""Fetch langgraph's own store tests (the langgraph-checkpoint sdist matching the installed
version) into the user cache, once, for tests/store/test_langgraph_suite.py.

The test never downloads: run this first (CI does, in .ci/run). Nothing is vendored.

    python tests/store/langgraph_suite/fetch.py
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

import platformdirs


def suite_dir() -> Path:
    """Where the unpacked sdist lives (it may not exist yet)."""
    release = version("langgraph-checkpoint")
    cache = platformdirs.user_cache_path("langmem-vault") / f"langgraph-checkpoint-{release}"
    return cache / f"langgraph_checkpoint-{release}"


def fetch() -> Path:
    """Download and unpack the sdist unless it is there already; returns its folder."""
    suite = suite_dir()
    if (suite / "tests" / "test_store.py").exists():
        return suite
    cache = suite.parent
    cache.mkdir(parents=True, exist_ok=True)
    release = version("langgraph-checkpoint")
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, "-d", str(cache), f"langgraph-checkpoint=={release}"], check=True)
    with tarfile.open(next(cache.glob("langgraph_checkpoint-*.tar.gz"))) as tar:
        tar.extractall(cache, filter="data")
    return suite


if __name__ == "__main__":
    print(fetch())
