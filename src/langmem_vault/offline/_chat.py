"""Chat as people type it, made readable for the statement patterns.

Lower case, "im", "ive", "lol", emoji and typos in common words ("alergic", "wrok") become
what the patterns in ``patterns.toml`` expect; a hedge ("might", "maybe", "thinking about")
marks a statement as unsure. Only the text the patterns read changes: the evidence kept with
a fact is what the user wrote.

>>> normalise("im alergic to cats lol 😅")
"I'm allergic to cats"
>>> hedged("I might move to Oslo"), hedged("I moved to Oslo")
(True, False)
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources

__all__ = ["hedged", "normalise"]

_TABLE = tomllib.loads(
    resources.files("langmem_vault.offline").joinpath("chat.toml").read_text("utf-8")
)
_WORDS: dict[str, str] = {**_TABLE["contractions"], **_TABLE["typos"]}
_WORD = re.compile(r"\b(" + "|".join(map(re.escape, sorted(_WORDS, key=len)[::-1])) + r")\b", re.I)
_NOISE = re.compile(
    r"\b(?:" + "|".join(_TABLE["noise"]["words"]) + r")\b[!.]*"
    r"|[\U0001f300-\U0001faff\u2600-\u27bf\u2b50\u2764\ufe0f]+"
    r"|[:;]-?[()dDpP]\B|<3|\^\^",
    re.IGNORECASE,
)
_GREETING = re.compile(
    r"^(?:(?:" + "|".join(_TABLE["greetings"]["words"]) + r")\b(?: there)?[\s,!.]*)+", re.IGNORECASE
)
_HEDGE = re.compile(r"\b(?:" + "|".join(_TABLE["hedges"]["words"]) + r")\b", re.IGNORECASE)


def _fix(match: re.Match[str]) -> str:
    return _WORDS[match.group(1).lower()]


def normalise(text: str) -> str:
    """``text`` with chat noise and an opening greeting removed, contractions and common
    typos fixed, and "i" as "I"."""
    text = _NOISE.sub(" ", text)
    text = _WORD.sub(_fix, text)
    text = re.sub(r"\bi\b", "I", text)
    text = _GREETING.sub("", " ".join(text.split()).strip(" ,;-"))
    return text.strip(" ,;-")


def hedged(text: str) -> bool:
    """Whether the statement is unsure ("I might...", "maybe", "thinking about")."""
    return _HEDGE.search(text) is not None
