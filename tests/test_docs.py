"""The docs site's structure: what `mkdocs build --strict` (CI) cannot see.

The build checks the pages' links, anchors and API references; these tests check the README's
links (the README is not a page of the site), that every public package has its reference
page, and the docstring conversion the reference relies on (scripts/docs_hooks.py). That the
pages' examples import from public paths only is tests/test_public_surface.py's check.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
from types import ModuleType

import pytest
import yaml

from tests.test_public_surface import PACKAGES
from tests.test_readme import README, ROOT

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


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_package_has_a_reference_page(package: str) -> None:
    page = f"reference/{package.removeprefix('langmem_vault.')}.md"
    assert page in NAV, f"mkdocs.yml's nav lists no {page}"
    assert f"::: {package}\n" in (ROOT / "docs" / page).read_text()


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
