"""The scripted answerer and judge of the eval tests (one ScriptedModel plays both)."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage

from langmem_vault.eval._metrics import words
from tests.support.models import ScriptedModel

#: what the scripted model answers; anything else: "Not mentioned"
ANSWERS = {
    "What is the name of Ben's cat?": "Miso",
    "Where did Ana move?": "Paris",  # wrong on purpose: J and F1 must count it
    "What jobs has Ana had at the hospital?": "nurse, head nurse",
    "What is the name of Ana's cat?": "Miso",  # falls for the adversarial trap
}


def _reply(messages: list[BaseMessage]) -> str:
    prompt = str(messages[-1].content)
    judged = re.search(r"Gold answer: (.*)\nGenerated answer: (.*)", prompt)
    if judged:
        gold, generated = (set(words(g)) for g in judged.groups())
        label = "CORRECT" if gold <= generated else "WRONG"
        return f'The WRONG and CORRECT labels were weighed. {{"label": "{label}"}}'
    return ANSWERS.get(prompt, "Not mentioned")


def scripted_model(**kwargs: Any) -> ScriptedModel:
    """A chat model that answers from :data:`ANSWERS` and judges by the gold answer's words."""
    return ScriptedModel(default=_reply, **kwargs)
