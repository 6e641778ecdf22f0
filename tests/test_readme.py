"""The Python examples of the README and of the docs site (docs/**/*.md) run as written,
offline, and print what the page shows.

The convention every ```python block follows: it runs as written with no API key; when it
prints, a ```text block follows it directly holding exactly its stdout, compared with doctest's
rules with ELLIPSIS on (``...`` stands for volatile parts: ids, dates, timings). A block that
prints with no text block after it fails, and so does a text block after a silent block.
"""

from __future__ import annotations

import doctest
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# Every page of the site (mkdocs.yml's docs_dir), and the README.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
# A fenced block: its language tag and body; the closing fence is the first ``` line after it.
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
CHECKER = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS


@dataclass(frozen=True)
class Example:
    """A python block of a page and the text block right after it, if any."""

    path: str  # the page, relative to the repository
    line: int
    code: str
    shown: str | None


def readme_examples(text: str, path: str = "README.md") -> list[Example]:
    """Every ```python block of ``text`` (the page at ``path``), paired with the ```text block
    directly after it."""
    fences = list(FENCE.finditer(text))
    examples = []
    for i, fence in enumerate(fences):
        if fence.group("lang") != "python":
            continue
        following = fences[i + 1] if i + 1 < len(fences) else None
        adjacent = following is not None and not text[fence.end() : following.start()].strip()
        shown = following.group("body") if adjacent and following.group("lang") == "text" else None
        line = text.count("\n", 0, fence.start()) + 1
        examples.append(Example(path, line, fence.group("body"), shown))
    return examples


EXAMPLES = [
    example
    for page in PAGES
    for example in readme_examples(page.read_text(), page.relative_to(ROOT).as_posix())
]


def test_the_readme_and_the_docs_have_examples() -> None:
    # The README keeps one example with its output; the 20 it held before the docs site are
    # on the pages now.
    in_readme = [e for e in EXAMPLES if e.path == "README.md"]
    assert len(in_readme) >= 1 and all(e.shown is not None for e in in_readme)
    assert len(EXAMPLES) >= 21
    assert sum(e.shown is not None for e in EXAMPLES) >= 20
    assert {e.path for e in EXAMPLES} >= {"README.md", "docs/store.md", "docs/graph.md"}


def test_examples_pair_with_the_text_block_right_after_them() -> None:
    text = (
        "```python\nprint(1)\n```\n\n```text\n1\n```\n\n"
        "```python\nx = 1\n```\nprose\n```text\nnot its output\n```\n"
        "```bash\necho\n```\n```python\nprint(2)\n```\n"
    )
    assert [(e.code, e.shown) for e in readme_examples(text)] == [
        ("print(1)\n", "1\n"),
        ("x = 1\n", None),
        ("print(2)\n", None),
    ]
    assert {e.path for e in readme_examples(text, "docs/x.md")} == {"docs/x.md"}


def check_output(example: Example, printed: str) -> None:
    """Fail unless ``printed`` is what the page shows after ``example`` (or both are empty)."""
    where = f"{example.path}:{example.line}"
    if example.shown is None:
        if printed:
            pytest.fail(f"{where}: it prints, but no ```text block follows it:\n{printed}")
        return
    if not printed:
        pytest.fail(f"{where}: a ```text block follows this block, but it prints nothing")
    if not CHECKER.check_output(example.shown, printed, FLAGS):
        diff = CHECKER.output_difference(doctest.Example("", example.shown), printed, FLAGS)
        pytest.fail(f"{where}: the output differs from the ```text block below it:\n{diff}")


def test_check_output_compares_with_ellipsis() -> None:
    example = Example("README.md", 1, "", "id ...: ok\n")
    check_output(example, "id 42: ok\n")
    with pytest.raises(pytest.fail.Exception, match="differs"):
        check_output(example, "id 42: failed\n")
    with pytest.raises(pytest.fail.Exception, match="prints nothing"):
        check_output(example, "")
    with pytest.raises(pytest.fail.Exception, match="no ```text block"):
        check_output(Example("docs/x.md", 1, "", None), "surprise\n")


@pytest.fixture
def readme_dsn(pg_uri: str) -> Iterator[str]:
    """A database of its own for each example.

    They use the default schema, as a reader would, so what other tests left there (a queued
    job, a user's facts) must not show up in what they print; nor may what an earlier example
    left (one showed 2 pending facts where the README shows 1): each starts from nothing, as
    a reader trying it alone does.
    """
    name = f"readme_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield urlsplit(pg_uri)._replace(path=f"/{name}").geturl()
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.path}:{e.line}")
def test_readme_example(
    example: Example,
    readme_dsn: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Offline as written: no key may leak in from the environment running the tests.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LANGMEM_VAULT_DSN", readme_dsn)
    capsys.readouterr()
    code = compile(example.code, f"{ROOT / example.path}:{example.line}", "exec")
    exec(code, {"__name__": "readme"})
    check_output(example, capsys.readouterr().out)


def test_an_example_starts_from_an_empty_database(readme_dsn: str) -> None:
    """Runs after the examples (pytest keeps file order): nothing they wrote is here."""
    with psycopg.connect(readme_dsn) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', "
            "'information_schema')"
        ).fetchone()
    assert tables == (0,)
