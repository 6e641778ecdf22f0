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
    # introduces a subordinate clause comes before it ("the thing that i love"), or an
    # auxiliary that a question puts before its subject ("where do i live").
    r"|(?<!\bthat)(?<!\bwhich)(?<!\bwhat)(?<!\bwhen)(?<!\bif)(?<!\bbecause)(?<!\bcause)"
    r"(?<!\bthan)(?<!\bas)(?<!\bwhere)(?<!\bwho)(?<!\bhow)(?<!\bsince)(?<!\buntil)(?<!\band)"
    r"(?<!\bwhile)(?<!\bthough)(?<!\blike)(?<!\bbc)(?<!\bso)(?<!\bbut)(?<!\bthink)"
    r"(?<!\bguess)(?<!\bknow)(?<!\bsaid)(?<!\bmean)(?<!\bhope)(?<!\bwish)(?<!\bbefore)"
    r"(?<!\bafter)(?<!\bor)(?<!\bwhere)(?<!\bonce)(?<!\bmy)(?<!\bme)(?<!\bthat's)"
    r"(?<!\bdo)(?<!\bdoes)(?<!\bdid)(?<!\bcan)(?<!\bcould)(?<!\bwould)(?<!\bshould)"
    r"(?<!\bwill)(?<!\bshall)(?<!\bmay)(?<!\bmight)(?<!\bmust)(?<!\bam)(?<!\bare)"
    r"(?<!\bwas)(?<!\bwere)"
    r"\s+(?=(?:i|i'm|im|i've|ive)\s)",
    re.IGNORECASE,
)
_LEAD = re.compile(
    r"^(?:(?:and|but|so|also|plus|btw|oh|ah|well|anyway|lol|haha|yeah|ok|okay|oh and|hi|hey|"
    r"just|recently|finally|actually|currently|still|now|"
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
    """The statements of ``text``; ``nlp`` is a spaCy pipeline with a tagger, run once over the
    whole text so each word is tagged in context (None: only first-person subjects start a
    statement)."""
    spans, start = [], 0
    for cut in _CUT.finditer(text):
        spans.append((start, cut.start()))
        start = cut.end()
    spans.append((start, len(text)))
    spans = [(a, b) for a, b in spans if text[a:b].strip(" ,;.-")]
    tokens = _tokens(text, nlp)
    out: list[tuple[int, int, int, str]] = []  # chunk start, body start, end, subject
    for a, b in spans:
        lead = _LEAD.match(text[a:b].lstrip())
        body = a + (len(text[a:b]) - len(text[a:b].lstrip())) + (lead.end() if lead else 0)
        subject = _starts(text[body:b], _within(tokens, body, b)) if body < b else None
        if out and (subject is None or not _complete(text, out[-1], tokens, nlp)):
            out[-1] = (out[-1][0], out[-1][1], b, out[-1][3])
        else:
            out.append((a, body if body < b else a, b, subject or ""))
    clauses = [Clause(text[body:b].strip(" ,;-"), subject) for _, body, b, subject in out]
    return [c for c in clauses if c.text]


_Token = tuple[int, str, str, str]  # offset, lower word, coarse POS, fine tag


def _tokens(text: str, nlp: Any) -> list[_Token]:
    if nlp is None:
        return []
    doc = nlp(text, disable=_UNUSED)
    return [(t.idx, t.lower_, t.pos_, t.tag_) for t in doc if not t.is_space]


def _within(tokens: Sequence[_Token], start: int, end: int) -> list[tuple[str, str, str]]:
    return [(w, pos, tag) for i, w, pos, tag in tokens if start <= i < end]


def _starts(body: str, tags: list[tuple[str, str, str]]) -> str | None:
    """The implied subject when ``body`` starts a statement ("" when it has its own), or None
    when it does not start one."""
    if _FIRST_PERSON.match(body):
        return ""
    if len(tags) < 2:
        return None
    (w0, pos0, tag0), (w1, pos1, _) = tags[0], tags[1]
    if pos0 in _SUBJECTS and pos1 in ("VERB", "AUX") and w0 not in ("it", "that", "this"):
        return ""  # "rita is my daughter", "she lives in Oslo"
    if tag0 in _FINITE and pos0 in ("VERB", "AUX"):
        return "I" if w0 not in ("am", "'m", "m") else ""
    if pos0 in ("ADJ", "VERB") and (pos1 == "ADP" or w1 == "to"):
        return "I'm"  # "allergic to peanuts", "based in Oslo", "married to Tom"
    return None


def _complete(
    text: str, chunk: tuple[int, int, int, str], tokens: Sequence[_Token], nlp: Any
) -> bool:
    """Whether the statement so far can stand alone: "my wife" cannot ("my wife and I ...")."""
    words = text[chunk[1] : chunk[2]].strip()
    if not _NOUN_START.match(words):
        return True
    if nlp is None:
        return len(words.split()) >= 3
    return any(pos in ("VERB", "AUX") for _, pos, _ in _within(tokens, chunk[1], chunk[2]))
