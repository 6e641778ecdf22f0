"""Memory around your own agent node (with a tool loop) using ``add_memory``.

    python examples/own_agent.py

``add_memory`` puts inject before the agent and extract -> reconcile -> compact after the turn
ends (also when a router such as ``tools_condition`` ends it). The agent puts
``state["memory_context"]`` in its own system prompt; ``memory_system_message`` does that and
attaches the same memories as data, which the offline ``RecallChatModel`` answers from.
"""

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.memory import InMemoryStore

from langmem_vault.embeddings import default_index
from langmem_vault.graphs import ExtractOptions, MemoryState, add_memory
from langmem_vault.nodes import memory_system_message
from langmem_vault.offline import OfflineExtractor, RecallChatModel

model = RecallChatModel()  # any LangChain chat model, e.g. init_chat_model("openai:gpt-4o-mini")


def agent(state: MemoryState) -> dict[str, Any]:
    system = memory_system_message(state, "You are a concise assistant.", cite=False)
    reply = model.invoke([system, *state["messages"]])
    return {"messages": [AIMessage(str(reply.content))]}


builder = StateGraph(MemoryState)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
add_memory(
    builder,
    "agent",
    extractor=OfflineExtractor(),
    extract_options=ExtractOptions(every_n_messages=2),
)

store = InMemoryStore(index=default_index())
graph = builder.compile(store=store, checkpointer=InMemorySaver())

for thread, text in [("a", "My sister is called Priya."), ("a", "ok"), ("b", "Who is my sister?")]:
    config = {"configurable": {"user_id": "sam", "thread_id": thread}}
    print(graph.invoke({"messages": [HumanMessage(text)]}, config)["messages"][-1].content)
