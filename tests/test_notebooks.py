"""The notebooks under examples/notebooks are committed without outputs.

CI executes them (``pytest`` collects them with ``--nbmake``, see pyproject.toml); this test
keeps their stored form clean: no outputs, no execution counts, so a diff shows only what a
person changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "examples" / "notebooks").glob("*.ipynb"))


def leftovers(notebook: dict[str, Any]) -> list[str]:
    """What an executed notebook leaves behind: outputs and execution counts, per cell."""
    found = []
    for number, cell in enumerate(notebook["cells"], 1):
        if cell.get("outputs"):
            found.append(f"cell {number}: outputs")
        if cell.get("execution_count") is not None:
            found.append(f"cell {number}: execution_count")
    return found


def test_there_are_four_notebooks_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(NOTEBOOKS) == 4
    for path in NOTEBOOKS:
        assert f"examples/notebooks/{path.name}" in readme


def test_leftovers_finds_outputs_and_counts() -> None:
    executed = {
        "cells": [
            {"cell_type": "markdown", "source": "# hi"},
            {"cell_type": "code", "execution_count": 3, "outputs": [{"text": "x"}]},
            {"cell_type": "code", "execution_count": None, "outputs": []},
        ]
    }
    assert leftovers(executed) == ["cell 2: outputs", "cell 2: execution_count"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    assert not leftovers(json.loads(path.read_text())), (
        f"{path.name} holds outputs: clear them before committing "
        "(in Jupyter: Edit > Clear Outputs of All Cells)"
    )
