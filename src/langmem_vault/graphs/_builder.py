"""Graph wiring: the reference memory graph, and memory around an app's own agent node.

``build_memory_graph`` compiles ``inject -> respond -> extract -> reconcile -> compact``.
``add_memory`` wires inject before an existing agent node and extract/reconcile/compact after
the turn ends, in the app's own (not yet compiled) ``StateGraph``. Every node has native sync
and async paths, so the compiled graph serves ``invoke``/``stream`` and ``ainvoke``/``astream``.

>>> from langgraph.store.memory import InMemoryStore
>>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
>>> from langmem_vault.offline._extractor import OfflineExtractor
>>> graph = build_memory_graph(
...     FakeListChatModel(responses=["Hello!"]),
...     store=InMemoryStore(),
...     extractor=OfflineExtractor(),
... )
>>> sorted(n for n in graph.nodes if not n.startswith("__"))
['compact', 'extract', 'inject', 'reconcile', 'respond']
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel, LanguageModelLike
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore

from langmem_vault.graphs._options import (
    CompactOptions,
    ExtractOptions,
    InjectOptions,
    ReconcileOptions,
    RespondOptions,
    coerce_options,
)
from langmem_vault.graphs._state import MemoryContext, MemoryInput, MemoryOutput, MemoryState
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.nodes._common import MemoryNode, load_model
from langmem_vault.nodes._degrade import DEFAULT_INJECT_TIMEOUT, OnError
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.nodes._reconcile import create_reconcile_node
from langmem_vault.nodes._respond import DEFAULT_SYSTEM_PROMPT, create_respond_node

__all__ = ["SAME_AS_MODEL", "MemoryNodeNames", "add_memory", "build_memory_graph"]

ExtractMode = Literal["inline", "background"]

logger = logging.getLogger("langmem_vault.graphs")

MemoryNodeNames = Mapping[str, str]
#: ``summarizer`` default of both builders: compact summarises with the chat model the memory
#: nodes already have (``build_memory_graph``'s ``model``; ``add_memory``'s ``extractor`` when
#: it is a chat model or a model string), else writes an extractive summary without a model.
SAME_AS_MODEL: Any = "same-as-model"
DEFAULT_NAMES = {
    "inject": "inject",
    "extract": "extract",
    "reconcile": "reconcile",
    "compact": "compact",
}


def _summarizer(summarizer: Any, model: Any) -> Any:
    """Resolve :data:`SAME_AS_MODEL`: ``model`` when it is a chat model, else ``None``."""
    if summarizer is not SAME_AS_MODEL:
        return summarizer
    return model if isinstance(model, str | BaseChatModel) else None


def _memory_nodes(
    *,
    extractor: Any,
    summarizer: Any,
    store: BaseStore | None,
    namespaces: MemoryNamespaces,
    extract_mode: ExtractMode | None,
    queue: Any,
    inject_options: InjectOptions | Mapping[str, Any] | None,
    extract_options: ExtractOptions | Mapping[str, Any] | None,
    reconcile_options: ReconcileOptions | Mapping[str, Any] | None,
    compact_options: CompactOptions | Mapping[str, Any] | None,
    compact: bool,
    on_error: OnError,
    inject_timeout: float | None,
) -> dict[str, Any]:
    from langmem_vault.nodes._catch_up import CatchUpThenInject
    from langmem_vault.nodes._extract import create_extract_node

    # stacklevel 4: a deprecated dict's warning names the line that called the public builder
    inject = coerce_options(inject_options, InjectOptions, "inject_options", stacklevel=4)
    extract = coerce_options(extract_options, ExtractOptions, "extract_options", stacklevel=4)
    reconcile = coerce_options(
        reconcile_options, ReconcileOptions, "reconcile_options", stacklevel=4
    )
    compacting = (
        coerce_options(compact_options, CompactOptions, "compact_options", stacklevel=4)
        if compact
        else None
    )

    extract_node = create_extract_node(
        extractor,
        mode=extract_mode,
        queue=queue,
        store=store,
        namespaces=namespaces,
        on_error=on_error,
        **extract.as_kwargs(),
    )
    inject_node = create_inject_node(
        store=store,
        namespaces=namespaces,
        on_error=on_error,
        timeout=inject_timeout,
        **inject.as_kwargs(),
    )
    nodes: dict[str, Any] = {
        # A new thread's first turn extracts the user's unread tails before inject reads
        # (inline); in background mode it hands them to the workers and does not wait.
        "inject": MemoryNode(
            CatchUpThenInject(inject_node.node, extract_node, wait_seconds=0.0), name="inject"
        ),
        "extract": extract_node,
        "reconcile": create_reconcile_node(
            store=store, namespaces=namespaces, on_error=on_error, **reconcile.as_kwargs()
        ),
    }
    if compacting is not None:
        from langmem_vault.nodes._compact import create_compact_node

        nodes["compact"] = create_compact_node(
            summarizer,
            store=store,
            namespaces=namespaces,
            on_error=on_error,
            **compacting.as_kwargs(),
        )
    return nodes


def build_memory_graph(
    model: str | LanguageModelLike,
    /,
    *,
    store: BaseStore | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    extractor: Any = None,
    summarizer: Any = SAME_AS_MODEL,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    namespaces: MemoryNamespaces | None = None,
    extract_mode: ExtractMode | None = None,
    queue: Any = None,
    compact: bool = True,
    inject_options: InjectOptions | Mapping[str, Any] | None = None,
    respond_options: RespondOptions | Mapping[str, Any] | None = None,
    extract_options: ExtractOptions | Mapping[str, Any] | None = None,
    reconcile_options: ReconcileOptions | Mapping[str, Any] | None = None,
    compact_options: CompactOptions | Mapping[str, Any] | None = None,
    on_error: OnError = "degrade",
    inject_timeout: float | None = DEFAULT_INJECT_TIMEOUT,
    name: str = "memory_graph",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile ``inject -> respond -> extract -> reconcile -> compact`` over ``MemoryState``.

    - ``model``: the chat model answering (``init_chat_model`` string or object);
    - ``extractor``: what extract calls (default: ``model``; pass an ``OfflineExtractor`` for
      no LLM); ``summarizer``: what compact calls (default :data:`SAME_AS_MODEL`: ``model``;
      ``None`` for an extractive summary without a model);
    - ``extract_mode``: ``"inline"`` or ``"background"``; the default (``None``, the same in
      :func:`add_memory` and ``create_extract_node``) is background when a ``queue`` (a DSN or
      job queue) is given, so the turn does not wait for extraction, else inline;
    - ``*_options``: typed options of each node (:class:`InjectOptions`...);
    - ``on_error`` / ``inject_timeout``: when memory fails (the store, the embedder, the
      database, a memory model call) or inject takes longer than ``inject_timeout`` seconds,
      the turn goes on without memory, and ``memory_status``, a ``memory_error`` custom
      stream event and one WARNING line say why (:mod:`langmem_vault.nodes._degrade`);
      ``on_error="raise"`` raises instead.

    Runs need a ``thread_id`` in ``config["configurable"]`` and a user id, either in
    ``configurable`` or in LangGraph's run context (``context={"user_id": ...}``, the graph's
    ``context_schema`` is :class:`~langmem_vault.graphs._state.MemoryContext`). The input is
    ``{"messages": [...]}`` (:class:`~langmem_vault.graphs._state.MemoryInput`); the output is
    the state without the internal ``extraction`` key.

    >>> graph = build_memory_graph("openai:gpt-4o-mini", store=store)  # doctest: +SKIP
    >>> graph.invoke({"messages": [("user", "hi")]}, config)            # doctest: +SKIP
    """
    chat = load_model(model)
    ns = namespaces or MemoryNamespaces()
    nodes = _memory_nodes(
        extractor=extractor if extractor is not None else chat,
        summarizer=_summarizer(summarizer, chat),
        store=store,
        namespaces=ns,
        extract_mode=extract_mode,
        queue=queue,
        inject_options=inject_options,
        extract_options=extract_options,
        reconcile_options=reconcile_options,
        compact_options=compact_options,
        compact=compact,
        on_error=on_error,
        inject_timeout=inject_timeout,
    )
    respond_kwargs = coerce_options(respond_options, RespondOptions, "respond_options")
    respond = create_respond_node(
        chat, system_prompt=system_prompt, store=store, namespaces=ns, **respond_kwargs.as_kwargs()
    )
    # The input and context schemas are what LangGraph Studio shows as its form: messages and a
    # user id, not the keys the nodes write.
    builder = StateGraph(
        MemoryState,
        context_schema=MemoryContext,
        input_schema=MemoryInput,
        output_schema=MemoryOutput,
    )
    builder.add_node("inject", nodes["inject"])
    builder.add_node("respond", respond)
    builder.add_node("extract", nodes["extract"])
    builder.add_node("reconcile", nodes["reconcile"])
    order = ["inject", "respond", "extract", "reconcile"]
    if compact:
        builder.add_node("compact", nodes["compact"])
        order.append("compact")
    builder.add_edge(START, order[0])
    for first, second in itertools.pairwise(order):
        builder.add_edge(first, second)
    builder.add_edge(order[-1], END)
    return builder.compile(checkpointer=checkpointer, store=store, name=name)


def _redirect_end(path: Any, target: str) -> RunnableLambda[Any, Any]:
    """Wrap a conditional edge's router so that END goes to ``target`` instead."""

    def swap(result: Any) -> Any:
        if isinstance(result, list):
            return [target if r == END else r for r in result]
        return target if result == END else result

    def route(state: Any, config: RunnableConfig) -> Any:
        return swap(path.invoke(state, config))

    async def aroute(state: Any, config: RunnableConfig) -> Any:
        return swap(await path.ainvoke(state, config))

    return RunnableLambda(route, afunc=aroute, name=getattr(path, "name", None) or "route")


def _check_builder(builder: Any, agent_node: str) -> None:
    """Refuse what would run without error and without memory reaching the model."""
    if isinstance(builder, Pregel):
        raise TypeError(
            "add_memory needs the StateGraph builder, not a compiled graph: call "
            "add_memory(builder, 'agent', ...) before builder.compile(). To give memory to a "
            "prebuilt agent (create_react_agent / create_agent), add it as a node of your own "
            "StateGraph whose state subclasses MemoryState, and put state['memory_context'] in "
            "its prompt."
        )
    if not isinstance(builder, StateGraph):
        raise TypeError(f"add_memory needs a langgraph StateGraph, got {type(builder).__name__}")
    if agent_node not in builder.nodes:
        raise ValueError(f"agent node {agent_node!r} is not in the graph: add it first")
    seen = builder.schemas.get(builder.nodes[agent_node].input_schema, {})
    if "memory_context" not in seen:
        raise ValueError(
            f"the state of agent node {agent_node!r} has no 'memory_context' key, so the "
            "memories inject finds would never reach the model. Subclass MemoryState for the "
            "graph's state (class State(MemoryState): ...) and put state['memory_context'] in "
            "the agent's system prompt."
        )


def add_memory(
    builder: StateGraph[Any, Any, Any, Any],
    agent_node: str,
    /,
    *,
    extractor: Any,
    summarizer: Any = SAME_AS_MODEL,
    store: BaseStore | None = None,
    namespaces: MemoryNamespaces | None = None,
    extract_mode: ExtractMode | None = None,
    queue: Any = None,
    compact: bool = True,
    names: MemoryNodeNames | None = None,
    inject_options: InjectOptions | Mapping[str, Any] | None = None,
    extract_options: ExtractOptions | Mapping[str, Any] | None = None,
    reconcile_options: ReconcileOptions | Mapping[str, Any] | None = None,
    compact_options: CompactOptions | Mapping[str, Any] | None = None,
    on_error: OnError = "degrade",
    inject_timeout: float | None = DEFAULT_INJECT_TIMEOUT,
) -> StateGraph[Any, Any, Any, Any]:
    """Wire memory around an app's agent node in its (uncompiled) ``StateGraph``.

    ``START -> agent`` becomes ``START -> inject -> agent``; every way the graph could end
    (plain edges to END, routers returning END such as ``tools_condition``, and nodes with no
    way out) now goes
    through ``extract -> reconcile -> compact -> END``. ``summarizer`` defaults to the
    ``extractor`` when that is a chat model (``None``: an extractive summary without a model);
    ``extract_mode``, the options, ``on_error`` and ``inject_timeout`` are those of
    :func:`build_memory_graph`.

    The agent's state must have a ``memory_context`` key (subclass
    :class:`~langmem_vault.graphs._state.MemoryState`), and the agent must put
    ``state["memory_context"]`` in its system prompt: otherwise memories would be learnt and
    never shown to the model, so ``add_memory`` raises. Pass the builder, before ``compile()``.

    >>> builder = StateGraph(MemoryState)                           # doctest: +SKIP
    >>> builder.add_node("agent", my_agent).add_edge(START, "agent")  # doctest: +SKIP
    >>> add_memory(builder, "agent", extractor=OfflineExtractor())  # doctest: +SKIP
    >>> graph = builder.compile(store=store, checkpointer=saver)     # doctest: +SKIP
    """
    _check_builder(builder, agent_node)
    label = {**DEFAULT_NAMES, **(names or {})}
    taken = [n for key, n in label.items() if n in builder.nodes and (compact or key != "compact")]
    if taken:
        raise ValueError(f"node name(s) {taken} already used; pass names={{...}} to rename")
    if (START, agent_node) not in builder.edges:
        raise ValueError(
            f"add_memory needs an edge START -> {agent_node!r} (inject runs before the agent)"
        )
    nodes = _memory_nodes(
        extractor=extractor,
        summarizer=_summarizer(summarizer, extractor),
        store=store,
        namespaces=namespaces or MemoryNamespaces(),
        extract_mode=extract_mode,
        queue=queue,
        inject_options=inject_options,
        extract_options=extract_options,
        reconcile_options=reconcile_options,
        compact_options=compact_options,
        compact=compact,
        on_error=on_error,
        inject_timeout=inject_timeout,
    )
    tail = ["extract", "reconcile", *(["compact"] if compact else [])]
    for key in ["inject", *tail]:
        # input_schema adds MemoryState's channels even when the app's state lacks them.
        builder.add_node(label[key], nodes[key], input_schema=MemoryState)
    # Run inject once per user turn: only the START edge goes through it, not tool loops.
    builder.edges.discard((START, agent_node))
    builder.add_edge(START, label["inject"])
    builder.add_edge(label["inject"], agent_node)
    first = label[tail[0]]
    memory_nodes = {label[k] for k in ["inject", *tail]}
    # A node with no way out (no edge, router or Command destinations) ends the run: it too
    # now goes through extract.
    sources = {start for start, _ in builder.edges} | set(builder.branches)
    sources |= {s for starts, _ in builder.waiting_edges for s in starts}
    for name, node_spec in builder.nodes.items():
        if name not in memory_nodes and name not in sources and not node_spec.ends:
            builder.edges.add((name, first))
    for start, end in list(builder.edges):
        if end == END and start not in {label[k] for k in tail}:
            builder.edges.discard((start, end))
            builder.edges.add((start, first))
    for source, branches in builder.branches.items():
        for branch_name, spec in list(branches.items()):
            ends: Any = spec.ends
            if isinstance(ends, dict):
                new_ends = {k: (first if v == END else v) for k, v in ends.items()}
                branches[branch_name] = spec._replace(ends=new_ends)
                continue
            branches[branch_name] = spec._replace(path=_redirect_end(spec.path, first))
            logger.debug("add_memory: branch %s.%s now ends through %s", source, branch_name, first)
    for a, b in itertools.pairwise(tail):
        builder.add_edge(label[a], label[b])
    builder.add_edge(label[tail[-1]], END)
    return builder
