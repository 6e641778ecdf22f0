"""The public surface: what a user imports, and that user-facing examples stay on it."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "langmem_vault"
PACKAGES = sorted(
    f"langmem_vault.{p.parent.name}"
    for p in SRC.glob("*/__init__.py")
    if not p.parent.name.startswith("_")
)
# the modules users and langgraph.json name by path
PUBLIC_MODULES = {
    "langmem_vault.embeddings",
    "langmem_vault.studio",
    "langmem_vault.api.server",
    "langmem_vault.api.langgraph_auth",
}
OPTIONAL = {"langmem_vault.mcp": "mcp", "langmem_vault.api": "fastapi"}


@pytest.mark.parametrize("package", ["langmem_vault", *PACKAGES])
def test_every_exported_name_imports(package: str) -> None:
    if package in OPTIONAL:
        pytest.importorskip(OPTIONAL[package])
    module = importlib.import_module(package)
    names = module.__all__
    assert names, f"{package} exports nothing"
    for name in names:
        assert getattr(module, name) is not None, f"{package}.{name}"


def _user_code() -> list[tuple[str, str]]:
    """The README's Python blocks, the notebooks' code cells, the examples and Studio graphs."""
    blocks = [
        ("README.md", b)
        for b in re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    ]
    for path in sorted((ROOT / "docs").rglob("*.md")):
        blocks += [
            (str(path), b) for b in re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
        ]
    for path in sorted((ROOT / "examples" / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        blocks += [(path.name, "".join(c["source"])) for c in cells if c["cell_type"] == "code"]
    for path in sorted([*(ROOT / "examples").glob("*.py"), *(ROOT / "graphs").glob("*.py")]):
        blocks.append((path.name, path.read_text()))
    return blocks


def _is_public(module: str) -> bool:
    return module == "langmem_vault" or module in PACKAGES or module in PUBLIC_MODULES


def private_imports(code: str) -> list[str]:
    """The ``langmem_vault`` modules ``code`` imports that are not public paths."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [m for m in modules if m.split(".")[0] == "langmem_vault" and not _is_public(m)]
    return found


def test_the_check_sees_a_private_or_deep_import() -> None:
    assert private_imports("from langmem_vault.store._plans import batch_plan") == [
        "langmem_vault.store._plans"
    ]
    assert private_imports("import langmem_vault.memory._vault") == ["langmem_vault.memory._vault"]
    assert private_imports("from langmem_vault.memory import MemoryVault") == []
    assert private_imports("from langmem_vault.embeddings import default_index") == []


def test_user_facing_code_imports_only_public_paths() -> None:
    bad = {}
    for where, code in _user_code():
        try:
            found = private_imports(code)
        except SyntaxError:  # a block that shows output or a shell session
            continue
        if found:
            bad.setdefault(where, []).extend(found)
    assert bad == {}, f"user-facing code imports private or deep modules: {bad}"


def test_internal_modules_are_private() -> None:
    """Every module under a package is private unless users name it by path."""
    public = []
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        if parts[-1] in {"__init__", "__main__"}:
            parts = parts[:-1]
        dotted = ".".join(parts)
        if any(p.startswith("_") and p not in {"__init__", "__main__"} for p in parts):
            continue
        if _is_public(dotted):
            continue
        public.append(dotted)
    assert public == [], f"modules that should be private: {sorted(public)}"
