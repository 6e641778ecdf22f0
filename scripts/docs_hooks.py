"""The docs site's build hooks (mkdocs.yml): repository files published beside the pages, and
the docstrings made Markdown.

- ``on_files`` (an mkdocs hook): the measured figures (bench/RESULTS*.md), the notebooks and
  the changelog live beside what they describe, not under docs/; publishing them as they are,
  under their repository paths, lets a page link to ``bench/RESULTS.md`` and
  ``mkdocs build --strict`` check that link like any other, with no copy to keep in step.
- ``DoctestFences`` (a griffe extension, for mkdocstrings): the docstrings are written for
  ``help()`` and doctest (reST roles, ``>>>`` examples); Markdown would read a ``>>>`` line
  as a quote and a ``[...]`` result as a link. It fences each example as ``pycon`` and turns
  a role (``:func:`x` ``) into code.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from griffe import Extension, Object
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ["bench/RESULTS*.md", "examples/notebooks/*.ipynb", "CHANGELOG.md"]
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const):`~?\.?([^`]+)`")


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    for pattern in PUBLISHED:
        for path in sorted(ROOT.glob(pattern)):
            uri = path.relative_to(ROOT).as_posix()
            files.append(
                File.generated(
                    config, uri, abs_src_path=str(path), inclusion=InclusionLevel.NOT_IN_NAV
                )
            )
    return files


def markdown_docstring(text: str) -> str:
    """``text`` with each doctest example (``>>>`` to the next blank line) fenced as
    ``pycon`` and each reST role as code.

    >>> text = "See :func:`~.a.run`.\\n\\n" + ">" * 3 + " f()\\n[1]\\n\\nEnd."
    >>> markdown_docstring(text).split("\\n")
    ['See `a.run`.', '', '```pycon', '>>> f()', '[1]', '```', '', 'End.']
    """
    lines = ROLE.sub(r"`\1`", text).split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.lstrip().startswith(">>>"):
            out.append(line)
            i += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
