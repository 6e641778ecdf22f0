"""Test helpers for extract/compact: a scripted structured-output model and message builders.

Holds no tests; tests import it by name (pytest puts this folder on
``sys.path``; tests/jobs/conftest.py adds it there too).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import ConfigDict, Field

from langmem_vault.extraction.schema import ExtractionProposal

Step = Any  # an output, an Exception to raise, or a callable(prompt) -> output


class ScriptedModel(BaseChatModel):
    """A chat model whose structured outputs come from a script; records every prompt.

    ``script`` items are returned in order (the last one repeats); an Exception item is
    raised; a callable item is called with the prompt messages. ``default`` is used when the
    script is empty.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Step] = Field(default_factory=list)
    default: Step = None
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    schemas: list[Any] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> int:
        return len(self.prompts)

    def _next(self, prompt: Any) -> Any:
        messages = list(prompt) if isinstance(prompt, Sequence) else [prompt]
        self.prompts.append(messages)
        step = self.script.pop(0) if self.script else self.default
        if isinstance(step, BaseException):
            raise step
        if callable(step) and not isinstance(step, type):
            return step(messages)
        if step is None:
            return ExtractionProposal()
        return step

    async def _anext(self, prompt: Any) -> Any:
        return self._next(prompt)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:  # type: ignore[override]
        self.schemas.append(schema)
        return RunnableLambda(self._next, afunc=self._anext)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        out = self._next(messages)
        text = out if isinstance(out, str) else str(out)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def human(text: str) -> HumanMessage:
    return HumanMessage(text, id=f"h-{uuid.uuid4().hex[:8]}")


def ai(text: str, tool_calls: list[dict[str, Any]] | None = None) -> AIMessage:
    return AIMessage(text, id=f"a-{uuid.uuid4().hex[:8]}", tool_calls=tool_calls or [])


def tool(text: str, call_id: str, name: str = "lookup") -> ToolMessage:
    return ToolMessage(text, tool_call_id=call_id, name=name, id=f"t-{uuid.uuid4().hex[:8]}")


def transcript_of(prompt: list[BaseMessage]) -> str:
    """The NEW TURNS part of an extraction prompt."""
    body = str(prompt[-1].content)
    return body.split("NEW TURNS:", 1)[1]


def proposal(**kwargs: Any) -> ExtractionProposal:
    return ExtractionProposal.model_validate(kwargs)


Responder = Callable[[list[BaseMessage]], Any]
