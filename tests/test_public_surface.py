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
# packages wholly internal: public (not renamed) so the rooms keep their paths, exporting nothing
INTERNAL = {"langmem_vault.extraction"}


@pytest.mark.parametrize("package", ["langmem_vault", *PACKAGES])
def test_every_exported_name_imports(package: str) -> None:
    if package in OPTIONAL:
        pytest.importorskip(OPTIONAL[package])
    module = importlib.import_module(package)
    names = module.__all__
    if package in INTERNAL:
        assert names == [], f"{package} is internal and exports {names}"
    assert names or package in INTERNAL, f"{package} exports nothing"
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


def exported(package: str) -> set[str] | None:
    """The ``__all__`` of ``package`` (read from its source, nothing imported), None when the
    module is not a package of the tree."""
    init = SRC.parent.joinpath(*package.split("."), "__init__.py")
    if not init.exists():
        return None
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return set(ast.literal_eval(node.value))
    return set()


def is_module(package: str, name: str) -> bool:
    base = SRC.parent.joinpath(*package.split("."), name)
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def unexported_imports(module: str, code: str) -> list[str]:
    """``package.name`` for each name ``code`` (the source of ``module``) imports through
    another package's ``__init__`` although that package does not export it: an internal name
    belongs imported from its private module."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        package = node.module
        if package.split(".")[0] != "langmem_vault":
            continue
        if package != "langmem_vault" and module.startswith(package + "."):
            continue  # the module's own room
        names = exported(package)
        if names is None:
            continue
        found += [
            f"{package}.{alias.name}"
            for alias in node.names
            if alias.name not in names and not is_module(package, alias.name)
        ]
    return found


def test_the_rooms_check_sees_an_internal_name_through_a_public_init() -> None:
    assert unexported_imports(
        "langmem_vault.api._jobs", "from langmem_vault.service import MemoryRecord"
    ) == ["langmem_vault.service.MemoryRecord"]
    assert unexported_imports(
        "langmem_vault.cli._app", "from langmem_vault.privacy import redact, AuditEvent"
    ) == ["langmem_vault.privacy.AuditEvent"]
    # exported names, private modules, and a room's own package are all fine
    assert (
        unexported_imports("langmem_vault.api._jobs", "from langmem_vault.service import Identity")
        == []
    )
    assert (
        unexported_imports(
            "langmem_vault.api._jobs", "from langmem_vault.service._records import MemoryRecord"
        )
        == []
    )
    assert unexported_imports("langmem_vault.api._app", "from langmem_vault.api import _jobs") == []
    assert (
        unexported_imports("langmem_vault.store._sync", "from langmem_vault.store import X") == []
    )


def test_rooms_import_internals_from_their_private_modules() -> None:
    """ARCHITECTURE.md: a room imports another room's internals from their private module,
    never through its public ``__init__`` (which exports the entry points only)."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        bad += [f"{module}: {name}" for name in unexported_imports(module, path.read_text())]
    assert bad == [], f"internal names imported through a public __init__: {bad}"
