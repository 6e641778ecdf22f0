"""Sensitive topics in memory text: word lists per topic, and money amounts generalised.

Used by consent (``allow_sensitive_facts``: the special categories of data of GDPR article 9,
plus money and family) and by the privacy gate (family and medical details removed, financial
figures generalised). Word lists, not a model: the check runs on every proposal and every gate
answer, must be explainable ("dropped: medical"), and errs towards flagging.

>>> sorted(sensitive_topics("I was diagnosed with diabetes last year"))
['medical']
>>> generalise_amounts("I earn $85,000 a year")
'I earn a five-figure amount a year'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = ["TOPICS", "generalise_amounts", "has_amount", "sensitive_topics"]

# fmt: off
_WORDS: Final[dict[str, tuple[str, ...]]] = {
    "medical": (
        "diagnos\\w*", "diabet\\w*", "cancer", "tumou?r", "depress\\w*", "anxiety", "adhd",
        "autis\\w*", "bipolar", "schizophren\\w*", "medication\\w*", "meds", "prescri\\w*",
        "therap(y|ist)", "psychiatr\\w*", "pregnan\\w*", "miscarriage", "hiv", "aids",
        "surgery", "chemo\\w*", "illness", "disease", "disorder", "allerg\\w*", "asthma",
        "hospital\\w*", "clinic", "doctor", "symptoms?", "insulin", "epilep\\w*", "migraines?",
        "disabilit\\w*", "rehab", "addict\\w*", "std", "covid", "blood pressure",
        "mental health", "health condition",
    ),
    "family": (
        "wife", "husband", "spouse", "son", "sons", "daughters?", "mother", "father", "mom",
        "mum", "dad", "parents?", "brothers?", "sisters?", "siblings?", "kids?", "children",
        "child", "baby", "grand(mother|father|ma|pa|parents?|son|daughter|children)",
        "aunt", "uncle", "cousins?", "nieces?", "nephews?", "fianc[eé]e?", "in-laws?",
        "family", "stepson", "stepdaughter",
    ),
    "financial": (
        "salary", "income", "debt", "loan", "mortgage", "bankrupt\\w*", "credit score",
        "net worth", "savings", "paycheck", "earn(s|ed|ing)?", "owe[sd]?", "pension",
    ),
    "religion": (
        "christian", "catholic", "protestant", "muslim", "islam\\w*", "jewish", "judaism",
        "hindu\\w*", "buddhis\\w*", "sikh", "atheis\\w*", "church", "mosque", "synagogue",
        "temple", "pray(s|ed|ing)?", "religio\\w*",
    ),
    "politics": (
        "democrat\\w*", "republican\\w*", "voted?", "voting", "political", "politics",
        "liberal", "conservative", "labour party", "socialis\\w*", "trade union",
    ),
    "sexuality": (
        "gay", "lesbian", "bisexual", "transgender", "trans", "queer", "sexual\\w*",
        "non-binary", "nonbinary",
    ),
    "ethnicity": ("ethnic\\w*", "racial", "racially"),
    "criminal": (
        "arrest\\w*", "convict\\w*", "criminal record", "prison", "jail", "felony",
        "probation", "parole",
    ),
}
# fmt: on

TOPICS: Final[tuple[str, ...]] = tuple(_WORDS)
_PATTERNS: Final[dict[str, re.Pattern[str]]] = {
    topic: re.compile(r"\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)
    for topic, words in _WORDS.items()
}

# "$85,000", "€1.2m", "85k dollars", "3,000 euros", "USD 40", "£250". A bare number is not money
# ("I have 3 cats"); a currency sign, code or word, or a k/m/bn suffix with one, must be there.
_NUM = r"\d{1,3}(?:[ ,.]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SUFFIX = r"(?:\s?(?:k|m|bn|million|billion|thousand))?"
_CURRENCY_WORD = r"(?:dollars?|euros?|pounds?|usd|eur|gbp|chf|yen|bucks)"
_AMOUNT = re.compile(
    rf"(?:[$€£¥]\s?(?:{_NUM}){_SUFFIX}"
    rf"|\b(?:usd|eur|gbp|chf)\s?(?:{_NUM}){_SUFFIX}"
    rf"|\b(?:{_NUM}){_SUFFIX}\s?{_CURRENCY_WORD}\b)",
    re.IGNORECASE,
)
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}
_FIGURES = ["a small", "a two-figure", "a three-figure", "a four-figure", "a five-figure",
            "a six-figure", "a seven-figure"]  # fmt: skip


def sensitive_topics(text: str, extra: Iterable[str] = ()) -> set[str]:
    """The sensitive topics ``text`` (and ``extra`` strings such as tags) touch.

    Money amounts count as ``financial``.

    >>> sensitive_topics("Prefers Python for data analysis")
    set()
    """
    found: set[str] = set()
    for chunk in (text, *extra):
        for topic, pattern in _PATTERNS.items():
            if pattern.search(chunk):
                found.add(topic)
        if has_amount(chunk):
            found.add("financial")
    return found


def has_amount(text: str) -> bool:
    """Whether ``text`` states a sum of money."""
    return _AMOUNT.search(text) is not None


def _value(match: str) -> float | None:
    lowered = match.lower()
    number = re.search(r"\d[\d ,.]*", lowered)
    if number is None:
        return None
    digits = number.group(0).strip()
    # "85,000" and "85.000" are thousands separators when followed by exactly three digits.
    if re.fullmatch(r"\d{1,3}(?:[ ,.]\d{3})+", digits):
        digits = re.sub(r"[ ,.]", "", digits)
    else:
        digits = digits.replace(",", "").replace(" ", "")
    try:
        value = float(digits.rstrip("."))
    except ValueError:
        return None
    suffix = re.search(r"(k|m|bn|million|billion|thousand)\b", lowered[number.end() :])
    if suffix:
        value *= _MULTIPLIERS[suffix.group(1)]
    return value


def _bucket(match: re.Match[str]) -> str:
    value = _value(match.group(0))
    if value is None or value < 10:
        return "a small amount"
    figures = len(str(int(value)))
    label = _FIGURES[figures - 1] if figures <= len(_FIGURES) else "a very large"
    return f"{label} amount"


def generalise_amounts(text: str) -> str:
    """Replace every money amount with its order of magnitude ("a five-figure amount").

    >>> generalise_amounts("rent is €1.2k, savings 3 million dollars")
    'rent is a four-figure amount, savings a seven-figure amount'
    """
    return _AMOUNT.sub(_bucket, text)
