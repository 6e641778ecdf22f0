"""``MemoryMiddleware``: memory for ``langchain.agents.create_agent``, from the memory nodes.

langchain ships no store-backed memory middleware; this one runs our nodes at the agent's
hooks, so the agent and a memory graph store and read the same things:

- ``before_agent`` (once per user turn, not on every tool loop): a new thread first catches
  up with the user's earlier threads (their unextracted tails run now, on the job queue; see
  :mod:`langmem_vault.nodes._extract`), then inject selects the memory block into the state
  (``memory_context``, ``memory_refs``, ``memory_items``);
- ``wrap_model_call``: the block goes into the system message of every model call of the
  turn (read from the state: no store round trip per tool loop), with the memories attached
  as data as the respond node does (:func:`~langmem_vault.nodes._respond.memory_system_message`);
- ``before_model`` (only with ``compact=CompactOptions(...)``): the compact node folds old
  turns into ``running_summary`` and never separates a tool call from its ToolMessages;
- ``after_agent``: the memories the final answer cites go to ``cited`` and count as
  utility signals, as after the respond node (``record_utility``); then the extract node
  enqueues the turn on the durable queue (``queue=``), or extracts inline without one.

The store is the agent's own (``create_agent(store=...)``) unless ``store=`` is given; the
thread is the agent checkpointer's ``thread_id``; the user comes from ``configurable
["user_id"]`` or the run context (``context={"user_id": ...}``), as for the nodes.

>>> from langmem_vault.offline._extractor import OfflineExtractor
>>> MemoryMiddleware(OfflineExtractor(use_spacy=False)).name
'MemoryMiddleware'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AIMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from langmem_vault.graphs._options import CompactOptions, ExtractOptions, InjectOptions
from langmem_vault.jobs._queue import AsyncJobQueue, JobQueue
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.injected import InjectedMemory
from langmem_vault.nodes._catch_up import DEFAULT_CATCH_UP_SECONDS, CatchUpThenInject
from langmem_vault.nodes._compact import create_compact_node
from langmem_vault.nodes._degrade import DEFAULT_INJECT_TIMEOUT, OnError, merge_status
from langmem_vault.nodes._extract import create_extract_node
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.nodes._respond import CitationFeedback, memory_system_message, utility_recorder

__all__ = ["DEFAULT_CATCH_UP_SECONDS", "MemoryAgentState", "MemoryMiddleware"]


class MemoryAgentState(AgentState[Any]):
    """The agent's state plus the memory keys (the same as the graphs' ``MemoryState``)."""

    memory_context: NotRequired[str]
    memory_refs: NotRequired[dict[str, str]]
    memory_items: NotRequired[list[InjectedMemory]]
    cited: NotRequired[list[str]]
    running_summary: NotRequired[str]
    memory_dropped: NotRequired[list[str]]
    memory_status: NotRequired[Annotated[dict[str, str], merge_status]]


class MemoryMiddleware(AgentMiddleware[MemoryAgentState, Any]):
    """Memory for ``create_agent(middleware=[MemoryMiddleware(extractor, ...)])``.

    - ``extractor``: a chat model, an ``init_chat_model`` string or an extractor such as
      ``OfflineExtractor()`` (the extract node's ``model``);
    - ``store``: defaults to the agent's store; ``namespaces``: the memory templates;
    - ``queue``: a ``JobQueue``, ``AsyncJobQueue`` or DSN: extraction runs in the background
      (a worker starts in this process unless ``extract=ExtractOptions(start_worker=False)``);
      without one it runs inline at the end of the turn;
    - ``inject`` / ``extract`` / ``compact``: the nodes' typed options (compaction is off
      unless ``compact`` is given); ``summarizer``: the compact summary's model (``None``:
      extractive);
    - ``system_prompt``: text put before the memory block when the agent has no system
      prompt of its own; ``cite``: ask the model to cite memories as ``[M1]``;
    - ``record_utility``: turn the final answer's citations into utility signals (True: in the
      background; an ``AccessRecorder`` of your own; False: off);
    - ``catch_up_seconds``: how long a new thread's first turn waits for the user's earlier
      threads to be extracted (background mode; 0 does not wait);
    - ``on_error`` / ``inject_timeout``: when memory fails or inject takes longer than
      ``inject_timeout`` seconds, the agent answers without memory and the state's
      ``memory_status`` says why (:mod:`langmem_vault.nodes._degrade`); ``on_error="raise"``
      raises instead.

    >>> agent = create_agent(model, tools, middleware=[MemoryMiddleware(model, queue=queue)],
    ...                      checkpointer=saver, store=store)  # doctest: +SKIP
    """

    state_schema = MemoryAgentState

    def __init__(
        self,
        extractor: Any,
        /,
        *,
        store: BaseStore | None = None,
        namespaces: MemoryNamespaces | None = None,
        queue: JobQueue | AsyncJobQueue | str | None = None,
        inject: InjectOptions | None = None,
        extract: ExtractOptions | None = None,
        compact: CompactOptions | None = None,
        summarizer: Any = None,
        system_prompt: str = "",
        cite: bool = True,
        record_utility: AccessRecorder | bool = True,
        catch_up_seconds: float = DEFAULT_CATCH_UP_SECONDS,
        on_error: OnError = "degrade",
        inject_timeout: float | None = DEFAULT_INJECT_TIMEOUT,
    ) -> None:
        super().__init__()
        if catch_up_seconds < 0:
            raise ValueError(f"catch_up_seconds must be >= 0, got {catch_up_seconds!r}")
        namespaces = namespaces or MemoryNamespaces()
        self.inject_node = create_inject_node(
            store=store,
            namespaces=namespaces,
            on_error=on_error,
            timeout=inject_timeout,
            **(inject or InjectOptions()).as_kwargs(),
        )
        self.extract_node = create_extract_node(
            extractor,
            queue=queue,
            store=store,
            namespaces=namespaces,
            on_error=on_error,
            **(extract or ExtractOptions()).as_kwargs(),
        )
        self.compact_node = (
            None
            if compact is None
            else create_compact_node(
                summarizer,
                store=store,
                namespaces=namespaces,
                on_error=on_error,
                **compact.as_kwargs(),
            )
        )
        self.system_prompt = system_prompt
        self.feedback = CitationFeedback(
            cite=cite, store=store, namespaces=namespaces, recorder=utility_recorder(record_utility)
        )
        self._catch_up_then_inject = CatchUpThenInject(
            self.inject_node.node, self.extract_node, wait_seconds=catch_up_seconds
        )

    # -- before_agent: catch up, then inject (once per user turn) --

    def before_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self._catch_up_then_inject.invoke(dict(state), get_config())

    async def abefore_agent(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await self._catch_up_then_inject.ainvoke(dict(state), get_config())

    # -- before_model: compaction (when configured) --

    def before_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self.compact_node is None:
            return None
        update: dict[str, Any] = self.compact_node.node.invoke(state, get_config())
        return update or None

    async def abefore_model(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        if self.compact_node is None:
            return None
        update: dict[str, Any] = await self.compact_node.node.ainvoke(state, get_config())
        return update or None

    # -- wrap_model_call: the block in the system message of every call of the turn --

    def _with_memory(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        base = request.system_message.text if request.system_message else self.system_prompt
        system = memory_system_message(request.state, base, cite=self.feedback.cite)
        return request.override(system_message=system) if system.text else request

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(self._with_memory(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(self._with_memory(request))

    # -- after_agent: citations, then extraction --

    @staticmethod
    def _answer(state: MemoryAgentState) -> AIMessage | None:
        """The turn's final answer (the last message, when the model wrote it)."""
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        return last if isinstance(last, AIMessage) else None

    def after_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        config = get_config()
        answer = self._answer(state)
        cited = self.feedback.record(answer, state, config) if answer is not None else []
        update: dict[str, Any] = self.extract_node.node.invoke(state, config)
        return {**update, "cited": cited}

    async def aafter_agent(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        config = get_config()
        answer = self._answer(state)
        cited = await self.feedback.arecord(answer, state, config) if answer is not None else []
        update: dict[str, Any] = await self.extract_node.node.ainvoke(state, config)
        return {**update, "cited": cited}

    # -- lifecycle --

    def close(self) -> None:
        """Stop the extraction worker this middleware started (and a pool opened from a DSN)."""
        self.extract_node.close()

    async def aclose(self) -> None:
        """Async :meth:`close`."""
        await self.extract_node.aclose()

    def __enter__(self) -> MemoryMiddleware:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MemoryMiddleware:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
