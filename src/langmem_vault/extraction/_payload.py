"""The extract job: its kind, and the payload format the node writes and the worker reads.

A payload holds the span's messages as JSON (so a job never depends on the checkpointer),
their ids, and the namespaces resolved when the turn ran (so a worker never needs the run's
config)::

    {"messages": [...], "message_ids": [...],
     "namespaces": {"semantic": [...], "episodes": [...], "instructions": [...]}}

>>> from langchain_core.messages import HumanMessage
>>> from langmem_vault.memory._namespaces import MemoryNamespaces
>>> ns = MemoryNamespaces().resolve({"configurable": {"user_id": "u1"}})
>>> build = payload_builder([HumanMessage("I moved to Lyon", id="m1")], ns)
>>> payload = build(["m1"])
>>> namespaces_from_payload(payload) == ns, messages_from_payload(payload)[0].content
(True, 'I moved to Lyon')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from langmem_vault.extraction._messages import deserialize_span, message_id, serialize_span
from langmem_vault.memory._namespaces import WATERMARK_NAMESPACE, ResolvedNamespaces

__all__ = [
    "EXTRACT_JOB",
    "WATERMARK_NAMESPACE",
    "messages_from_payload",
    "namespaces_from_payload",
    "namespaces_payload",
    "payload_builder",
]

#: The job kind the extract node enqueues and the extraction worker claims.
EXTRACT_JOB = "extract"


def namespaces_payload(ns: ResolvedNamespaces) -> dict[str, list[str]]:
    """The resolved namespaces as the JSON a job carries."""
    return {
        "semantic": list(ns.semantic),
        "episodes": list(ns.episodes),
        "instructions": list(ns.instructions),
    }


def namespaces_from_payload(data: dict[str, Any]) -> ResolvedNamespaces:
    """The resolved namespaces a job carries (its payload, or its ``"namespaces"`` entry)."""
    data = data.get("namespaces", data)
    return ResolvedNamespaces(
        semantic=tuple(data["semantic"]),
        episodes=tuple(data["episodes"]),
        instructions=tuple(data["instructions"]),
    )


def messages_from_payload(payload: dict[str, Any]) -> list[BaseMessage]:
    """The span's messages a job carries."""
    return deserialize_span(payload["messages"])


def payload_builder(
    span: Sequence[BaseMessage], ns: ResolvedNamespaces, user_id: str | None = None
) -> Callable[[list[str]], dict[str, Any]]:
    """A function from the ids of the span's new messages to the job's payload.

    The queue decides which ids are new (under the thread's lock), so the payload is built
    there, from these ids. ``user_id``: whose tokens the job's model calls are accounted to.
    """
    by_id = {message_id(m): m for m in span}
    namespaces = namespaces_payload(ns)
    owner = {} if user_id is None else {"user_id": user_id}

    def build(new_ids: list[str]) -> dict[str, Any]:
        return {
            "messages": serialize_span([by_id[i] for i in new_ids]),
            "message_ids": new_ids,
            "namespaces": namespaces,
            **owner,
        }

    return build
