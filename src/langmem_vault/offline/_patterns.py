"""The offline extractor's first-person statement patterns (``patterns.toml``), loaded and
checked once at import: each a regex and the templates of its fact text and slot."""

from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

_ARTICLE_WORDS = re.compile(r"^(?:an? )", re.IGNORECASE)


def _a(text: str) -> str:
    text = _ARTICLE_WORDS.sub("", text.strip())
    return ("an " if text[:1].lower() in "aeiou" else "a ") + text


class _MatchTemplate(string.Formatter):
    """``str.format`` over a match's named groups: ``{g!l}`` lower-cases, ``{g!a}`` puts
    "a"/"an" in front, ``{g!c}`` capitalises each word (a name typed in lower case)."""

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "l":
            return str(value).lower()
        if conversion == "a":
            return _a(str(value))
        if conversion == "c":
            return " ".join(w[:1].upper() + w[1:] for w in str(value).split())
        return super().convert_field(value, conversion)

    def fill(self, template: str, match: re.Match[str]) -> str:
        return self.vformat(template, (), {k: v or "" for k, v in match.groupdict().items()})


_TEMPLATE = _MatchTemplate()


@dataclass(frozen=True)
class Pattern:
    """A first-person statement: regex on a sentence, the fact text, category, confidence."""

    regex: re.Pattern[str]
    #: the fact text, a template over the regex's named groups
    fact: str
    category: str
    confidence: float
    #: what the fact is about (for supersession), a template like ``fact``
    slot: str

    def render(self, match: re.Match[str]) -> str:
        """The fact text for a match of :attr:`regex`."""
        return _TEMPLATE.fill(self.fact, match)

    def slot_of(self, match: re.Match[str]) -> str:
        """The slot, lower-cased, for a match of :attr:`regex`."""
        return _TEMPLATE.fill(self.slot, match).lower()


def load_patterns(text: str) -> tuple[Pattern, ...]:
    """The patterns of a TOML table (the format of ``patterns.toml``), checked: a template
    may only name groups its regex has.

    >>> owns = load_patterns('''
    ... [[pattern]]
    ... regex = 'i own an? (?P<obj>[a-z]+)'
    ... fact = "User owns {obj!a}"
    ... slot = "owns {obj}"
    ... category = "personal"
    ... confidence = 0.7
    ... ''')[0]
    >>> owns.render(owns.regex.search("I own an Owl"))
    'User owns an Owl'
    """
    data = tomllib.loads(text)
    parts: dict[str, str] = data.get("parts", {})
    patterns = []
    for i, row in enumerate(data["pattern"]):
        source = row["regex"]
        for name, part in parts.items():
            source = source.replace("{" + name + "}", part)
        regex = re.compile(source, re.IGNORECASE)
        for field in ("fact", "slot"):
            used = {name for _, name, _, _ in _TEMPLATE.parse(row[field]) if name}
            if not used <= set(regex.groupindex):
                raise ValueError(f"pattern[{i}].{field} names groups not in its regex: {used}")
        patterns.append(
            Pattern(regex, row["fact"], row["category"], float(row["confidence"]), row["slot"])
        )
    return tuple(patterns)


PATTERNS: tuple[Pattern, ...] = load_patterns(
    resources.files("langmem_vault.offline").joinpath("patterns.toml").read_text("utf-8")
)
