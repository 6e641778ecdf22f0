"""inject's default token counter: langchain-core's approximation of each line, counted once
per length (a fact's line changes with its alias turn after turn; its count does not)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

from langmem_vault.nodes import _inject_render
from langmem_vault.nodes._inject_render import make_token_counter

LINES = [
    "",
    "## What you remember about this user",
    "- [M1] Lives in Lyon (personal; since May 2023)",
    "- [M12] Lives in Lyon (personal; since May 2023)",
    "- [M3] (unconfirmed) Allergic to peanuts \u2014 and to cats (health)",
    "- [M4] Recipe: \u00e9clairs, cr\u00e8me br\u00fbl\u00e9e \U0001f370 (preference)",
    "line one\nline two\ttabbed  ",
    "word " * 700,
]


@pytest.mark.parametrize("line", LINES)
def test_the_default_count_is_langchain_cores(line: str) -> None:
    count = make_token_counter(None)
    assert count(line) == count_tokens_approximately([SystemMessage(line)])


def test_lines_of_one_length_are_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[Any] = []

    def counting(messages: Any, **kwargs: Any) -> int:
        counted.append(messages)
        return count_tokens_approximately(messages, **kwargs)

    monkeypatch.setattr(_inject_render, "count_tokens_approximately", counting)
    count = make_token_counter(None)
    # a length no other test counts; the aliases differ, the lengths do not
    first = "- [M3] " + "a" * 4993
    second = "- [M4] " + "b" * 4993
    assert count(first) == count(second) == count(first)
    assert len(counted) <= 1
