"""inject: put standing instructions, the most useful facts and recent episodes in front of
the model, within a token budget, as a state key (``memory_context``), not a message.

One store round trip per turn on VaultStore: the instruction, fact and episode reads go in
one ``batch`` (only the fact search embeds the user message), and the fact searches return
each candidate's usage record (its last access and citations count in the score) from the
same statement. Other stores take a second round trip for the usage records. With a
message, on a store with a pool, the reads that need no query vector go in a batch of their
own that runs on another connection while the message is embedded
(:class:`~langmem_vault.db._steps.Together`): the turn waits for the longer of the two.
Usage counts are written in the background, to records of their own: injecting a memory
never rewrites it; the node hands them over after its body, from the caller's thread, and
only for a turn that used its memories. The reads and the ranking are in
:mod:`~langmem_vault.nodes._inject_select`, the section's text in
:mod:`~langmem_vault.nodes._inject_render`.

>>> from langgraph.graph import StateGraph, START
>>> from langmem_vault.graphs._state import MemoryState
>>> builder = StateGraph(MemoryState)
>>> builder = builder.add_node("inject", create_inject_node()).add_edge(START, "inject")
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseLanguageModel
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.store.base import BaseStore

from langmem_vault.db._steps import arun_steps, run_steps
from langmem_vault.db._store_plans import StorePlan, runs_batches_at_once
from langmem_vault.memory._models import utcnow
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.entity_branch import default_branches
from langmem_vault.memory._recall.private_recall import (
    DEFAULT_MAX_PRIVATE,
    PrivateRanker,
    open_private,
)
from langmem_vault.memory._recall.scoring import DEFAULT_WEIGHTS, ScoringWeights
from langmem_vault.memory._sealing import Keyring, default_keyring
from langmem_vault.nodes._common import MemoryNode, aobserved, observed, resolve_store
from langmem_vault.nodes._degrade import DEFAULT_INJECT_TIMEOUT, Degrade, OnError
from langmem_vault.nodes._documents import append_documents, render_documents
from langmem_vault.nodes._inject_render import Injection, TokenCounter, make_token_counter
from langmem_vault.nodes._inject_select import (
    DEFAULT_MAX_PENDING,
    Candidates,
    InjectOptions,
    candidates_plan,
    latest_user_text,
    select,
)
from langmem_vault.store._mirrors import runs_mirror_search

__all__ = [
    "InjectNode",
    "Injection",
    "MemoryNode",
    "create_inject_node",
    "latest_user_text",
    "make_token_counter",
    "resolve_store",
]

logger = logging.getLogger("langmem_vault.inject")

#: the memories one turn injected, to stamp as accessed in its store
Stamps = tuple[BaseStore, list[tuple[tuple[str, ...], str]]]


def _thread(config: Mapping[str, Any] | None) -> str | None:
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return str(thread) if thread else None


class InjectNode:
    """The inject node (build it with :func:`create_inject_node`)."""

    def __init__(
        self,
        *,
        store: BaseStore | None,
        options: InjectOptions,
        token_counter: TokenCounter,
        recorder: AccessRecorder,
        emit_events: bool,
        keyring: Keyring | None = None,
        ranker: PrivateRanker | None = None,
        documents: BaseRetriever | None = None,
        document_tokens: int = 0,
        guard: Degrade | None = None,
    ) -> None:
        self.guard = guard or Degrade("inject", timeout=DEFAULT_INJECT_TIMEOUT)
        self.store = store
        self.documents = documents
        self.document_tokens = document_tokens
        self.keyring = keyring
        self.ranker = ranker or PrivateRanker()
        self.options = options
        self.count = token_counter
        self.recorder = recorder
        self.emit_events = emit_events

    def _targets(self, injection: Injection) -> list[tuple[tuple[str, ...], str]]:
        targets = [(m.namespace, m.key) for m in injection.facts]
        targets += [(m.namespace, m.key) for m in injection.episodes]
        return targets

    def _emit(self, injection: Injection) -> None:
        if not self.emit_events:
            return
        try:
            writer = get_stream_writer()
        except RuntimeError:  # called outside a graph run
            return
        writer(
            {
                "type": "memory_injected",
                "count": injection.count,
                "facts": len(injection.facts),
                "episodes": len(injection.episodes),
                "instructions": len(injection.instructions),
                "preview": injection.preview,
            }
        )

    def _update(self, injection: Injection, documents: Sequence[Document] = ()) -> dict[str, Any]:
        self._emit(injection)
        section = render_documents(documents, max_tokens=self.document_tokens, count=self.count)
        return {
            "memory_context": append_documents(injection.context, section),
            "memory_refs": injection.refs,
            "memory_items": injection.memories,
        }

    def _instruction_targets(
        self, injection: Injection, config: RunnableConfig
    ) -> list[tuple[tuple[str, ...], str]]:
        if not injection.instructions:
            return []
        ns = self.options.namespaces.resolve(config).instructions
        return [(ns, key) for key, _ in injection.instructions]

    def _plan(
        self, state: Mapping[str, Any], config: RunnableConfig, store: BaseStore, now: datetime
    ) -> StorePlan[Candidates]:
        # Usage records come joined to the searches where the store can (one round trip).
        messages = state.get("messages", [])
        usage = runs_mirror_search(store)
        # The message's embedding need not wait for the reads that do not use it.
        embeds = getattr(store, "embeddings", None) is not None
        return candidates_plan(
            messages,
            config,
            self.options,
            now,
            joined_usage=usage,
            branches=default_branches(store),
            apart=store if embeds and runs_batches_at_once(store) else None,
        )

    def invoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Run inject synchronously; returns the state update (no memory when it fails or
        runs out of time: :mod:`~langmem_vault.nodes._degrade`). The access stamps are handed
        to the recorder after the body, in this thread (:meth:`Degrade.run`'s ``then``)."""
        stamps: list[Stamps] = []
        return observed(
            self.guard,
            self.store,
            config,
            lambda: self._invoke(state, config, stamps),
            lambda: self._stamp(stamps),
        )

    async def ainvoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Run inject asynchronously; returns the state update."""
        stamps: list[Stamps] = []
        return await aobserved(
            self.guard,
            self.store,
            config,
            lambda: self._ainvoke(state, config, stamps),
            lambda: self._astamp(stamps),
        )

    def _stamps(self, store: BaseStore, injection: Injection, config: RunnableConfig) -> Stamps:
        return store, self._targets(injection) + self._instruction_targets(injection, config)

    def _stamp(self, stamps: Sequence[Stamps]) -> None:
        for store, targets in stamps:
            self.recorder.record(store, targets)

    async def _astamp(self, stamps: Sequence[Stamps]) -> None:
        for store, targets in stamps:
            await self.recorder.arecord(store, targets)

    def _invoke(
        self, state: Mapping[str, Any], config: RunnableConfig, stamps: list[Stamps]
    ) -> dict[str, Any]:
        store = resolve_store(self.store)
        now = utcnow()
        plan = self._plan(state, config, store, now)
        found = run_steps(plan, store)
        opened = open_private(found.private, self.keyring)
        private = self.ranker.rank(store, found.message, opened)
        injection = select(found, private, self.options, self.count, now, session=_thread(config))
        stamps.append(self._stamps(store, injection, config))
        if self.documents is None or not found.message:
            return self._update(injection)
        return self._update(injection, self.documents.invoke(found.message, config))

    async def _ainvoke(
        self, state: Mapping[str, Any], config: RunnableConfig, stamps: list[Stamps]
    ) -> dict[str, Any]:
        store = resolve_store(self.store)
        now = utcnow()
        plan = self._plan(state, config, store, now)
        found = await arun_steps(plan, store)
        opened = open_private(found.private, self.keyring)
        private = await self.ranker.arank(store, found.message, opened)
        injection = select(found, private, self.options, self.count, now, session=_thread(config))
        stamps.append(self._stamps(store, injection, config))
        if self.documents is None or not found.message:
            return self._update(injection)
        return self._update(injection, await self.documents.ainvoke(found.message, config))


def create_inject_node(
    *,
    store: BaseStore | None = None,
    namespaces: MemoryNamespaces | None = None,
    max_tokens: int = 1000,
    token_counter: TokenCounter | BaseLanguageModel[Any] | None = None,
    max_facts: int = 20,
    max_episodes: int = 3,
    max_instructions: int = 10,
    candidates: int = 50,
    search_without_names: bool = False,
    max_share: float = 0.4,
    include_private: bool = True,
    max_private: int = DEFAULT_MAX_PRIVATE,
    max_pending: int = DEFAULT_MAX_PENDING,
    keyring: Keyring | None = None,
    weights: ScoringWeights = DEFAULT_WEIGHTS,
    record_access: AccessRecorder | bool = True,
    emit_events: bool = True,
    documents: BaseRetriever | None = None,
    document_tokens: int = 400,
    on_error: OnError = "degrade",
    timeout: float | None = DEFAULT_INJECT_TIMEOUT,
    name: str = "inject",
) -> MemoryNode:
    """Build the inject node: a runnable with native sync and async paths.

    ``max_tokens`` bounds the rendered section (counted with langchain-core's
    ``count_tokens_approximately`` unless ``token_counter`` is a model or a function).
    ``max_share`` caps one category's share of the facts. ``search_without_names`` adds, for
    a message that names someone, recall's second search for the message without the names
    (docs/recall.md): better facts where every memory starts with a speaker's name
    (transcripts), at the cost of a second query embedding and search on those turns.
    ``include_private`` (default on) lets the owner's own private facts in: up to
    ``max_private`` of them are read by filter, opened with ``keyring`` (default:
    ``$LANGMEM_VAULT_KEY``) and ranked in process against the message (see
    :mod:`langmem_vault.memory._recall.private_recall`); they are never in the index.
    Up to ``max_pending`` facts still waiting for confirmation join when they match the
    message at least as well as the best confirmed fact, marked ``unconfirmed``; 0 turns
    that off.
    ``documents`` (any LangChain retriever, such as a langchain-postgres ``PGVectorStore``'s
    ``as_retriever()``) is asked with the user's message each turn; what it returns follows
    the memories as ``[D1]``, ``[D2]``..., within ``document_tokens`` more tokens (see
    :mod:`langmem_vault.nodes._documents`).
    When the store, the embedder or the database fails, or the reads take longer than
    ``timeout`` seconds (None: no limit), the turn goes on without memory
    (:mod:`~langmem_vault.nodes._degrade`); ``on_error="raise"`` raises instead.
    The store comes from ``store`` or from the graph (``compile(store=...)``). The returned
    runnable's ``.node`` is the :class:`InjectNode`; ``node.node.recorder.flush()`` waits for
    the access stamps.

    >>> node = create_inject_node(max_tokens=500)
    >>> node.name
    'inject'
    """
    if max_tokens < 50:
        raise ValueError(f"max_tokens must be at least 50, got {max_tokens}")
    if max_private < 0:
        raise ValueError(f"max_private must be >= 0, got {max_private}")
    if not 0.0 < max_share <= 1.0:
        raise ValueError(f"max_share must be in (0, 1], got {max_share}")
    # 0 turns a section off; a negative count would silently mean "none" too, so refuse it.
    for setting, value, least in (
        ("max_facts", max_facts, 0),
        ("max_episodes", max_episodes, 0),
        ("max_instructions", max_instructions, 0),
        ("candidates", candidates, 1),
        ("document_tokens", document_tokens, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{setting} must be an int >= {least}, got {value!r}")
    if isinstance(record_access, AccessRecorder):
        recorder = record_access
    else:
        recorder = _NullRecorder() if not record_access else AccessRecorder()
    options = InjectOptions(
        namespaces=namespaces or MemoryNamespaces(),
        max_tokens=max_tokens,
        max_facts=max_facts,
        max_episodes=max_episodes,
        max_instructions=max_instructions,
        candidates=max(candidates, max_facts),
        search_without_names=search_without_names,
        max_share=max_share,
        include_private=include_private,
        weights=weights,
        max_private=max_private,
        max_pending=max_pending,
    )
    node = InjectNode(
        store=store,
        options=options,
        token_counter=make_token_counter(token_counter),
        recorder=recorder,
        emit_events=emit_events,
        # Without an explicit keyring, $LANGMEM_VAULT_KEY (when set) opens sealed facts.
        keyring=keyring if keyring is not None else default_keyring(),
        documents=documents,
        document_tokens=document_tokens,
        guard=Degrade("inject", on_error, timeout),
    )
    return MemoryNode(node, name=name)


class _NullRecorder(AccessRecorder):
    def record(self, store: BaseStore, targets: Any, *, cited: Any = (), uncited: Any = ()) -> None:
        return None

    async def arecord(
        self, store: BaseStore, targets: Any, *, cited: Any = (), uncited: Any = ()
    ) -> None:
        return None
