"""The reference memory graph, offline: two threads of one user share what they learn.

    python examples/memory_graph.py

Swap ``RecallChatModel()`` for ``"openai:gpt-4o-mini"`` (and drop ``extractor``) to use a real
model; swap InMemoryStore for ``VaultStore.from_conn_string(...)`` to persist in Postgres.
"""

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_vault.embeddings import default_index
from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory import MemoryVault
from langmem_vault.offline import OfflineExtractor, RecallChatModel

store = InMemoryStore(index=default_index())
graph = build_memory_graph(
    RecallChatModel(),
    store=store,
    checkpointer=InMemorySaver(),
    extractor=OfflineExtractor(),  # no LLM: patterns for first-person statements
    summarizer=None,  # compact with an extractive summary
    extract_options=ExtractOptions(every_n_messages=2),
)


def say(thread: str, text: str) -> str:
    config = {"configurable": {"user_id": "dana", "thread_id": thread}}
    out = graph.invoke({"messages": [HumanMessage(text)]}, config)
    return str(out["messages"][-1].content)


say("monday", "I live in Lyon and I work at Acme Robotics.")
say("monday", "From now on, always end your answers with 'Cheers!'")
print(say("tuesday", "Where do I work?"))
# -> From what you told me: you work at Acme Robotics [M1]. Cheers!

vault = MemoryVault(store, user_id="dana")
for memory in vault.list():
    print(memory.value.status, memory.value.text, memory.value.confidence)
