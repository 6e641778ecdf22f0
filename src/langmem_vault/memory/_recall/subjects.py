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
one of its capitalised words (other than its first) is some candidate's subject. A question
naming two such people asks about the first ("What book did Melanie read from Caroline's
suggestion?", "What has Nate received from Joanna?": the first's lines are lifted; LoCoMo 0-4,
multi-hop +0.4 points), unless it joins them ("Did Melanie and Caroline run?", "What do they
both like?": both people's lines are then every line, and none is lifted) or the first is
only the second's owner ("What does Melanie's friend Caroline run?").

>>> texts = {"a": "Melanie: I run", "b": "Caroline: you run?", "c": "The run"}
>>> sorted(named_subject("What does Melanie run?", texts))
['a']
>>> sorted(named_subject("What did Caroline run with Melanie?", texts))
['b']
>>> named_subject("Did Melanie and Caroline run?", texts)
set()

The same names also blur the question's embedding: when every line starts with one of two
speakers' names, "What books has Nate read?" embeds close to all of Nate's lines and to every
"Hey Nate!", whatever they say. So recall also searches for the question without its names
(:func:`without_names`), and when the people it names are the subjects of many candidates
(:func:`named_share`: a name that many say little about which of them answer) the vector
branch ranks by that search's cosine instead (``branch_lists``):

>>> without_names("What books has Nate's sister read in Paris?")
'What books has sister read in?'

A run of capitalised words stays: "Lebron James", "The Lord of the Rings" and "Grand Canyon"
name what the question is about, not whose lines to read (LoCoMo 0-4: multi-hop +0.4 points):

>>> without_names("What does John like about Lebron James?")
'What does like about Lebron James?'
>>> named_share("Did Melanie and Caroline run?", texts)
0.6666666666666666
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import TypeVar

__all__ = [
    "UNNAMED_SHARE",
    "named_share",
    "named_subject",
    "subject_of",
    "two_subjects",
    "without_names",
]

K = TypeVar("K", bound=Hashable)

# the leading name: one or two capitalised words, then a colon, a space, or "'s"
_LEADING = re.compile(r"\s*([A-Z][\w-]+)(?: [A-Z][\w-]+)?(?=:|'s\b|\s)")
_CAPITALISED = re.compile(r"\b[A-Z][\w-]+")
# a name for the second search: capitalised, then lower case (not an acronym such as "LGBTQ",
# which says what the question is about), with its possessive
_NAME = re.compile(r"\b[A-Z][a-z][\w-]*(?:['\u2019]s)?\b")
_BEFORE_PUNCTUATION = re.compile(r"\s+(?=[?.,!;:])")
# two or more capitalised words in a row (with "of", "the"... inside): a full name or a title
_NAME_RUN = re.compile(r"\b[A-Z][a-z][\w-]*(?: (?:of |the |de |la )*[A-Z][a-z][\w-]*)+")
# two names joined ("Jon and Gina", "Jon's and Gina's"), or "both": the question is about both
_JOINED = re.compile(r"^(?:['\u2019]s)?\s+(?:and|or|&)\s+$")
_BOTH = re.compile(r"\bboth\b", re.IGNORECASE)

#: the share of the candidates whose subject the question names from which the vector branch
#: ranks by the search without the names: a name that many candidates start with says little
#: about which of them answer (on LoCoMo the named speaker is the subject of half or more),
#: while one that a few start with is what the question is about ("What does Priya do?")
UNNAMED_SHARE = 0.25


def subject_of(text: str) -> str | None:
    """The (first) name ``text`` starts with ("Melanie: ...", "Maya moved ..."), or None.

    >>> subject_of("Maya Rossi: hello"), subject_of("i ran")
    ('Maya', None)
    """
    match = _LEADING.match(text)
    return match.group(1) if match else None


def _by_subject(query: str, texts: Mapping[K, str]) -> dict[str, set[K]]:
    """The keys of ``texts`` by subject, for the subjects ``query`` names."""
    # the first word is capitalised by grammar, not because it is a name
    words = {m.group() for m in _CAPITALISED.finditer(query.strip()) if m.start() > 0}
    if not words:  # most questions name no one: no texts to scan
        return {}
    by_name: dict[str, set[K]] = {}
    starts = tuple(words)
    for key, text in texts.items():
        if not text.lstrip().startswith(starts):  # cheap: most texts start with no such name
            continue
        subject = subject_of(text)
        if subject in words:
            by_name.setdefault(subject, set()).add(key)
    return by_name


def two_subjects(
    query: str, texts: Mapping[K, str]
) -> tuple[tuple[str, set[K]], tuple[str, set[K]]] | None:
    """The two people ``query`` names that are subjects of ``texts``, in the order it names
    them, each with the keys of their texts (None: it names fewer or more).

    >>> two_subjects("Did Caroline run with Melanie?", {"a": "Melanie: I run", "b": "Caroline: hi"})
    (('Caroline', {'b'}), ('Melanie', {'a'}))
    """
    by_name = _by_subject(query, texts)
    if len(by_name) != 2:
        return None
    first, second = sorted(by_name, key=lambda name: _mention(query, name))
    return (first, by_name[first]), (second, by_name[second])


def named_subject(query: str, texts: Mapping[K, str]) -> set[K]:
    """The keys of ``texts`` whose subject is the person ``query`` asks about: the one it
    names, or the first of two it does not join (empty: it names none of their subjects,
    joins two, or names more)."""
    by_name = _by_subject(query, texts)
    if len(by_name) == 1:
        return by_name.popitem()[1]
    if len(by_name) != 2 or _BOTH.search(query):
        return set()
    first, second = sorted(by_name, key=lambda name: _mention(query, name))
    between = query[_mention(query, first) + len(first) : _mention(query, second)]
    if _JOINED.match(between):
        return set()
    # "Melanie's friend Caroline": the owner is not who the question is about
    return by_name[second] if between.startswith(("'s", "\u2019s")) else by_name[first]


def _mention(query: str, name: str) -> int:
    """Where ``query`` first names ``name`` as a word (not as its first word)."""
    match = re.search(rf"(?<=\W){re.escape(name)}\b", query)
    return match.start() if match else len(query)


def named_share(query: str, texts: Mapping[K, str]) -> float:
    """The share of ``texts`` whose subject is a person ``query`` names (0 for no texts)."""
    if not texts:
        return 0.0
    return sum(len(keys) for keys in _by_subject(query, texts).values()) / len(texts)


def without_names(query: str) -> str:
    """``query`` without the names in it (capitalised words other than the first, with
    their possessive; not a run of them: a full name or a title), for the search that looks
    for what it asks, not who."""
    text = query.strip()
    runs = [(m.start(), m.end()) for m in _NAME_RUN.finditer(text) if m.start() > 0]

    def kept(m: re.Match[str]) -> str:
        keep = m.start() == 0 or any(start <= m.start() < end for start, end in runs)
        return m.group() if keep else ""

    return _BEFORE_PUNCTUATION.sub("", " ".join(_NAME.sub(kept, text).split()))
