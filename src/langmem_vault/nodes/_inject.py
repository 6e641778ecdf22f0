"""inject: put standing instructions, the most useful facts and recent episodes in front of
the model, within a token budget, as a state key (``memory_context``), not a message.

One store round trip per turn on VaultStore: the instruction, fact and episode reads go in
one ``batch`` (only the fact search embeds the user message), and the fact searches return
each candidate's usage record (its last access and citations count in the score) from the
same statement. Other stores take a second round trip for the usage records. Usage counts are
written in the background, to records of their own: injecting a memory never rewrites it.

>>> from langgraph.graph import StateGraph, START
>>> from langmem_vault.graphs._state import MemoryState
>>> builder = StateGraph(MemoryState)
>>> builder = builder.add_node("inject", create_inject_node()).add_edge(START, "inject")
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.store.base import BaseStore, Item, SearchItem, SearchOp

from langmem_vault.db._steps import arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.extraction._messages import query_text
from langmem_vault.memory._models import Instruction, utcnow
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.injected import (
    InjectedMemory,
    episode_entry,
    fact_entry,
    instruction_entry,
)
from langmem_vault.memory._recall.private_recall import (
    DEFAULT_MAX_PRIVATE,
    PrivateRanker,
    open_private,
    private_search_op,
)
from langmem_vault.memory._recall.recall_plan import (
    Branch,
    RecallFound,
    RecallQuery,
    default_branches,
    rank_found,
    read_found,
    recall_ops,
)
from langmem_vault.memory._recall.retrieval import applicable_instructions, newest_plan, scan_op
from langmem_vault.memory._recall.scoring import (
    DEFAULT_WEIGHTS,
    ScoredMemory,
    ScoringWeights,
    as_datetime,
    balance_categories,
    score_parts,
)
from langmem_vault.memory._recall.time_filter import date_label
from langmem_vault.memory._recall.usage import Target, split_usage, usage_search_op
from langmem_vault.memory._sealing import Keyring, default_keyring
from langmem_vault.nodes._common import MemoryNode, aobserved, observed, resolve_store
from langmem_vault.nodes._degrade import DEFAULT_INJECT_TIMEOUT, Degrade, OnError
from langmem_vault.nodes._documents import append_documents, render_documents
from langmem_vault.store._mirrors import runs_mirror_search
from langmem_vault.telemetry._tracing import annotate

__all__ = [
    "InjectNode",
    "Injection",
    "MemoryNode",
    "create_inject_node",
    "latest_user_text",
    "resolve_store",
]

logger = logging.getLogger("langmem_vault.inject")

TokenCounter = Callable[[str], int]
#: the memories one turn injected, to stamp as accessed in its store
Stamps = tuple[BaseStore, list[tuple[tuple[str, ...], str]]]

HEADER = "## What you remember about this user"
INSTRUCTIONS_HEADER = (
    "Standing instructions from the user (follow them; if two conflict, the higher priority wins):"
)
FACTS_HEADER = "Facts (cite the ones you use as [M1], [M2]):"
PENDING = "pending_confirmation"
#: pending facts may join when their relevance is within this of the best active fact's
PENDING_MARGIN = 0.02
DEFAULT_MAX_PENDING = 2
EPISODES_HEADER = "Recent conversations:"


def latest_user_text(messages: Sequence[BaseMessage]) -> str | None:
    """What inject searches with: the last human message's text parts, cleaned and bounded
    to what search accepts (:func:`~langmem_vault.extraction._messages.query_text`), or None
    when the user has said nothing searchable."""
    return query_text(messages)


@lru_cache(maxsize=4096)
def _default_counter(text: str) -> int:
    # A pure function of the line; most lines (headers, the same facts) recur turn after
    # turn, and building a message per line cost about a third of rendering.
    return count_tokens_approximately([SystemMessage(text)])


def make_token_counter(counter: TokenCounter | BaseLanguageModel[Any] | None) -> TokenCounter:
    """A text -> tokens function: langchain-core's approximation, a model's, or your own."""
    if counter is None:
        return _default_counter
    if isinstance(counter, BaseLanguageModel):
        return counter.get_num_tokens
    return counter


@dataclass(frozen=True)
class Injection:
    """What inject selected for this turn."""

    context: str
    refs: dict[str, str]
    instructions: list[tuple[str, Instruction]]
    facts: list[ScoredMemory]
    episodes: list[ScoredMemory]
    preview: list[str] = field(default_factory=list)
    #: the rendered memories as data, in the order of the text (see ``memory.injected``)
    memories: list[InjectedMemory] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.instructions) + len(self.facts) + len(self.episodes)


@dataclass(frozen=True)
class InjectOptions:
    """Settings of an inject node (see :func:`create_inject_node`)."""

    namespaces: MemoryNamespaces
    max_tokens: int
    max_facts: int
    max_episodes: int
    max_instructions: int
    candidates: int
    max_share: float
    include_private: bool
    weights: ScoringWeights
    max_private: int = DEFAULT_MAX_PRIVATE
    max_pending: int = DEFAULT_MAX_PENDING


def _episode_score(value: Mapping[str, Any], now: datetime, weights: ScoringWeights) -> float:
    # Recent and important first; episodes carry no confidence.
    ended = as_datetime(value.get("ended_at"))
    age_days = max((now - ended).total_seconds(), 0.0) / 86400.0 if ended else 365.0
    importance = float(value.get("importance", 0.5))
    return importance * 0.5 + 0.5 / (1.0 + age_days / weights.decay_days)


def _fact_line(alias: str, value: Mapping[str, Any]) -> str:
    # A pending fact says so first: the model should hedge ("you mentioned...") or ask.
    mark = "(unconfirmed) " if value.get("status") == PENDING else ""
    about = str(value.get("category", "general"))
    when = date_label(value)  # "since May 2023", "said 3 Jun 2024"; nothing when unknown
    if when:
        about = f"{about}; {when}"
    return f"- [{alias}] {mark}{value.get('text', '')} ({about})"


def _with_pending(scored: list[ScoredMemory], limit: int) -> list[ScoredMemory]:
    """Active facts, plus at most ``limit`` pending ones that match the message at least as well
    as the best active fact does (nothing better matches): a user who never confirms still
    benefits, and a pending guess never crowds out what is confirmed."""
    active = [m for m in scored if m.value.get("status", "active") != PENDING]
    best = max((m.relevance or 0.0 for m in active), default=0.0)
    pending = [
        m
        for m in scored
        if m.value.get("status") == PENDING
        and m.relevance is not None
        and m.relevance >= best - PENDING_MARGIN
    ]
    pending.sort(key=lambda m: m.relevance or 0.0, reverse=True)
    return active + pending[:limit]


def _episode_line(alias: str, value: Mapping[str, Any]) -> str:
    ended = as_datetime(value.get("ended_at"))
    when = ended.date().isoformat() if ended else "earlier"
    outcome = f" Outcome: {value['outcome']}." if value.get("outcome") else ""
    return f"- [{alias}] {when}: {value.get('summary', '')}{outcome}"


def render(
    instructions: Sequence[tuple[str, Instruction]],
    facts: Sequence[ScoredMemory],
    episodes: Sequence[ScoredMemory],
    *,
    max_tokens: int,
    count: TokenCounter,
    now: datetime | None = None,
    weights: ScoringWeights = DEFAULT_WEIGHTS,
) -> Injection:
    """Render the memory section best-first until the token budget is spent.

    Each line is counted on its own; the sum over-estimates the block, so the block never
    exceeds ``max_tokens``. Each fact's and episode's entry keeps its key and score parts
    (``score_parts`` at ``now``) for the injection trace.
    """
    moment = now or utcnow()
    lines: list[str] = []
    used = 0
    refs: dict[str, str] = {}
    kept_i: list[tuple[str, Instruction]] = []
    kept_f: list[ScoredMemory] = []
    kept_e: list[ScoredMemory] = []
    memories: list[InjectedMemory] = []

    def fits(*new: str) -> bool:
        nonlocal used
        cost = sum(count(line) for line in new)
        if used + cost > max_tokens:
            return False
        used += cost
        lines.extend(new)
        return True

    if not fits(HEADER):
        return Injection("", {}, [], [], [])
    pending_header: str | None = INSTRUCTIONS_HEADER
    for key, instruction in instructions:
        line = f"- (priority {instruction.priority}) {instruction.text}"
        if not fits(*([pending_header] if pending_header else []), line):
            break
        pending_header = None
        kept_i.append((key, instruction))
        memories.append(instruction_entry(instruction))
    pending_header = FACTS_HEADER
    for memory in facts:
        alias = f"M{len(refs) + 1}"
        line = _fact_line(alias, memory.value)
        if not fits(*([pending_header] if pending_header else []), line):
            break
        pending_header = None
        refs[alias] = memory.key
        kept_f.append(memory)
        parts = score_parts(memory, moment, weights)
        memories.append(fact_entry(alias, memory.value, key=memory.key, scores=parts))
    pending_header = EPISODES_HEADER
    for memory in episodes:
        alias = f"M{len(refs) + 1}"
        line = _episode_line(alias, memory.value)
        if not fits(*([pending_header] if pending_header else []), line):
            break
        pending_header = None
        refs[alias] = memory.key
        kept_e.append(memory)
        parts = {"score": round(memory.score, 4)}
        memories.append(episode_entry(alias, memory.value, key=memory.key, scores=parts))
    if not (kept_i or kept_f or kept_e):
        return Injection("", {}, [], [], [])
    preview = [i.text for _, i in kept_i] + [str(m.value.get("text", "")) for m in kept_f]
    preview += [str(m.value.get("summary", "")) for m in kept_e]
    return Injection(
        context="\n".join(lines),
        refs=refs,
        instructions=kept_i,
        facts=kept_f,
        episodes=kept_e,
        preview=[p if len(p) <= 80 else p[:77] + "..." for p in preview[:5]],
        memories=memories,
    )


@dataclass(frozen=True)
class Candidates:
    """What one inject turn read from the store, before ranking."""

    message: str | None
    instructions: list[tuple[str, Instruction]]
    #: recall's candidates (``memory.recall.recall_plan``)
    facts: RecallFound
    episodes: list[Any]
    private: list[Item]


def candidates_plan(
    messages: Sequence[BaseMessage],
    config: Mapping[str, Any] | None,
    opts: InjectOptions,
    now: datetime,
    *,
    joined_usage: bool = False,
    branches: Sequence[Branch] = (),
) -> StorePlan[Candidates]:
    """The store reads of one inject turn, in one batch (driven sync or async): recall's ops
    (``memory.recall.recall_plan``), the standing instructions, the recent episodes and the
    owner's private facts.

    ``joined_usage``: the store runs ``MirrorSearchOp`` (``store.mirrors``), so the fact
    searches bring their usage records along; else a second batch reads them.
    """
    ns = opts.namespaces.resolve(config)
    message = latest_user_text(messages)
    request = RecallQuery(
        ns.semantic, message, candidates=opts.candidates, joined_usage=joined_usage
    )
    recall = recall_ops(request, branches)
    # Private facts are not in the index: read them by filter, rank them in process.
    private_op: Any = private_search_op(ns.semantic, limit=opts.max_private)
    if joined_usage:
        private_op = usage_search_op(private_op)
    # list[Any]: a MirrorSearchOp is the store's own op, outside langgraph's Op union
    ops: list[Any] = [
        SearchOp(ns.instructions, filter={"active": True}, limit=100, refresh_ttl=False),
        # Recent episodes without a query (one embedding per turn is enough): the first page
        # of the namespace, sorted below by the episodes' own end time.
        scan_op(ns.episodes),
        *recall,
        *([private_op] if opts.include_private else []),
    ]
    results = yield Batch(ops)
    instruction_items, episode_items = results[:2]
    private: list[Any] = list(results[2 + len(recall)]) if opts.include_private else []
    usage: dict[Target, dict[str, Any]] = {}
    if joined_usage:
        private, usage = split_usage(private)
    found = yield from read_found(request, results[2 : 2 + len(recall)], branches, also=private)
    if usage:
        found = replace(found, usage={**found.usage, **usage})
    recent = yield from newest_plan(
        ns.episodes, "ended_at", max(opts.max_episodes * 5, 10), first=episode_items
    )
    instructions = applicable_instructions(instruction_items, message, now)
    return Candidates(
        message=message,
        instructions=instructions[: opts.max_instructions],
        facts=found,
        episodes=list(recent),
        private=private,
    )


def _public(found: RecallFound, private: Sequence[SearchItem]) -> RecallFound:
    """The search's candidates without private facts: those rank from their opened copy
    (a sealed one nobody opened carries only a placeholder and is never shown)."""
    opened = {(tuple(p.namespace), p.key) for p in private}
    pool = {
        target: c
        for target, c in found.pool.items()
        if target not in opened and not c.item.value.get("private") and "enc" not in c.item.value
    }
    return replace(found, pool=pool)


def select(
    found: Candidates,
    private: Sequence[SearchItem],
    opts: InjectOptions,
    count: TokenCounter,
    now: datetime,
    *,
    session: str | None = None,
) -> Injection:
    """Rank the candidates as :meth:`MemoryVault.recall
    <langmem_vault.memory._vault.MemoryVault.recall>` does (public search results and the
    scored private facts in one fusion) and render the best within the budget. ``session``
    (the thread id): this session's short-term memories compete at full weight (see
    ``memory.layers``)."""
    use_relevance = found.message is not None
    scored = rank_found(
        _public(found.facts, private),
        now,
        weights=opts.weights,
        include_pending=use_relevance and opts.max_pending > 0,
        session=session,
        also=[p for p in private if "enc" not in p.value],
    )
    scored = _with_pending(scored, opts.max_pending)
    facts = balance_categories(scored, opts.max_facts, max_share=opts.max_share)
    episodes = sorted(
        (
            ScoredMemory(
                i.key,
                i.value,
                _episode_score(i.value, now, opts.weights),
                namespace=tuple(i.namespace),
            )
            for i in found.episodes
        ),
        key=lambda m: m.score,
        reverse=True,
    )[: opts.max_episodes]
    injection = render(
        found.instructions,
        facts,
        episodes,
        max_tokens=opts.max_tokens,
        count=count,
        now=now,
        weights=opts.weights,
    )
    annotate(
        candidates=len(found.facts.pool)
        + len(private)
        + len(found.episodes)
        + len(found.instructions),
        injected=injection.count,
    )
    return injection


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
        return candidates_plan(
            messages,
            config,
            self.options,
            now,
            joined_usage=usage,
            branches=default_branches(store),
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
    ``max_share`` caps one category's share of the facts. ``include_private`` (default on)
    lets the owner's own private facts in: up to ``max_private`` of them are read by filter,
    opened with ``keyring`` (default: ``$LANGMEM_VAULT_KEY``) and ranked in process against
    the message (see :mod:`langmem_vault.memory._recall.private_recall`); they are never in the
    index.
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
