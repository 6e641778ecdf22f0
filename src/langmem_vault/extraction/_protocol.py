"""What extracts: the :class:`Extractor` protocol, and a chat model wrapped as one.

A chat model makes ONE ``with_structured_output`` call per span (:class:`ModelExtractor`); the
offline extractor (:mod:`langmem_vault.offline._extractor`) implements the protocol directly.

>>> as_extractor(42)
Traceback (most recent call last):
...
TypeError: model must be a chat model, an init_chat_model string or an Extractor; got int
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel, LanguageModelLike
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from langmem_vault.extraction._aliases import KnownFact
from langmem_vault.extraction._prompt import SYSTEM_PROMPT, build_prompt
from langmem_vault.extraction._schema import ExtractionProposal
from langmem_vault.telemetry._metering import metered_call


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns new messages plus known facts into an :class:`ExtractionProposal`.

    A chat model is wrapped in :class:`ModelExtractor`; the offline extractor implements this
    directly.
    """

    def extract(
        self, messages: Sequence[BaseMessage], known: Sequence[KnownFact]
    ) -> ExtractionProposal: ...

    async def aextract(
        self, messages: Sequence[BaseMessage], known: Sequence[KnownFact]
    ) -> ExtractionProposal: ...


class ModelExtractor:
    """An :class:`Extractor` over a chat model: ONE ``with_structured_output`` call per span.

    >>> from langchain.chat_models import init_chat_model  # doctest: +SKIP
    >>> ModelExtractor(init_chat_model("openai:gpt-4o-mini"))  # doctest: +SKIP
    """

    def __init__(self, model: BaseChatModel, *, system_prompt: str = SYSTEM_PROMPT) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self._runnable = model.with_structured_output(ExtractionProposal)

    def extract(
        self, messages: Sequence[BaseMessage], known: Sequence[KnownFact]
    ) -> ExtractionProposal:
        """Run the call and parse its answer."""
        prompt = build_prompt(messages, known, self.system_prompt)
        with metered_call("extract", self.model):
            result = self._runnable.invoke(prompt)
        return _as_proposal(result)

    async def aextract(
        self, messages: Sequence[BaseMessage], known: Sequence[KnownFact]
    ) -> ExtractionProposal:
        """Async twin of :meth:`extract`."""
        # Splitting the messages into statements runs spaCy: off the event loop.
        prompt = await asyncio.to_thread(build_prompt, messages, known, self.system_prompt)
        with metered_call("extract", self.model):
            result = await self._runnable.ainvoke(prompt)
        return _as_proposal(result)


def _as_proposal(result: Any) -> ExtractionProposal:
    if isinstance(result, ExtractionProposal):
        return result
    if isinstance(result, BaseModel):
        return ExtractionProposal.model_validate(result.model_dump())
    if isinstance(result, dict):
        return ExtractionProposal.model_validate(result)
    raise TypeError(
        f"the extraction model returned {type(result).__name__}; expected an "
        "ExtractionProposal or a dict from with_structured_output"
    )


def as_extractor(model: Any) -> Extractor:
    """A chat model, an ``init_chat_model`` string or an :class:`Extractor`, as an Extractor."""
    if isinstance(model, Extractor):
        return model
    if isinstance(model, str):
        model = load_model(model)
    if isinstance(model, BaseChatModel) or hasattr(model, "with_structured_output"):
        return ModelExtractor(model)
    raise TypeError(
        f"model must be a chat model, an init_chat_model string or an Extractor; got "
        f"{type(model).__name__}"
    )


def load_model(model: str | LanguageModelLike) -> LanguageModelLike:
    """An ``init_chat_model`` string (``"openai:gpt-4o-mini"``) or a model/runnable as is."""
    if isinstance(model, str):
        # langchain is a required dependency; imported here because it is slow to load.
        from langchain.chat_models import init_chat_model

        return init_chat_model(model)
    return model
