"""The two-thread demo: what the user says in one thread is remembered in the next.

Run ``langmem-vault demo`` (or ``python -m langmem_vault demo``). Offline by default: the
embedded Postgres through VaultStore, local embeddings, the offline extractor and a tiny
offline model that answers from the injected memories. With ``OPENAI_API_KEY`` set (and
``langchain-openai`` installed) a real model answers and extracts, through ``init_chat_model``.

>>> from langmem_vault._demo import run_demo
>>> transcript = run_demo(in_memory=True, quiet=True)   # doctest: +SKIP
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langmem_vault.graphs._builder import build_memory_graph
from langmem_vault.graphs._options import ExtractOptions
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline._model import RecallChatModel

__all__ = ["FIRST_THREAD", "SECOND_THREAD", "run_demo"]

FIRST_THREAD = (
    "Hi! My name is Dana and I live in Lyon.",
    "I work at Acme Robotics and I prefer window seats on flights.",
    "From now on, always end your answers with 'Cheers!'",
    "I will probably learn Rust next year.",
)
SECOND_THREAD = (
    "Where do I live, and where do I work?",
    "Which seat should I book on my flight?",
    "I moved to Berlin.",
    "Where do I live now?",
)
DEFAULT_OPENAI_MODEL = "openai:gpt-4o-mini"


def _choose_model(model: str | None, offline: bool, say: Callable[[str], None]) -> Any:
    if offline or (model is None and not os.environ.get("OPENAI_API_KEY")):
        return None
    name = model or DEFAULT_OPENAI_MODEL
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(name)
    except Exception as exc:  # missing provider package or key: the demo still runs offline
        say(f"(could not load {name!r}: {exc}; running offline)")
        return None


@contextmanager
def _open_store(dsn: str | None, in_memory: bool) -> Iterator[tuple[BaseStore, str]]:
    from langmem_vault.embeddings import default_index

    index = default_index()
    if in_memory:
        from langgraph.store.memory import InMemoryStore

        yield InMemoryStore(index=index), "InMemoryStore"
        return
    import psycopg

    from langmem_vault.db._embedded import resolve_dsn
    from langmem_vault.store import VaultStore

    uri = resolve_dsn(dsn)
    # A schema of its own, dropped afterwards: the demo leaves no memories behind.
    schema = f"lmv_demo_{uuid.uuid4().hex[:8]}"
    try:
        with VaultStore.from_conn_string(uri, index=index, schema=schema) as store:
            store.setup()
            yield store, "VaultStore (PostgreSQL + pgvector)"
    finally:
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run_demo(
    *,
    dsn: str | None = None,
    in_memory: bool = False,
    model: str | None = None,
    offline: bool = False,
    quiet: bool = False,
    out: Callable[[str], None] = print,
) -> list[tuple[str, str, str]]:
    """Run the two threads; returns the transcript as ``(thread, user, assistant)`` rows."""

    def say(text: str) -> None:
        if not quiet:
            out(text)

    chat = _choose_model(model, offline, say)
    transcript: list[tuple[str, str, str]] = []
    with _open_store(dsn, in_memory) as (store, label):
        if chat is None:
            from langmem_vault.offline._extractor import OfflineExtractor

            answerer: Any = RecallChatModel()
            extractor: Any = OfflineExtractor()
            summarizer: Any = None
            say(f"Offline demo: {label}, local embeddings, offline extractor and model.")
        else:
            answerer = extractor = summarizer = chat
            say(f"Demo with {getattr(chat, 'model_name', chat)!s} on {label}.")
        graph = build_memory_graph(
            answerer,
            store=store,
            checkpointer=InMemorySaver(),
            extractor=extractor,
            summarizer=summarizer,
            extract_options=ExtractOptions(every_n_messages=2),
        )
        user = f"dana-{uuid.uuid4().hex[:6]}"
        for thread, lines in (("thread-1", FIRST_THREAD), ("thread-2", SECOND_THREAD)):
            say(f"\n=== {thread} ===")
            config: RunnableConfig = {"configurable": {"user_id": user, "thread_id": thread}}
            for line in lines:
                say(f"user> {line}")
                reply = ""
                stream: Any = graph.stream(
                    {"messages": [HumanMessage(line)]}, config, stream_mode=["custom", "values"]
                )
                for mode, chunk in stream:
                    if mode == "custom" and chunk.get("type") == "memory_injected":
                        if chunk["count"]:
                            say(f"      (recalling {chunk['count']} memories)")
                    elif mode == "values":
                        last = chunk["messages"][-1] if chunk.get("messages") else None
                        if isinstance(last, AIMessage):
                            reply = last.text
                say(f"bot > {reply}")
                transcript.append((thread, line, reply))
        vault = MemoryVault(store, user_id=user)
        say("\nWhat the vault now holds about the user:")
        for memory in vault.list(status=None):
            fact = memory.value
            say(f"  [{fact.status:<20}] {fact.text} (confidence {fact.confidence:.2f})")
        for instruction in vault.instructions():
            say(f"  [instruction p{instruction.value.priority}] {instruction.value.text}")
    return transcript
