"""The scripted chat models of the suite (the only fake part: storage is always real).

- :class:`ScriptedModel`: structured outputs (extract, compact) or text replies (respond)
  from a script; records every prompt;
- :class:`ToolCallingModel`: calls the ``add`` tool, then answers with its result (agent and
  checkpointer tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import ConfigDict, Field

from langmem_vault.extraction._schema import ExtractionProposal

Step = Any  # an output, an Exception to raise, or a callable(prompt) -> output


class ScriptedModel(BaseChatModel):
    """A chat model whose outputs come from a script; records every prompt.

    ``script`` items are returned in order; an Exception item is raised; a callable item is
    called with the prompt messages. ``default`` is used when the script is empty.
    ``ScriptedModel(replies=["a", "b"])`` answers "a", then "b" for every later call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Step] = Field(default_factory=list)
    default: Step = None
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    schemas: list[Any] = Field(default_factory=list)

    def __init__(self, replies: Sequence[str] | None = None, **kwargs: Any) -> None:
        if replies:
            kwargs.setdefault("script", list(replies))
            kwargs.setdefault("default", replies[-1])
        super().__init__(**kwargs)

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

    def system_text(self, turn: int = -1) -> str:
        """The system message of a recorded prompt."""
        return "\n".join(str(m.content) for m in self.prompts[turn] if isinstance(m, SystemMessage))


class ToolCallingModel(BaseChatModel):
    """Calls the ``add`` tool for a human message, then answers with the tool's result."""

    @property
    def _llm_type(self) -> str:
        return "scripted-tools"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: Any = None,
        **kw: Any,
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(f"the sum is {last.content}")
        else:
            n = len(messages)
            call = {"name": "add", "args": {"a": n, "b": 2}, "id": f"call-{n}"}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


class RecallToolModel(BaseChatModel):
    """Calls the ``clock`` tool once per user message, then answers from the injected memories
    as the offline ``RecallChatModel`` does; records every system message it was given."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    systems: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-recall-tools"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: Any = None,
        **kw: Any,
    ) -> ChatResult:
        from langmem_vault.offline._model import RecallChatModel

        self.systems.append("\n".join(m.text for m in messages if isinstance(m, SystemMessage)))
        if isinstance(messages[-1], ToolMessage):
            return RecallChatModel()._generate(messages)
        call = {"name": "clock", "args": {}, "id": f"call-{len(messages)}"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=[call]))])


class MeteredModel(BaseChatModel):
    """A scripted model that answers through a real chat generation and reports usage, as a
    provider does: each reply is an ``AIMessage`` with ``usage_metadata`` (``tokens_in``
    and ``tokens_out`` per call) and ``response_metadata["model_name"]``; structured output
    parses the reply's JSON (the ``script``'s pydantic objects, in order; ``default`` after)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Any] = Field(default_factory=list)
    default: Any = None
    model_name: str = "scripted-metered"
    tokens_in: int = 100
    tokens_out: int = 20

    @property
    def _llm_type(self) -> str:
        return "scripted-metered"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        step = self.script.pop(0) if self.script else self.default
        text = step.model_dump_json() if hasattr(step, "model_dump_json") else str(step or "{}")
        usage = {
            "input_tokens": self.tokens_in,
            "output_tokens": self.tokens_out,
            "total_tokens": self.tokens_in + self.tokens_out,
        }
        reply = AIMessage(
            text, usage_metadata=usage, response_metadata={"model_name": self.model_name}
        )
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:  # type: ignore[override]
        def parse(message: AIMessage) -> Any:
            return schema.model_validate_json(message.text or "{}")

        return self | RunnableLambda(parse)
