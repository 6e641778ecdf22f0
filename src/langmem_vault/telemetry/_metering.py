"""The tokens of memory model calls: each call metered, the calls of a stage collected.

A memory model call (extract, summarize, consolidate, judge) runs inside
:func:`metered_call`: LangChain hands the call's ``usage_metadata`` (``AIMessage``) to a
callback handler that a configure hook adds to every run started in that context, so it
reaches the chat model under ``with_structured_output``'s parser without touching the
run's config (LangSmith keeps its own callbacks and nesting). The call gets a span
(:func:`~langmem_vault.telemetry._tracing.model_span`) with its model and tokens, and its
usage goes to the :class:`Ledger` that the enclosing stage opened with :func:`collecting`,
which the stage then writes in one go (``memory._recall.accounting``). A model that reports
no usage still counts a call, with zero tokens.

>>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
>>> from langchain_core.messages import AIMessage
>>> reply = AIMessage("ok", usage_metadata={"input_tokens": 12, "output_tokens": 3,
...                                          "total_tokens": 15})
>>> model = GenericFakeChatModel(messages=iter([reply]))
>>> with collecting() as ledger:
...     with metered_call("extract", model):
...         _ = model.invoke("hi")
>>> ledger.entries
{('extract', 'GenericFakeChatModel'): [12, 3, 1]}
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tracers.context import register_configure_hook

from langmem_vault.telemetry._tracing import annotate, model_span

__all__ = ["Ledger", "collecting", "metered_call", "model_name"]


class Ledger:
    """Tokens per (operation, model): ``[input, output, calls]``."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], list[int]] = {}

    def add(self, operation: str, model: str, input_tokens: int, output_tokens: int) -> None:
        entry = self.entries.setdefault((operation, model), [0, 0, 0])
        entry[0] += input_tokens
        entry[1] += output_tokens
        entry[2] += 1

    def __bool__(self) -> bool:
        return bool(self.entries)


_ledger: ContextVar[Ledger | None] = ContextVar("langmem_vault_ledger", default=None)


@contextmanager
def collecting() -> Iterator[Ledger]:
    """Collect the usage of the memory model calls made in this context (a stage)."""
    ledger = Ledger()
    token = _ledger.set(ledger)
    try:
        yield ledger
    finally:
        _ledger.reset(token)


class _CallUsage(BaseCallbackHandler):
    """What one model call reported: tokens and the model that answered."""

    run_inline = True  # a plain accumulator: no executor hop on async runs

    def __init__(self) -> None:
        self.input_tokens = 0
        self.output_tokens = 0
        self.model: str | None = None

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                if not isinstance(generation, ChatGeneration):
                    continue
                message = generation.message
                if not isinstance(message, AIMessage):
                    continue
                usage = message.usage_metadata
                if usage is not None:
                    self.input_tokens += int(usage.get("input_tokens", 0))
                    self.output_tokens += int(usage.get("output_tokens", 0))
                meta = message.response_metadata
                self.model = meta.get("model_name") or meta.get("model") or self.model


_call: ContextVar[_CallUsage | None] = ContextVar("langmem_vault_model_call", default=None)
# Once per process: LangChain adds the handler in ``_call`` to each run configured while it
# is set (inheritable: the chat model under a structured-output chain gets it too).
register_configure_hook(_call, inheritable=True)


def model_name(model: Any) -> str:
    """The name a model is accounted under before it answers (its ``model_name`` or
    ``model`` field, else its class name)."""
    for field in ("model_name", "model"):
        value = getattr(model, field, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


@contextmanager
def metered_call(operation: str, model: Any) -> Iterator[None]:
    """Meter the memory model call(s) made inside: a span, and the tokens in the ledger."""
    requested = model_name(model)
    usage = _CallUsage()
    with model_span(operation, requested) as span:
        token = _call.set(usage)
        try:
            yield
        finally:
            _call.reset(token)
            span.set(
                {
                    "gen_ai.response.model": usage.model,
                    "gen_ai.usage.input_tokens": usage.input_tokens,
                    "gen_ai.usage.output_tokens": usage.output_tokens,
                }
            )
    annotate(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, model_calls=1)
    ledger = _ledger.get()
    if ledger is not None:
        ledger.add(operation, usage.model or requested, usage.input_tokens, usage.output_tokens)
