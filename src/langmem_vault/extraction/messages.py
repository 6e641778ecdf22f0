"""The messages extraction reads: their text, stable ids, and JSON for a job's payload.

>>> from langchain_core.messages import HumanMessage
>>> message_id(HumanMessage("hi", id="m1")), message_text(HumanMessage("hi"))
('m1', 'hi')
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    SystemMessage,
    messages_from_dict,
    messages_to_dict,
)


def message_text(msg: BaseMessage) -> str:
    """The text of a message (string content, or the text blocks of list content)."""
    if isinstance(msg.content, str):
        return msg.content
    parts = []
    for block in msg.content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return " ".join(parts)


def message_id(msg: BaseMessage) -> str:
    """The message's id; messages without one get a stable id from their type and content."""
    if msg.id:
        return msg.id
    digest = hashlib.sha1(f"{msg.type}\0{message_text(msg)}".encode()).hexdigest()[:16]
    return f"anon-{digest}"


def content_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages extraction reads: everything but system messages."""
    return [m for m in messages if not isinstance(m, SystemMessage)]


def serialize_span(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Messages as JSON (``messages_to_dict``) so a job never depends on the checkpointer."""
    return messages_to_dict(list(messages))


def deserialize_span(data: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """The inverse of :func:`serialize_span`."""
    return messages_from_dict(list(data))
