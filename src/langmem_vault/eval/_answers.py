"""A model answers from the injected block; a judge labels the answer (LLM-as-judge J).

The judge's prompt follows the one mem0 published for its LoCoMo evaluation (and Zep reused):
generous about wording and date formats, strict about the fact, one label CORRECT or WRONG.

>>> from langchain_core.language_models import FakeListChatModel
>>> answer_question(FakeListChatModel(responses=["Lyon"]), "- Ana: I moved to Lyon", "Where?")
'Lyon'
>>> judge_answer(FakeListChatModel(responses=['{"label": "CORRECT"}']), "Where?", "Lyon", "Lyon")
True
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

__all__ = ["ANSWER_PROMPT", "JUDGE_PROMPT", "answer_question", "judge_answer"]

ANSWER_PROMPT = """You answer questions about a long conversation between two people, using \
only the memories below (each line is something one of them said, with its date when known).
Answer in a short phrase, with dates as dates (for example "7 May 2023"). If the memories do \
not say, answer "Not mentioned".

{block}"""

JUDGE_PROMPT = """Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You \
will be given: (1) a question about a conversation, (2) a gold (ground truth) answer, \
(3) a generated answer. Be generous with the wording: if the generated answer touches on the \
same topic as the gold answer, or refers to the same date or time period (even in another \
format), it is CORRECT. If it gives a different fact, or says it does not know when the gold \
answer says something, it is WRONG.

Question: {question}
Gold answer: {gold}
Generated answer: {prediction}

Reason in one sentence, then end with JSON: {{"label": "CORRECT"}} or {{"label": "WRONG"}}."""

_LABEL = re.compile(r"\b(CORRECT|WRONG)\b")


def _text(reply: Any) -> str:
    return str(getattr(reply, "text", reply)).strip()


def answer_question(model: Any, block: str, question: str) -> str:
    """``model``'s short answer to ``question`` from the injected ``block``."""
    prompt = [SystemMessage(ANSWER_PROMPT.format(block=block)), HumanMessage(question)]
    return _text(model.invoke(prompt))


def judge_answer(judge: Any, question: str, gold: str, prediction: str) -> bool:
    """Whether ``judge`` labels ``prediction`` CORRECT (its last label counts: the reason
    before it may quote either word)."""
    prompt = JUDGE_PROMPT.format(question=question, gold=gold, prediction=prediction)
    labels = _LABEL.findall(_text(judge.invoke([HumanMessage(prompt)])).upper())
    return bool(labels) and labels[-1] == "CORRECT"
