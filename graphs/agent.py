"""Studio entry point: a tool-using agent (agent <-> tools loop) with memory wired around it
by ``add_memory``: inject before the agent, extract -> reconcile -> compact after the turn.

The agent puts ``state["memory_context"]`` in its system message
(``memory_system_message``) and has two tools: ``current_time`` and ``search_memories``, which
searches this user's stored facts through the server's store. Offline, a small scripted model
calls a tool when asked for the time or to search its memory and otherwise answers from the
injected memories; ``LANGMEM_VAULT_MODEL`` or ``OPENAI_API_KEY`` runs a real model (see
:mod:`langmem_vault.studio`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.config import get_store
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langmem_vault import ExtractOptions, MemoryNamespaces, add_memory
from langmem_vault.graphs import MemoryContext, MemoryInput, MemoryOutput, MemoryState
from langmem_vault.nodes import memory_system_message
from langmem_vault.offline import RecallChatModel
from langmem_vault.studio import studio_models, warm_up

SYSTEM_PROMPT = "You are a helpful assistant with tools and a long-term memory of this user."


@tool
def current_time() -> str:
    """The current date and time (UTC)."""
    return datetime.now(UTC).strftime("%A %d %B %Y, %H:%M UTC")


@tool
async def search_memories(query: str, config: RunnableConfig) -> str:
    """Search what you remember about this user (stored facts), most relevant first."""
    namespace = MemoryNamespaces().resolve(config).semantic
    items = await get_store().asearch(
        namespace, query=query, filter={"status": {"$ne": "superseded"}}, limit=5
    )
    return "\n".join(f"- {item.value['text']}" for item in items) or "(nothing found)"


TOOLS = [current_time, search_memories]
_ASKS_TIME = re.compile(r"\b(time|date|today|day is it)\b", re.IGNORECASE)
_ASKS_SEARCH = re.compile(r"\bsearch (?:my |your )?memor(?:y|ies) (?:for|about) (.+)", re.I)


class OfflineToolModel(RecallChatModel):
    """Offline stand-in for a tool-calling model: calls ``current_time`` or
    ``search_memories`` when asked to, reports a tool's answer, else answers like
    :class:`RecallChatModel` from the injected memories."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> OfflineToolModel:
        return self  # it knows its two tools by name

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(f"{last.name} says: {last.text}")
        elif isinstance(last, HumanMessage) and (found := _ASKS_SEARCH.search(last.text)):
            query = found.group(1).strip(" ?.!")
            reply = AIMessage("", tool_calls=[_call("search_memories", {"query": query})])
        elif isinstance(last, HumanMessage) and _ASKS_TIME.search(last.text):
            reply = AIMessage("", tool_calls=[_call("current_time", {})])
        else:
            return super()._generate(messages, stop, run_manager, **kw)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{name}", "type": "tool_call"}


models = studio_models()
warm_up(models)
chat = (OfflineToolModel() if models.label == "offline" else models.chat).bind_tools(TOOLS)


async def agent(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
    system = memory_system_message(state, SYSTEM_PROMPT)
    reply = await chat.ainvoke([system, *state["messages"]], config)
    return {"messages": [reply]}


builder = StateGraph(
    MemoryState, context_schema=MemoryContext, input_schema=MemoryInput, output_schema=MemoryOutput
)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode(TOOLS))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
add_memory(
    builder,
    "agent",
    extractor=models.extractor,
    summarizer=models.summarizer,
    extract_options=ExtractOptions(every_n_messages=2),
)
graph = builder.compile(name="memory_agent")
