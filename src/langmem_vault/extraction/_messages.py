r"""The messages memory reads: their text, stable ids, and JSON for a job's payload.

This is the one place the text of a message is derived, for every memory node: the text parts
only (image, audio and file blocks are skipped), cleaned of what Postgres and UTF-8 cannot hold
(NUL and other control characters are dropped, a lone surrogate becomes U+FFFD), and bounded
(:func:`bounded`: the head and the tail of a longer text). Whatever a LangChain message holds,
what memory reads of it can be searched, redacted and stored.

>>> from langchain_core.messages import HumanMessage
>>> message_id(HumanMessage("hi", id="m1")), message_text(HumanMessage("hi"))
('m1', 'hi')
>>> message_text(HumanMessage([{"type": "text", "text": "a\x00b"}, {"type": "image", "url": "u"}]))
'ab'
>>> query_text([HumanMessage("x" * 20_000)]) == bounded("x" * 20_000, MAX_QUERY_CHARS)
True
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)

from langmem_vault.memory._recall.scoring import as_datetime
from langmem_vault.store._validation import MAX_QUERY_CHARS

__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_QUERY_CHARS",
    "bounded",
    "clean_bounded",
    "clean_text",
    "content_messages",
    "memory_view",
    "message_id",
    "message_text",
    "message_time",
    "parse_time",
    "query_text",
    "search_text",
    "span_times",
    "with_time",
]

#: what memory reads of one message (extraction, compaction, tails, job payloads). A bound
#: below the redaction policy's ``max_chars`` and spaCy's ``max_length``, and about 5k tokens:
#: a span of a few such messages fits any extraction model's context window, while a fact the
#: user states before or after a paste is still read (:func:`bounded` keeps head and tail).
MAX_MESSAGE_CHARS = 20_000
#: joins the head and the tail of a bounded text
ELIDED = " \u2026 "

# C0 and C1 controls but tab, newline and carriage return; DEL too.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    r"""``text`` without NUL and other control characters; surrogate pairs joined into the
    character they encode, lone surrogates replaced by U+FFFD.

    >>> clean_text("a\x00\x1b[31mb \ud83d\ude00 \ud800") == "a[31mb \U0001f600 \ufffd"
    True
    """
    if _SURROGATE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return _CONTROL.sub("", text)


def bounded(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else its head and tail joined by
    an ellipsis, ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    keep = max(limit - len(ELIDED), 0)
    head = (keep + 1) // 2
    return (text[:head] + ELIDED + text[len(text) - (keep - head) :])[:limit]


def clean_bounded(text: str, limit: int | None) -> str:
    """``text`` cleaned (:func:`clean_text`) and :func:`bounded` to ``limit`` characters
    (None: unbounded)."""
    if limit is None:
        return clean_text(text)
    # Cleaning drops characters, so a little more than the bound is read first.
    return bounded(clean_text(bounded(text, 2 * limit)), limit)


def message_text(msg: BaseMessage, limit: int | None = MAX_MESSAGE_CHARS) -> str:
    """The text of a message: string content or the text blocks of list content, cleaned
    and bounded to ``limit`` characters (:func:`clean_bounded`)."""
    content: Any = msg.content
    if isinstance(content, str):
        return clean_bounded(content, limit)
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return clean_bounded(" ".join(parts), limit)


def search_text(text: str) -> str | None:
    """``text`` as a search query: cleaned and bounded to what the store's search accepts;
    None when nothing is left to search with."""
    return clean_bounded(text, MAX_QUERY_CHARS).strip() or None


def query_text(messages: Sequence[BaseMessage]) -> str | None:
    """What memory searches with: the last human message's text, bounded to what the store's
    search accepts; None when the user has not said anything searchable yet (no human
    message, or one without text: only images or blanks)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage) or getattr(message, "type", "") == "human":
            return message_text(message, MAX_QUERY_CHARS).strip() or None
    return None


def message_id(msg: BaseMessage) -> str:
    """The message's id; messages without one get a stable id from their type and content."""
    if msg.id:
        return msg.id
    digest = hashlib.sha1(f"{msg.type}\0{message_text(msg)}".encode()).hexdigest()[:16]
    return f"anon-{digest}"


#: where a message may say when it was sent: these keys of its ``additional_kwargs``, then of
#: its ``response_metadata`` (an ISO string, a datetime, or epoch seconds or milliseconds)
TIME_KEYS = ("observed_at", "timestamp", "created_at", "sent_at", "time")


def parse_time(value: Any) -> datetime | None:
    """A time as messages and run configs give it (ISO text, datetime, epoch s or ms)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else value  # milliseconds, as JavaScript sends
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return as_datetime(value.strip() if isinstance(value, str) else value)


def message_time(msg: BaseMessage) -> datetime | None:
    """When the message was sent, if it says (see :data:`TIME_KEYS`); None otherwise.

    >>> message_time(HumanMessage("hi", additional_kwargs={"timestamp": "2023-05-08T13:56:00Z"}))
    datetime.datetime(2023, 5, 8, 13, 56, tzinfo=datetime.timezone.utc)
    >>> message_time(HumanMessage("hi")) is None
    True
    """
    for holder in (msg.additional_kwargs, msg.response_metadata):
        for key in TIME_KEYS:
            found = parse_time(holder.get(key)) if isinstance(holder, dict) else None
            if found is not None:
                return found
    return None


def with_time(msg: BaseMessage, at: datetime) -> BaseMessage:
    """``msg`` dated ``at`` (``additional_kwargs["observed_at"]``) unless it has a time of its own.

    >>> message_time(with_time(HumanMessage("hi"), datetime(2020, 1, 1, tzinfo=UTC))).year
    2020
    """
    if message_time(msg) is not None:
        return msg
    kwargs = {**msg.additional_kwargs, "observed_at": at.isoformat()}
    return msg.model_copy(update={"additional_kwargs": kwargs})


def span_times(messages: Sequence[BaseMessage]) -> tuple[datetime, datetime] | None:
    """The first and last time the messages carry; None when none of them is dated."""
    times = [t for t in map(message_time, messages) if t is not None]
    return (min(times), max(times)) if times else None


def memory_view(msg: BaseMessage, limit: int = MAX_MESSAGE_CHARS) -> BaseMessage:
    """What memory keeps of a message: its role, id, time (:func:`message_time`) and text
    (:func:`message_text`, at most ``limit`` characters), and the names of the tools an AI
    message calls; never blocks, tool arguments or other metadata."""
    text = message_text(msg, limit)
    plain = text == msg.content and not msg.additional_kwargs and not msg.response_metadata
    if plain and not (isinstance(msg, AIMessage) and any(c["args"] for c in msg.tool_calls)):
        return msg
    ident = clean_text(msg.id) if msg.id else None
    name = clean_text(msg.name) if msg.name else None
    said = message_time(msg)
    kwargs = {"observed_at": said.isoformat()} if said is not None else {}
    if isinstance(msg, AIMessage):
        calls = [
            {"name": clean_text(c["name"]), "args": {}, "id": clean_text(c.get("id") or "")}
            for c in msg.tool_calls
        ]
        return AIMessage(text, id=ident, name=name, tool_calls=calls, additional_kwargs=kwargs)
    if isinstance(msg, ToolMessage):
        call = clean_text(msg.tool_call_id)
        return ToolMessage(text, id=ident, name=name, tool_call_id=call, additional_kwargs=kwargs)
    return msg.model_copy(
        update={"content": text, "id": ident, "name": name, "additional_kwargs": kwargs}
        | {"response_metadata": {}}
    )


def content_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages extraction and compaction read: everything but system messages, each as
    its role, id and clean, bounded text (see the module docstring)."""
    return [memory_view(m) for m in messages if not isinstance(m, SystemMessage)]


def serialize_span(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Messages as JSON (``messages_to_dict``) so a job never depends on the checkpointer."""
    return messages_to_dict(list(messages))


def deserialize_span(data: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """The inverse of :func:`serialize_span`."""
    return messages_from_dict(list(data))
