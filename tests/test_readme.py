"""The README's Python examples run as written (those that need no API key)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
# Needs OPENAI_API_KEY (a model string): documented, not run here.
NEEDS_A_KEY = ("JobQueue.from_conn_string",)
RUNNABLE = [b for b in BLOCKS if not any(marker in b for marker in NEEDS_A_KEY)]


def test_the_readme_has_examples() -> None:
    assert len(RUNNABLE) >= 5


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.splitlines()[0][:60])
def test_readme_example_runs(block: str, pg_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGMEM_VAULT_DSN", pg_uri)
    exec(compile(block, str(README), "exec"), {"__name__": "readme_example"})
