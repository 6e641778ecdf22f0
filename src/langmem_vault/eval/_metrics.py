"""Per-question scores: evidence recall, answer coverage, token F1 (LoCoMo's rules).

Words are normalised as LoCoMo's ``task_eval/evaluation.py`` does (lower case, punctuation
and the words a, an, the, and removed), without its Porter stemming (no NLTK dependency), so
"runs" and "running" count as different words here.

>>> evidence_recall(["D1:3", "D2:1"], ["D1:3", "D9:9"])
0.5
>>> answer_coverage("7 May 2023", "Caroline: I went on 7 May, in 2023.")
1.0
>>> round(token_f1("she went to Lyon", "Lyon"), 2)
0.4
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

__all__ = ["answer_coverage", "evidence_recall", "is_abstention", "locomo_f1", "token_f1", "words"]

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ABSTAIN = ("not mentioned", "no information available")


def words(text: str) -> list[str]:
    """LoCoMo's normalised words of ``text``."""
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split()


def evidence_recall(found: Iterable[str], evidence: Sequence[str]) -> float | None:
    """Share of the ``evidence`` turn ids among ``found`` (None without evidence)."""
    if not evidence:
        return None
    seen = set(found)
    return sum(1 for e in evidence if e in seen) / len(evidence)


def answer_coverage(answer: str, block: str) -> float | None:
    """Share of the gold answer's distinct words that occur in ``block`` (None when the
    answer has no word left after normalising)."""
    wanted = set(words(answer))
    if not wanted:
        return None
    return len(wanted & set(words(block))) / len(wanted)


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of a prediction against one gold answer."""
    pred, ref = words(prediction), words(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def is_abstention(prediction: str) -> bool:
    """Whether the answer says the conversation does not tell (right for adversarial)."""
    lowered = prediction.lower()
    return any(phrase in lowered for phrase in _ABSTAIN)


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """F1 as LoCoMo scores each category: multi-hop answers split on commas (each gold part
    matched by its best predicted part), open-domain on the first ``;`` part, adversarial
    1.0 for an abstention.

    >>> locomo_f1("Lyon, Paris", "Paris, Lyon", 1)
    1.0
    >>> locomo_f1("Not mentioned.", "Not mentioned in the conversation", 5)
    1.0
    """
    if category == 5:
        return 1.0 if is_abstention(prediction) else 0.0
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category != 1:
        return token_f1(prediction, gold)
    parts = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in parts) for g in golds) / len(golds)
