"""LoCoMo-format conversations, read into plain dataclasses.

The format is LoCoMo's ``data/locomo10.json`` (https://github.com/snap-research/LoCoMo): a
list of samples, each with ``sample_id``, ``conversation`` (``speaker_a``, ``speaker_b``,
``session_<n>`` lists of turns ``{"speaker", "dia_id", "text"}`` and
``session_<n>_date_time`` such as ``"1:56 pm on 8 May, 2023"``) and ``qa`` (``question``,
``answer`` or, for adversarial questions, ``adversarial_answer``, ``evidence``: the
``dia_id`` of the answering turns, ``category``).

Categories, as the LoCoMo repository's ``task_eval/evaluation.py`` scores them (multi-hop
answers are split on commas) and as mem0's and Zep's published evaluations label them:
1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial (unanswerable: the
right answer is that the conversation does not say).

A few evidence ids in the published file are written loosely (``"D8:6; D9:17"``,
``"D:11:26"``, ``"D30:05"``); they are split and normalised. Ids that name no turn of the
conversation are dropped (:attr:`Question.unknown_evidence` keeps them): no retriever can
find them, so they would only lower every system's recall alike.

>>> conv = parse_locomo([{
...     "sample_id": "c1",
...     "conversation": {
...         "speaker_a": "Ana", "speaker_b": "Ben",
...         "session_1_date_time": "1:56 pm on 8 May, 2023",
...         "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Lyon."}],
...     },
...     "qa": [{"question": "Where did Ana move?", "answer": "Lyon",
...             "evidence": ["D1:1"], "category": 4}],
... }])[0]
>>> conv.turns[0].said_at.isoformat(), conv.questions[0].category_name
('2023-05-08T13:56:00+00:00', 'single-hop')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "CATEGORY_NAMES",
    "Conversation",
    "LocomoFormatError",
    "Question",
    "Turn",
    "load_locomo",
    "parse_locomo",
]

#: LoCoMo's category numbers and the names the published evaluations use
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
#: what an adversarial question's right answer says (LoCoMo scores "not mentioned" as right)
NOT_MENTIONED = "Not mentioned in the conversation"

_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


class LocomoFormatError(ValueError):
    """The file is not in LoCoMo's format; the message names the sample and the field."""


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation."""

    dia_id: str
    speaker: str
    text: str
    session: int
    #: when this was said: the session's date, a second later per turn before it in the
    #: session (LoCoMo dates sessions, not turns; the seconds keep the turns' order, which
    #: recall's neighbour branch reads); None when the file gives no date
    said_at: datetime | None


@dataclass(frozen=True)
class Question:
    """One question, its gold answer and the turns that answer it."""

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int
    unknown_evidence: tuple[str, ...] = ()

    @property
    def category_name(self) -> str:
        return CATEGORY_NAMES[self.category]


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo sample: its turns in order and its questions."""

    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def load_locomo(path: str | Path) -> list[Conversation]:
    """Read a LoCoMo-format JSON file (see :func:`parse_locomo`)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LocomoFormatError(f"{path}: not JSON ({exc})") from exc
    return parse_locomo(data)


def parse_locomo(data: Any) -> list[Conversation]:
    """The conversations of LoCoMo-format ``data`` (the parsed JSON: a list of samples)."""
    if not isinstance(data, list) or not data:
        raise LocomoFormatError("expected a non-empty JSON list of samples")
    return [_conversation(i, sample) for i, sample in enumerate(data)]


def _need(where: str, mapping: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(mapping, Mapping) or key not in mapping:
        raise LocomoFormatError(f"{where}: missing field {key!r}")
    value = mapping[key]
    if not isinstance(value, kind):
        raise LocomoFormatError(f"{where}.{key}: wrong type {type(value).__name__}")
    return value


def _date(where: str, text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.strptime(text.strip(), _DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise LocomoFormatError(
            f"{where}: date {text!r} is not like '1:56 pm on 8 May, 2023'"
        ) from exc


def _turns(where: str, conv: Mapping[str, Any]) -> list[Turn]:
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)))
    turns = []
    for n in sessions:
        place = f"{where}.session_{n}"
        said_at = _date(f"{place}_date_time", conv.get(f"session_{n}_date_time"))
        for j, raw in enumerate(_need(where, conv, f"session_{n}", list)):
            text = _need(f"{place}[{j}]", raw, "text", str)
            if raw.get("blip_caption"):  # a shared photo, described as LoCoMo's prompts do
                text = f"{text} [shares {raw['blip_caption']}]"
            turns.append(
                Turn(
                    dia_id=_need(f"{place}[{j}]", raw, "dia_id", str),
                    speaker=_need(f"{place}[{j}]", raw, "speaker", str),
                    text=text,
                    session=n,
                    said_at=None if said_at is None else said_at + timedelta(seconds=j),
                )
            )
    return turns


def _evidence(raw: Sequence[Any]) -> list[str]:
    ids = []
    for item in raw:
        for m in _EVIDENCE.finditer(str(item)):
            ids.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return list(dict.fromkeys(ids))


def _question(where: str, raw: Any, known: set[str]) -> Question:
    category = _need(where, raw, "category", int)
    if category not in CATEGORY_NAMES:
        raise LocomoFormatError(f"{where}.category: must be 1 to 5, got {category}")
    # An adversarial question's "adversarial_answer" is the trap, not the answer.
    answer = NOT_MENTIONED if category == 5 else _need(where, raw, "answer", (str, int, float))
    evidence = _evidence(_need(where, raw, "evidence", list))
    return Question(
        question=_need(where, raw, "question", str),
        answer=str(answer),
        evidence=tuple(e for e in evidence if e in known),
        category=category,
        unknown_evidence=tuple(e for e in evidence if e not in known),
    )


def _conversation(i: int, sample: Any) -> Conversation:
    where = f"sample {i}"
    sample_id = str(_need(where, sample, "sample_id", (str, int)))
    where = f"sample {i} ({sample_id})"
    conv = _need(where, sample, "conversation", Mapping)
    turns = _turns(f"{where}.conversation", conv)
    if not turns:
        raise LocomoFormatError(f"{where}.conversation: no session_<n> turns")
    known = {t.dia_id for t in turns}
    qa = _need(where, sample, "qa", list)
    return Conversation(
        sample_id=sample_id,
        speakers=(str(conv.get("speaker_a", "")), str(conv.get("speaker_b", ""))),
        turns=tuple(turns),
        questions=tuple(_question(f"{where}.qa[{j}]", q, known) for j, q in enumerate(qa)),
    )
