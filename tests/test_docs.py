"""The docs site's structure: what `mkdocs build --strict` (CI) cannot see.

The build checks the pages' links, anchors and API references; these tests check the README's
links (the README is not a page of the site), that every public package has its reference
page, that the examples import only from public packages, and the docstring conversion the
reference relies on (scripts/docs_hooks.py).
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.test_readme import EXAMPLES, README, ROOT

SRC = ROOT / "src" / "langmem_vault"
LINK = re.compile(r"\]\((?!https?://|#|mailto:)([^)#\s]+)(?:#[^)]*)?\)")


def nav_pages(nav: object) -> set[str]:
    """Every page named in mkdocs.yml's nav, however deep."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return {page for entry in nav for page in nav_pages(entry)}
    if isinstance(nav, dict):
        return {page for value in nav.values() for page in nav_pages(value)}
    return set()


NAV = nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])


def test_nav_pages_reads_nested_sections() -> None:
    nav = ["index.md", {"A": "a.md"}, {"B": [{"C": "c.md"}, "d.md"]}]
    assert nav_pages(nav) == {"index.md", "a.md", "c.md", "d.md"}


def test_the_readme_links_to_files_that_exist() -> None:
    targets = LINK.findall(README.read_text())
    assert "docs/getting-started.md" in targets and "bench/RESULTS.md" in targets
    missing = [target for target in targets if not (ROOT / target).exists()]
    assert missing == []


def public_packages() -> list[str]:
    """langmem_vault's subpackages that are not private and export names (``__all__``)."""
    found = []
    for init in sorted(SRC.glob("*/__init__.py")):
        name = init.parent.name
        exports = any(
            isinstance(node, ast.Assign | ast.AnnAssign)
            and "__all__" in ast.unparse(node).split("=")[0]
            for node in ast.parse(init.read_text()).body
        )
        if not name.startswith("_") and exports:
            found.append(name)
    return found


@pytest.mark.parametrize("package", public_packages())
def test_every_public_package_has_a_reference_page(package: str) -> None:
    page = f"reference/{package}.md"
    assert page in NAV, f"mkdocs.yml's nav lists no {page}"
    assert f"::: langmem_vault.{package}\n" in (ROOT / "docs" / page).read_text()


def imported_modules(code: str) -> set[str]:
    """The langmem_vault modules a block of code imports from."""
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.split(".")[0] == "langmem_vault"}


def is_public(module: str) -> bool:
    """A public package, or a public module of the top package (``langmem_vault.embeddings``);
    never a module inside a package."""
    parts = module.split(".")
    is_package = (ROOT / "src" / Path(*parts) / "__init__.py").exists()
    top_module = len(parts) == 2 and (ROOT / "src" / Path(*parts)).with_suffix(".py").exists()
    return (is_package or top_module) and not any(part.startswith("_") for part in parts)


def test_examples_import_from_public_packages_only() -> None:
    assert imported_modules("from langmem_vault.store import VaultStore\nimport os") == {
        "langmem_vault.store"
    }
    assert is_public("langmem_vault.store") and is_public("langmem_vault.embeddings")
    assert not is_public("langmem_vault.store.sync")  # a module inside a package
    assert not is_public("langmem_vault._lazy")
    wrong = {
        f"{example.path}:{example.line}: {module}"
        for example in EXAMPLES
        for module in imported_modules(example.code)
        if not is_public(module)
    }
    assert wrong == set()


def load_hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "scripts/docs_hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def test_pages_from_outside_docs_hold_no_example() -> None:
    """The site shows bench/RESULTS*.md, the changelog (published by the hooks) and
    ARCHITECTURE.md (included by docs/architecture.md), but the example runner reads README.md
    and docs/ only: a python block there would be shown and never run."""
    published = [path for pattern in load_hooks().PUBLISHED for path in ROOT.glob(pattern)]
    pages = [ROOT / "ARCHITECTURE.md", *(path for path in published if path.suffix == ".md")]
    assert ROOT / "bench" / "RESULTS.md" in pages
    assert [page.name for page in pages if "```python" in page.read_text()] == []


def test_docstrings_become_markdown() -> None:
    hooks = load_hooks()
    assert doctest.testmod(hooks).failed == 0
    fenced = hooks.markdown_docstring("Text.\n\n    >>> 1\n    1\n")
    assert fenced == "Text.\n\n    ```pycon\n    >>> 1\n    1\n    ```\n"
