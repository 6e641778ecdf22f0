"""respond: a reference chat node that answers with the injected memories and cites them.

The system prompt is the app's prompt plus inject's ``memory_context`` and compact's
``running_summary``; neither is written into ``messages``, so checkpoints stay small. The
system message also carries inject's ``memory_items`` (the same memories as data, see
:mod:`langmem_vault.memory._recall.injected`); :func:`memory_system_message` builds it for apps with
their own agent node. The
model is asked to cite memories as ``[M1]``; the aliases it cites land in ``state["cited"]``
and the cited facts' utility rises a step in the background. Apps with their own agent node
skip this node and read ``state["memory_context"]`` themselves.

>>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
>>> node = create_respond_node(FakeListChatModel(responses=["Hi [M1]"]))
>>> node.name
'respond'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelLike
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from langmem_vault.memory._namespaces import MemoryNamespaces, MissingConfigKeyError
from langmem_vault.memory._recall.access import AccessRecorder
from langmem_vault.memory._recall.injected import INJECTED_KEY
from langmem_vault.nodes._common import MemoryNode, load_model, resolve_store

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "CitationFeedback",
    "RespondNode",
    "build_system_prompt",
    "cited_aliases",
    "create_respond_node",
    "memory_system_message",
    "utility_recorder",
]

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant with a long-term memory of this user."
CITATION_RULE = (
    "When your answer uses one of the remembered facts or conversations below, cite it "
    "inline by its label, for example [M1] or [M2]. Do not cite labels that are not listed."
)
_CITATION = re.compile(r"\[(M\d+)\]")


def cited_aliases(text: str, refs: Mapping[str, str]) -> list[str]:
    """Aliases cited in ``text`` that exist in ``refs``, in order of first citation.

    >>> cited_aliases("You live in Lyon [M2], near [M9] and [M2].", {"M2": "k"})
    ['M2']
    """
    seen: dict[str, None] = {}
    for alias in _CITATION.findall(text):
        if alias in refs:
            seen.setdefault(alias, None)
    return list(seen)


def build_system_prompt(
    system_prompt: str, memory_context: str, running_summary: str, *, cite: bool = True
) -> str:
    """The system message text: app prompt, citation rule, memory section, summary."""
    parts = [system_prompt.strip()]
    if memory_context.strip():
        if cite:
            parts.append(CITATION_RULE)
        parts.append(memory_context.strip())
    if running_summary.strip():
        parts.append(
            "Summary of the earlier part of this conversation:\n" + running_summary.strip()
        )
    return "\n\n".join(p for p in parts if p)


def memory_system_message(
    state: Mapping[str, Any], system_prompt: str = DEFAULT_SYSTEM_PROMPT, *, cite: bool = True
) -> SystemMessage:
    """The system message for a turn: :func:`build_system_prompt` over the state's memory
    section and summary, with inject's ``memory_items`` attached as data (under
    ``additional_kwargs[INJECTED_KEY]``, which chat model integrations do not send).

    >>> state = {"memory_context": "- [M1] User lives in Lyon (personal)", "memory_items": []}
    >>> print(memory_system_message(state, "Be brief.", cite=False).text)
    Be brief.
    <BLANKLINE>
    - [M1] User lives in Lyon (personal)
    """
    text = build_system_prompt(
        system_prompt,
        state.get("memory_context") or "",
        state.get("running_summary") or "",
        cite=cite,
    )
    memories = list(state.get("memory_items") or [])
    return SystemMessage(text, additional_kwargs={INJECTED_KEY: memories} if memories else {})


def _message_text(message: BaseMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)


Target = tuple[tuple[str, ...], str]


class CitationFeedback:
    """Turns the memories an answer cites into utility signals (see ``memory.utility``):
    each cited memory gains, each fact shown to a model asked to cite it but left uncited
    loses a little. Shared by the respond node and ``MemoryMiddleware``.

    >>> feedback = CitationFeedback(cite=True, store=None, namespaces=MemoryNamespaces(),
    ...                             recorder=None)
    >>> feedback.cited(AIMessage("You live in Lyon [M1]."), {"memory_refs": {"M1": "k1"}})
    ['M1']
    """

    def __init__(
        self,
        *,
        cite: bool,
        store: BaseStore | None,
        namespaces: MemoryNamespaces,
        recorder: AccessRecorder | None,
    ) -> None:
        self.cite = cite
        self.store = store
        self.namespaces = namespaces
        self.recorder = recorder

    def cited(self, message: BaseMessage, state: Mapping[str, Any]) -> list[str]:
        """The aliases of ``state``'s injected memories that ``message`` cites."""
        return cited_aliases(_message_text(message), state.get("memory_refs") or {})

    def _signals(
        self, message: BaseMessage, state: Mapping[str, Any], config: RunnableConfig
    ) -> tuple[list[str], tuple[BaseStore, list[Target], list[Target]] | None]:
        """The cited aliases, and (store, cited, uncited) memories to record, or None."""
        cited = self.cited(message, state)
        refs: Mapping[str, str] = state.get("memory_refs") or {}
        if not refs or self.recorder is None:
            return cited, None
        try:
            semantic = self.namespaces.resolve(config).semantic
            store = resolve_store(self.store)
        except (MissingConfigKeyError, ValueError):  # no user, or no store in this run
            return cited, None
        # Citations count on any memory; only facts (with a utility field) turn them into utility.
        used = [(semantic, refs[alias]) for alias in cited]
        unused: list[Target] = []
        if self.cite:  # a model not asked to cite says nothing by its silence
            facts = [m["alias"] for m in state.get("memory_items") or [] if m.get("kind") == "fact"]
            unused = [(semantic, refs[a]) for a in facts if a in refs and a not in set(cited)]
        return cited, (store, used, unused) if used or unused else None

    def record(
        self, message: BaseMessage, state: Mapping[str, Any], config: RunnableConfig
    ) -> list[str]:
        """Record the signals of ``message`` (in the background); returns the cited aliases."""
        cited, signals = self._signals(message, state, config)
        if signals is not None and self.recorder is not None:
            store, used, unused = signals
            self.recorder.record(store, [], cited=used, uncited=unused)
        return cited

    async def arecord(
        self, message: BaseMessage, state: Mapping[str, Any], config: RunnableConfig
    ) -> list[str]:
        """Async :meth:`record`."""
        cited, signals = self._signals(message, state, config)
        if signals is not None and self.recorder is not None:
            store, used, unused = signals
            await self.recorder.arecord(store, [], cited=used, uncited=unused)
        return cited


def utility_recorder(record_utility: AccessRecorder | bool) -> AccessRecorder | None:
    """The recorder a node's ``record_utility`` option names (True: a background one)."""
    if isinstance(record_utility, AccessRecorder):
        return record_utility
    return AccessRecorder() if record_utility else None


class RespondNode:
    """The respond node (build it with :func:`create_respond_node`)."""

    def __init__(
        self,
        model: LanguageModelLike,
        *,
        system_prompt: str,
        feedback: CitationFeedback,
    ) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.feedback = feedback

    @property
    def recorder(self) -> AccessRecorder | None:
        """Where the citation signals go (``recorder.flush()`` waits for them)."""
        return self.feedback.recorder

    def _prompt(self, state: Mapping[str, Any]) -> list[BaseMessage]:
        system = memory_system_message(state, self.system_prompt, cite=self.feedback.cite)
        messages: Sequence[BaseMessage] = state.get("messages") or []
        return [system, *messages]

    @staticmethod
    def _message(reply: Any) -> AIMessage:
        return reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply))

    def invoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Answer synchronously; returns the state update."""
        message = self._message(self.model.invoke(self._prompt(state), config))
        cited = self.feedback.record(message, state, config)
        return {"messages": [message], "cited": cited}

    async def ainvoke(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Answer asynchronously; returns the state update."""
        message = self._message(await self.model.ainvoke(self._prompt(state), config))
        cited = await self.feedback.arecord(message, state, config)
        return {"messages": [message], "cited": cited}


def create_respond_node(
    model: str | BaseChatModel | LanguageModelLike,
    /,
    *,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    cite: bool = True,
    store: BaseStore | None = None,
    namespaces: MemoryNamespaces | None = None,
    record_utility: AccessRecorder | bool = True,
    name: str = "respond",
) -> MemoryNode:
    """Build the respond node around any LangChain chat model.

    ``model`` is an ``init_chat_model`` string or a model object (tools bound or not).
    ``record_utility`` raises the utility of facts the model cites, and lowers a little that
    of facts it was shown and did not cite (in the background; see ``memory.utility``).

    >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
    >>> create_respond_node(FakeListChatModel(responses=["ok"]), system_prompt="Be brief.").name
    'respond'
    """
    feedback = CitationFeedback(
        cite=cite,
        store=store,
        namespaces=namespaces or MemoryNamespaces(),
        recorder=utility_recorder(record_utility),
    )
    node = RespondNode(load_model(model), system_prompt=system_prompt, feedback=feedback)
    return MemoryNode(node, name=name)
