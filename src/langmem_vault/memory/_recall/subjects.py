"""Recall's subject lift: the facts said by (or about) the person the question names.

"What activities does Melanie do?" asks about Melanie, and her answers say "I", not her name:
"Melanie: I signed up for a pottery class". The words of such a list question match her
friend's turns as well as hers ("Caroline: Melanie, you should try pottery!"), so after the
fusion the candidates whose subject is the person the question names get a soft lift: their
fused relevance moves a share of the way towards the best one's. A lift, not a filter: the
other speaker's turn that answers stays a candidate (dropping them lost single-hop and
temporal points on LoCoMo, bench/RESULTS.md).

A fact's subject is the name it starts with: the speaker of a transcript line ("Melanie: I
...") or the subject of a sentence ("Maya moved to Lyon"). The question names a person when
one of its capitalised words (other than its first) is some candidate's subject; a question
naming two such people (both speakers) lifts none.

>>> texts = {"a": "Melanie: I run", "b": "Caroline: you run?", "c": "The run"}
>>> named_subject("What does Melanie run?", texts.values())
'Melanie'
>>> sorted(t for t, text in texts.items() if said_by(text, "Melanie"))
['a']
>>> named_subject("Did Melanie and Caroline run?", texts.values()) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["named_subject", "said_by"]

# the leading name: one or two capitalised words, then a colon, a space, or "'s"
_LEADING = re.compile(r"\s*([A-Z][\w-]+(?: [A-Z][\w-]+)?)(?=:|'s\b|\s)")
_CAPITALISED = re.compile(r"\b[A-Z][\w-]+")


def _subject(text: str) -> str | None:
    """The name ``text`` starts with ("Melanie: ...", "Maya moved ..."), or None."""
    match = _LEADING.match(text)
    return match.group(1) if match else None


def named_subject(query: str, texts: Iterable[str]) -> str | None:
    """The one person ``query`` names who is the subject of some of ``texts`` (None: none,
    or more than one)."""
    # the first word is capitalised by grammar, not because it is a name
    words = {m.group() for m in _CAPITALISED.finditer(query.strip()) if m.start() > 0}
    if not words:
        return None
    named: set[str] = set()
    for text in texts:
        subject = _subject(text)
        if subject is not None and subject.split(" ")[0] in words:
            named.add(subject.split(" ")[0])
            if len(named) > 1:
                return None
    return named.pop() if named else None


def said_by(text: str, name: str) -> bool:
    """Whether ``text``'s subject is ``name`` (its first name for a two-word subject)."""
    subject = _subject(text)
    return subject is not None and subject.split(" ")[0] == name
