"""Message builders with ids (as a checkpointed graph gives them) and prompt readers."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langmem_vault.extraction._schema import ExtractionProposal


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
