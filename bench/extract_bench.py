"""Memory write path: LLM calls and prompt tokens per turn, and chat-path latency.

Compares langmem-vault's extract node with LangMem's ``create_memory_store_manager`` on the
same scripted conversations, each driven by a counting fake chat model (tool-calling, so both
sides pay for their tool schemas too). Tokens are langchain-core's approximate count of the
prompt messages plus the bound tool schemas (JSON characters / 4), the same for both.

LangMem is run the two ways its docs show: after every turn over the whole conversation
(``manager.invoke({"messages": state["messages"]})``) and over the latest turn only.

Then the chat path's added latency: the time the extract node adds to a turn in background
mode (one enqueue on Postgres) beside inline extraction and LangMem's manager (both with the
zero-latency fake model, so only framework and store time is measured).

    python bench/extract_bench.py [--users 5] [--turns 12] [--latency-turns 200]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.store.memory import InMemoryStore
from pydantic import ConfigDict

from langmem_vault.extraction._payload import WATERMARK_NAMESPACE
from langmem_vault.nodes._extract import create_extract_node
from langmem_vault.offline._extractor import OfflineExtractor

Responder = Callable[[list[BaseMessage], list[dict[str, Any]]], AIMessage]


class CountingFakeModel(BaseChatModel):
    """A tool-calling fake: counts calls and prompt/completion tokens; answers via a function."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responder: Any
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def _llm_type(self) -> str:
        return "counting-fake"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kw: Any) -> Any:  # type: ignore[override]
        formatted = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kw)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: Any = None,
        tools: list[dict[str, Any]] | None = None,
        **kw: Any,
    ) -> ChatResult:
        self.calls += 1
        schema_tokens = len(json.dumps(tools or [])) // 4
        self.prompt_tokens += count_tokens_approximately(messages) + schema_tokens
        answer = self.responder(messages, tools or [])
        self.completion_tokens += len(json.dumps(answer.tool_calls)) // 4
        return ChatResult(generations=[ChatGeneration(message=answer)])


_OFFLINE = OfflineExtractor(use_spacy=False)
_USER_LINE = re.compile(r"^\[\d+\] User: (.*)$", re.MULTILINE)
_LANGMEM_HUMAN = re.compile(r"Human Message =+\n\n(.*?)(?:\n\n=+ |\n</session)", re.DOTALL)


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:8]}", "type": "tool_call"}


def vault_responder(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
    """Answers the one ExtractionProposal call with what the user lines state."""
    body = str(messages[-1].content)
    users = [HumanMessage(t) for t in _USER_LINE.findall(body)]
    proposal = _OFFLINE.extract(users, [])
    return AIMessage("", tool_calls=[_call("ExtractionProposal", proposal.model_dump())])


def langmem_responder(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
    """Inserts one ``Memory`` per fact in the conversation's last user message."""
    last = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
    text = str(last.content) if last is not None else ""
    # LangMem renders the conversation into one human message; take its last user turn.
    said = _LANGMEM_HUMAN.findall(text)
    facts = _OFFLINE.extract([HumanMessage(said[-1] if said else "")], []).facts
    names = {t["function"]["name"] for t in tools}
    if "Memory" not in names:
        return AIMessage("")
    return AIMessage("", tool_calls=[_call("Memory", {"content": f.text}) for f in facts])


STATEMENTS = [
    "I live in Lyon and I work at Acme Corp.",
    "My sister Anna lives in Berlin.",
    "I prefer window seats on long flights.",
    "From now on, answer in French.",
    "I'm allergic to peanuts.",
    "I'm working on a data pipeline in Rust.",
    "My favorite color is green.",
    "I moved to Oslo last year.",
    "Never use emojis.",
    "I love jazz and I play the piano.",
    "I decided to learn Japanese.",
    "My manager is called Priya.",
]
SMALL_TALK = ["Thanks!", "What time is it in Tokyo?", "Can you help me with an email?"]
REPLY = (
    "Sure, I can help with that. Here is a short answer with a few details you asked about, "
    "and a follow-up question to make sure I understood what you need."
)


def conversation(user: int, turns: int) -> list[tuple[str, str]]:
    out = []
    for t in range(turns):
        if t % 3 == 2:
            line = SMALL_TALK[(user + t) % len(SMALL_TALK)]
        else:
            line = STATEMENTS[(user * 5 + t) % len(STATEMENTS)]
        out.append((line, REPLY))
    return out


def _index() -> dict[str, Any]:
    from langmem_vault.embeddings import local_embeddings

    return {"dims": 384, "embed": local_embeddings(), "fields": ["text", "content.content"]}


def run_vault(users: int, turns: int, every_n: int) -> dict[str, float]:
    model = CountingFakeModel(responder=vault_responder)
    store = InMemoryStore(index=_index())  # type: ignore[arg-type]
    node = create_extract_node(model, mode="inline", every_n_messages=every_n, store=store)
    extractions = 0
    for u in range(users):
        config = {"configurable": {"user_id": f"u{u}", "thread_id": f"t{u}"}}
        messages: list[BaseMessage] = []
        for line, reply in conversation(u, turns):
            messages += [
                HumanMessage(line, id=uuid.uuid4().hex),
                AIMessage(reply, id=uuid.uuid4().hex),
            ]
            before = store.get(WATERMARK_NAMESPACE, f"t{u}")
            node.invoke({"messages": messages}, config)
            after = store.get(WATERMARK_NAMESPACE, f"t{u}")
            if after is not None and (before is None or before.value != after.value):
                extractions += 1
    n = users * turns
    return {
        "calls/turn": model.calls / n,
        "prompt tok/turn": model.prompt_tokens / n,
        "calls/extraction": model.calls / max(extractions, 1),
        "facts stored": float(len([i for i in _all(store) if i.namespace[-1] == "semantic"])),
    }


def _all(store: InMemoryStore) -> list[Any]:
    return [
        i
        for ns in store.list_namespaces(prefix=("memories",))
        for i in store.search(ns, limit=1000)
    ]


def run_langmem(users: int, turns: int, *, full_history: bool) -> dict[str, float]:
    from langmem import create_memory_store_manager

    model = CountingFakeModel(responder=langmem_responder)
    store = InMemoryStore(index=_index())  # type: ignore[arg-type]
    manager = create_memory_store_manager(
        model, store=store, namespace=("memories", "{langgraph_user_id}")
    )
    max_calls = 0
    for u in range(users):
        config = {"configurable": {"langgraph_user_id": f"u{u}"}}
        messages: list[BaseMessage] = []
        for line, reply in conversation(u, turns):
            turn = [HumanMessage(line), AIMessage(reply)]
            messages += turn
            before = model.calls
            manager.invoke({"messages": messages if full_history else turn}, config=config)  # type: ignore[arg-type]
            max_calls = max(max_calls, model.calls - before)
    n = users * turns
    return {
        "calls/turn": model.calls / n,
        "prompt tok/turn": model.prompt_tokens / n,
        "calls/extraction": float(max_calls),
        "facts stored": float(len(_all(store))),
    }


def _pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def _inline_variants() -> list[tuple[str, Callable[[list[BaseMessage], dict[str, Any]], Any]]]:
    """Inline extraction and LangMem's manager (fake LLMs), beside the enqueue."""
    inline = create_extract_node(
        CountingFakeModel(responder=vault_responder),
        mode="inline",
        every_n_messages=2,
        store=InMemoryStore(index=_index()),  # type: ignore[arg-type]
    )
    from langmem import create_memory_store_manager

    manager = create_memory_store_manager(
        CountingFakeModel(responder=langmem_responder),
        store=InMemoryStore(index=_index()),  # type: ignore[arg-type]
    )
    return [
        ("vault extract, inline (fake LLM)", lambda m, c: inline.invoke({"messages": m}, c)),
        (
            "langmem store manager, last turn (fake LLM)",
            lambda m, c: manager.invoke({"messages": m[-2:]}, config=c),  # type: ignore[arg-type]
        ),
    ]


def latency(turns: int, enqueue_only: bool = False) -> list[tuple[str, float, float]]:
    """Per-turn time the extract step adds to the chat path, in ms (p50, p95); with
    ``enqueue_only``, the pooled SELECT 1 floor and the background enqueue alone."""
    import psycopg

    from langmem_vault.db import open_pool
    from langmem_vault.db._embedded import resolve_dsn
    from langmem_vault.jobs import JobQueue

    dsn = resolve_dsn(None)
    schema = f"bench_extract_{uuid.uuid4().hex[:8]}"
    pool = open_pool(dsn, max_size=4)
    rows = []
    try:
        queue = JobQueue(pool, schema=schema)
        queue.setup()
        variants: list[tuple[str, Callable[[list[BaseMessage], dict[str, Any]], Any]]] = []

        def one_round_trip(m: list[BaseMessage], c: dict[str, Any]) -> None:
            with pool.connection() as conn:
                conn.execute("SELECT 1")

        # The floor on this machine right now: one pooled Postgres round trip.
        variants.append(("baseline: one pooled SELECT 1", one_round_trip))
        bg = create_extract_node(
            CountingFakeModel(responder=vault_responder),
            queue=queue,
            every_n_messages=2,
            start_worker=False,
            store=InMemoryStore(),
        )
        variants.append(
            ("vault extract, background (enqueue)", lambda m, c: bg.invoke({"messages": m}, c))
        )
        if enqueue_only:
            variants.append(("baseline again (after the enqueue)", one_round_trip))
        if not enqueue_only:
            variants += _inline_variants()
        for name, run in variants:
            samples = []
            messages: list[BaseMessage] = []
            for t in range(turns):
                thread = f"lat{t // 20}"  # 20-turn threads: realistic history lengths
                if t % 20 == 0:
                    messages = []
                config = {
                    "configurable": {"user_id": "u", "thread_id": thread, "langgraph_user_id": "u"}
                }
                line = STATEMENTS[t % len(STATEMENTS)]
                messages = [
                    *messages,
                    HumanMessage(line, id=uuid.uuid4().hex),
                    AIMessage(REPLY, id=uuid.uuid4().hex),
                ]
                start = time.perf_counter()
                run(messages, config)
                samples.append((time.perf_counter() - start) * 1000)
            samples = samples[5:]  # warm-up
            rows.append((name, statistics.median(samples), _pct(samples, 95)))
    finally:
        pool.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--latency-turns", type=int, default=200)
    parser.add_argument("--latency-only", action="store_true", help="skip the write-path table")
    parser.add_argument("--no-latency", action="store_true", help="skip the latency table")
    parser.add_argument(
        "--enqueue-only",
        action="store_true",
        help="latency of the SELECT 1 floor and the background enqueue only",
    )
    args = parser.parse_args()
    if not args.latency_only:
        write_path(args.users, args.turns)
    if not args.no_latency:
        print_latency(args.latency_turns, args.enqueue_only)


def write_path(users: int, turns: int) -> None:
    """Print the calls and tokens per turn table."""

    results = [
        ("langmem-vault extract, every 4 msgs (default)", run_vault(users, turns, 4)),
        ("langmem-vault extract, every 2 msgs (each turn)", run_vault(users, turns, 2)),
        (
            "LangMem store manager, full history each turn",
            run_langmem(users, turns, full_history=True),
        ),
        (
            "LangMem store manager, latest turn each turn",
            run_langmem(users, turns, full_history=False),
        ),
    ]
    cols = ["calls/turn", "prompt tok/turn", "calls/extraction", "facts stored"]
    print(f"\nWrite path, {users} users x {turns} turns (counting fake model)\n")
    print(f"| {'system':<50} | " + " | ".join(f"{c:>16}" for c in cols) + " |")
    print(f"|{'-' * 52}|" + "|".join("-" * 18 for _ in cols) + "|")
    for name, row in results:
        print(f"| {name:<50} | " + " | ".join(f"{row[c]:>16.2f}" for c in cols) + " |")


def print_latency(turns: int, enqueue_only: bool = False) -> None:
    """Print the chat-path latency table."""
    import os

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"\nChat-path added latency per turn ({turns} turns, ms; "
        f"load average {load:.1f} on {os.cpu_count()} CPUs)\n"
    )
    print(f"| {'extract step':<50} | {'p50 ms':>8} | {'p95 ms':>8} |")
    print(f"|{'-' * 52}|{'-' * 10}|{'-' * 10}|")
    for name, p50, p95 in latency(turns, enqueue_only):
        print(f"| {name:<50} | {p50:>8.2f} | {p95:>8.2f} |")


if __name__ == "__main__":
    main()
