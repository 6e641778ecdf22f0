"""One statement per clause: a message split where a new statement starts.

People say several things in one breath ("I'm Dana, I live in Porto, I'm allergic to
peanuts, my daughter is Rita"). Extraction reads each statement on its own, so one fact
never joins several (and consent refusing one never takes the others with it).

A cut is a comma, semicolon, dash, emoji, line break or "and/but/so/also/plus", or a
first-person subject in the middle of a run-on line ("im dana i live in porto"). A piece
after a cut starts a new statement when it has its own subject (I, my..., a name before a
verb) or an implied first-person one: it opens with a finite verb ("live in Leeds", "got two
kids") or a predicate adjective ("allergic to nuts"). spaCy's tagger decides which words those
are; without it only first-person subjects start statements. Anything else (the "pears and
plums" of "I like apples, pears and plums") stays with the statement before it, as does a
piece after one without a verb ("my wife" in "my wife and I have a cat").

>>> [c.text for c in split_statements("I'm Dana, I live in Porto; my daughter is Rita")]
["I'm Dana", 'I live in Porto', 'my daughter is Rita']
>>> [c.text for c in split_statements("I like apples, pears and plums")]
['I like apples, pears and plums']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Clause", "split_statements"]

_EMOJI = "\U0001f300-\U0001faff\u2600-\u27bf\u2b50\u2764\ufe0f"
# Where a statement may end. The connective stays with the piece after it (and is skipped when
# the piece is judged), so "pears and plums" glues back together unchanged.
_CUT = re.compile(
    rf"\s*(?:[,;]+|\s[-\u2013\u2014]+\s|\n+|\.{{2,}}|[{_EMOJI}]+|(?<=\s)[+&](?=\s))\s*"
    r"|\s+(?=(?:and|but|so|also|plus|btw|oh and)\b)"
    # "im dana i live in porto": a subject in the middle of a line, unless a word that
    # introduces a subordinate clause comes before it ("the thing that i love").
    r"|(?<!\bthat)(?<!\bwhich)(?<!\bwhat)(?<!\bwhen)(?<!\bif)(?<!\bbecause)(?<!\bcause)"
    r"(?<!\bthan)(?<!\bas)(?<!\bwhere)(?<!\bwho)(?<!\bhow)(?<!\bsince)(?<!\buntil)(?<!\band)"
    r"(?<!\bwhile)(?<!\bthough)(?<!\blike)(?<!\bbc)(?<!\bso)(?<!\bbut)(?<!\bthink)"
    r"(?<!\bguess)(?<!\bknow)(?<!\bsaid)(?<!\bmean)(?<!\bhope)(?<!\bwish)(?<!\bbefore)"
    r"(?<!\bafter)(?<!\bor)(?<!\bwhere)(?<!\bonce)(?<!\bmy)(?<!\bme)(?<!\bthat's)"
    r"\s+(?=(?:i|i'm|im|i've|ive)\s)",
    re.IGNORECASE,
)
_LEAD = re.compile(
    r"^(?:(?:and|but|so|also|plus|btw|oh|ah|well|anyway|lol|haha|yeah|ok|okay|oh and|hi|hey|"
    r"hello|heya|hiya|yo|morning|sup)\b[\s,!.]*)+",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"^(?:i|i'm|i\u2019m|im|i've|ive|i'd|id|i'll|my|me|we|we're|our|call me|name's|names)\b",
    re.IGNORECASE,
)
# A chunk opening with a determiner and no verb is a noun phrase waiting for its predicate.
_NOUN_START = re.compile(r"^(?:my|our|the|a|an|this|that)\b", re.IGNORECASE)
# Finite verbs (an implied "I": "live in Leeds", "got 2 kids", "moved to Oslo").
_FINITE = {"VBD", "VBP", "VBZ", "VB", "MD"}
_SUBJECTS = {"PRON", "PROPN"}
# Only the tagger is read (per call, not by changing the shared pipeline: threads share it).
_UNUSED = ("parser", "ner")


@dataclass(frozen=True)
class Clause:
    """One statement of a message: its words as said, and the subject left implied.

    ``subject`` is "I" when the clause opens with a verb ("live in Leeds"), "I'm" when it
    opens with a predicate adjective ("allergic to nuts"), else "".
    """

    text: str
    subject: str = ""

    @property
    def statement(self) -> str:
        """The clause with its implied subject said: "I live in Leeds"."""
        return f"{self.subject} {self.text}" if self.subject else self.text


def split_statements(text: str, nlp: Any = None) -> list[Clause]:
    """The statements of ``text``; ``nlp`` is a spaCy pipeline with a tagger (None: only
    first-person subjects start a statement)."""
    pieces = [p for p in _CUT.split(text) if p and p.strip(" ,;.-")]
    if not pieces:
        return []
    tagged = _tags(pieces, nlp)
    out: list[tuple[str, str]] = []
    for piece, tags in zip(pieces, tagged, strict=True):
        body = _LEAD.sub("", piece.strip())
        subject = _starts(body, tags) if body else None
        if out and (subject is None or not _complete(out[-1][0], nlp)):
            joined = out[-1][0] + _joint(piece) + piece.strip()
            out[-1] = (joined, out[-1][1])
        else:
            out.append((body or piece.strip(), subject or ""))
    return [Clause(t.strip(" ,;-"), s) for t, s in out if t.strip(" ,;-")]


def _joint(piece: str) -> str:
    # Put back what the cut took: a comma for punctuation cuts, a space before a connective.
    return " " if _LEAD.match(piece.strip()) else ", "


def _tags(pieces: Sequence[str], nlp: Any) -> list[list[tuple[str, str, str]]]:
    """(lower word, coarse POS, fine tag) per token of each piece's body; empty without spaCy."""
    if nlp is None:
        return [[] for _ in pieces]
    bodies = [_LEAD.sub("", p.strip()) or p for p in pieces]
    docs = nlp.pipe(bodies, disable=_UNUSED)
    return [[(t.lower_, t.pos_, t.tag_) for t in doc if not t.is_space] for doc in docs]


def _starts(body: str, tags: list[tuple[str, str, str]]) -> str | None:
    """The implied subject when ``body`` starts a statement ("" when it has its own), or None
    when it does not start one."""
    if _FIRST_PERSON.match(body):
        return ""
    if len(tags) == 1 and tags[0][1] == "ADJ":
        return "I'm"  # "and vegetarian"
    if len(tags) < 2:
        return None
    (w0, pos0, tag0), (_, pos1, _) = tags[0], tags[1]
    if pos0 in _SUBJECTS and pos1 in ("VERB", "AUX") and w0 not in ("it", "that", "this"):
        return ""  # "rita is my daughter", "she lives in Oslo"
    if tag0 in _FINITE and pos0 in ("VERB", "AUX"):
        return "I" if w0 not in ("am", "'m", "m") else ""
    if pos0 in ("ADJ", "VERB") and pos1 == "ADP":
        return "I'm"  # "allergic to peanuts", "based in Oslo", "married to Tom"
    return None


def _complete(chunk: str, nlp: Any) -> bool:
    """Whether the statement so far can stand alone: "my wife" cannot ("my wife and I ...")."""
    if not _NOUN_START.match(chunk.strip()):
        return True
    if nlp is None:
        return len(chunk.split()) >= 3
    doc = nlp(chunk, disable=_UNUSED)
    return any(t.pos_ in ("VERB", "AUX") for t in doc)
