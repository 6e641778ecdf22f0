"""Memory tools for agents, in LangMem's shapes, backed by the memory facade.

``create_manage_memory_tool`` and ``create_search_memory_tool`` take the arguments of LangMem's
tools of the same names (a namespace template such as ``("memories", "{langgraph_user_id}")``,
``instructions``, ``actions_permitted``, ``store``, ``name``), so an agent written for LangMem
switches by changing an import. What the agent writes goes through the same path as
extraction: PII redaction (a fact that reveals a sensitive topic or a secret becomes private
and is sealed), the user's consent, and reconcile (the same fact twice reinforces one record;
an update supersedes the old fact and keeps it for history; delete closes a fact, nothing is
hard-deleted on the model's word). Search returns typed facts, never private ones unless asked.

Both tools run on any ``BaseStore`` (VaultStore, InMemoryStore, langgraph's PostgresStore),
synchronously and asynchronously. The namespace is filled from the run's config or context
(``{user_id}`` and ``{langgraph_user_id}`` stand for each other).

>>> from langgraph.store.memory import InMemoryStore
>>> store = InMemoryStore()
>>> manage = create_manage_memory_tool(("memories", "{user_id}"), store=store, redaction=None)
>>> config = {"configurable": {"user_id": "ana"}}
>>> manage.invoke({"content": "Ana prefers tea", "action": "create"}, config)[:15]
'created memory '
>>> search = create_search_memory_tool(("memories", "{user_id}"), store=store)
>>> search.invoke({"query": "tea"}, config)[0]["text"]
'Ana prefers tea'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.tools import StructuredTool
from langgraph.config import get_config
from langgraph.store.base import BaseStore
from pydantic import BaseModel, Field, create_model

from langmem_vault.db._steps import Call, Steps, arun_steps, run_steps
from langmem_vault.extraction._apply import aapply, apply
from langmem_vault.extraction._messages import search_text
from langmem_vault.extraction._reconcile import ReconcileReport
from langmem_vault.extraction._redaction import stated_fact
from langmem_vault.memory._keys import check_key
from langmem_vault.memory._models import FactCategory, SemanticFact
from langmem_vault.memory._namespaces import (
    SEMANTIC,
    MemoryNamespaces,
    NamespaceTemplate,
    ResolvedNamespaces,
    resolve_namespace,
)
from langmem_vault.memory._sealing import Keyring
from langmem_vault.memory._vault import Memory, MemoryVault
from langmem_vault.nodes._common import resolve_store
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy

__all__ = ["create_manage_memory_tool", "create_search_memory_tool"]

Action = Literal["create", "update", "delete"]
ACTIONS: tuple[Action, ...] = ("create", "update", "delete")

MANAGE_INSTRUCTIONS = """Save, correct or delete a memory about the user that should last \
across conversations. Call it when the user states a lasting preference or fact, asks you to \
remember or forget something, or corrects something you remembered (update it by id)."""

SEARCH_INSTRUCTIONS = """Search what you remember about the user (facts, preferences, \
decisions). Call it before answering when the answer may depend on something the user said \
in an earlier conversation."""


def _template(namespace: NamespaceTemplate | str) -> NamespaceTemplate:
    template = (namespace,) if isinstance(namespace, str) else tuple(namespace)
    if not template or not all(isinstance(label, str) and label for label in template):
        raise ValueError(f"namespace must be a non-empty tuple of labels, got {namespace!r}")
    return template


class _Scope:
    """One tool's namespace template, store and keyring, resolved per call from the run."""

    def __init__(
        self, template: NamespaceTemplate, store: BaseStore | None, keyring: Keyring | None
    ) -> None:
        self.template = template
        self.store = store
        self.keyring = keyring

    def resolve(self) -> tuple[BaseStore, ResolvedNamespaces, MemoryVault]:
        config = get_config()
        ns = resolve_namespace(self.template, config)
        # Facts only: episodes and instructions are never written through these tools.
        resolved = ResolvedNamespaces(semantic=ns, episodes=ns, instructions=ns)
        store = resolve_store(self.store)
        vault = MemoryVault(
            store,
            namespaces=MemoryNamespaces(ns, ns, ns),
            config={"configurable": {}},
            keyring=self.keyring,
        )
        return store, resolved, vault


# -- manage ------------------------------------------------------------------------------------


class _Manage:
    def __init__(
        self, scope: _Scope, permitted: tuple[Action, ...], redaction: RedactionPolicy | None
    ) -> None:
        self.scope = scope
        self.permitted = permitted
        self.redaction = redaction

    def _check(self, action: str, content: str | None, id: str | None) -> None:
        if action not in self.permitted:
            raise ValueError(f"action must be one of {self.permitted}, got {action!r}")
        if action in ("create", "update") and not (content and content.strip()):
            raise ValueError(f"content is required to {action} a memory")
        if action in ("update", "delete") and not id:
            raise ValueError(f"id is required to {action} a memory")
        if action == "create" and id:
            raise ValueError("id must be empty when creating a memory (use action='update')")
        if id:
            check_key(id, field="id")

    def _steps(
        self,
        content: str | None,
        action: Action,
        id: str | None,
        category: FactCategory,
        private: bool,
    ) -> Steps[str]:
        # One body for both drivers: each store call is a Call with its sync and async twin.
        self._check(action, content, id)
        store, ns, vault = self.scope.resolve()
        key = str(id)
        if action == "delete":
            forgot = yield Call(lambda: vault.forget(key), lambda: vault.aforget(key))
            return _deleted(id, forgot)
        if action == "update":
            found = yield Call(lambda: vault.get(key), lambda: vault.aget(key))
            if found is None:
                return _missing(id)
        extraction = stated_fact(
            str(content), category=category, private=private, supersedes=id, policy=self.redaction
        )
        report = yield Call(
            lambda: apply(store, extraction, ns), lambda: aapply(store, extraction, ns)
        )
        return _reply(action, id, report)

    def run(
        self,
        content: str | None = None,
        action: Action = "create",
        id: str | None = None,
        category: FactCategory = "general",
        private: bool = False,
    ) -> str:
        return run_steps(self._steps(content, action, id, category, private))

    async def arun(
        self,
        content: str | None = None,
        action: Action = "create",
        id: str | None = None,
        category: FactCategory = "general",
        private: bool = False,
    ) -> str:
        return await arun_steps(self._steps(content, action, id, category, private))


def _deleted(id: str | None, found: bool) -> str:
    return f"deleted memory {id}" if found else _missing(id)


def _missing(id: str | None) -> str:
    return f"no memory with id {id}; search for it first"


def _reply(action: str, id: str | None, report: ReconcileReport) -> str:
    if action == "update" and report.added:
        return f"updated memory {id}: the new version is {report.added[0]}"
    if report.added or report.pending:
        return f"created memory {(report.added or report.pending)[0]}"
    if report.reinforced:
        return f"already remembered as memory {report.reinforced[0]}"
    return "nothing stored (the user's consent settings exclude it)"


def create_manage_memory_tool(
    namespace: NamespaceTemplate | str = SEMANTIC,
    *,
    instructions: str = MANAGE_INSTRUCTIONS,
    actions_permitted: Sequence[Action] = ACTIONS,
    store: BaseStore | None = None,
    name: str = "manage_memory",
    redaction: RedactionPolicy | None = DEFAULT_POLICY,
    keyring: Keyring | None = None,
) -> StructuredTool:
    """A tool that creates, updates and deletes facts about the user (LangMem's shape).

    - ``namespace``: a template filled from the run (default ``("memories", "{user_id}",
      "semantic")``, where the memory nodes read, so inject shows what the tool saved);
    - ``actions_permitted``: a subset of ``("create", "update", "delete")``; the model only
      sees those;
    - ``store``: defaults to the graph's store; ``redaction``: the PII policy (``None``
      turns it off); ``keyring``: seals private facts (default ``$LANGMEM_VAULT_KEY``).

    The tool's arguments: ``content``, ``action``, ``id`` (of the fact to update or delete),
    ``category`` and ``private``. An update supersedes the old fact (kept, closed); a delete
    closes it. It returns a short sentence naming the memory id.

    >>> tool = create_manage_memory_tool(("memories", "{langgraph_user_id}"))
    >>> tool.name, sorted(tool.args)
    ('manage_memory', ['action', 'category', 'content', 'id', 'private'])
    """
    permitted = tuple(actions_permitted)
    if not permitted or any(a not in ACTIONS for a in permitted):
        raise ValueError(f"actions_permitted must be a non-empty subset of {ACTIONS}")
    manage = _Manage(_Scope(_template(namespace), store, keyring), permitted, redaction)
    action_type: Any = Literal[permitted]  # the model is shown only the permitted actions
    args: type[BaseModel] = create_model(
        "ManageMemory",
        content=(str | None, Field(None, description="The memory, for create and update.")),
        action=(action_type, Field(permitted[0], description="What to do.")),
        id=(str | None, Field(None, description="The memory's id, for update and delete.")),
        category=(FactCategory, Field("general", description="What kind of fact it is.")),
        private=(bool, Field(False, description="True for sensitive facts.")),
    )
    return StructuredTool.from_function(
        func=manage.run,
        coroutine=manage.arun,
        name=name,
        description=instructions,
        args_schema=args,
    )


# -- search ------------------------------------------------------------------------------------


class _Search:
    def __init__(self, scope: _Scope, include_private: bool, artifact: bool) -> None:
        self.scope = scope
        self.include_private = include_private
        self.artifact = artifact

    def _out(self, found: Sequence[Memory[SemanticFact]], offset: int) -> Any:
        kept = [m for m in found if self.include_private or not m.value.private][offset:]
        rows = [
            {
                "id": m.key,
                "text": m.value.text,
                "category": m.value.category,
                "confidence": m.value.confidence,
                "status": m.value.status,
                "score": m.score,
            }
            for m in kept
        ]
        return (rows, kept) if self.artifact else rows

    def run(self, query: str, limit: int = 10, offset: int = 0) -> Any:
        _, _, vault = self.scope.resolve()
        return self._out(vault.recall(search_text(query), limit=limit + offset), offset)

    async def arun(self, query: str, limit: int = 10, offset: int = 0) -> Any:
        _, _, vault = self.scope.resolve()
        found = await vault.arecall(search_text(query), limit=limit + offset)
        return self._out(found, offset)


class _SearchArgs(BaseModel):
    query: str = Field(description="What to look for.")
    limit: int = Field(10, ge=1, le=50, description="How many memories at most.")
    offset: int = Field(0, ge=0, le=1000, description="How many best matches to skip.")


def create_search_memory_tool(
    namespace: NamespaceTemplate | str = SEMANTIC,
    *,
    instructions: str = SEARCH_INSTRUCTIONS,
    store: BaseStore | None = None,
    response_format: Literal["content", "content_and_artifact"] = "content",
    name: str = "search_memory",
    include_private: bool = False,
    keyring: Keyring | None = None,
) -> StructuredTool:
    """A tool that searches the user's current facts, best first (LangMem's shape).

    Ranked like inject (relevance blended with confidence, recency and utility). Each result
    is ``{"id", "text", "category", "confidence", "status", "score"}``; with
    ``response_format="content_and_artifact"`` the typed ``Memory`` objects come as the
    artifact. Private facts are left out unless ``include_private=True``.

    >>> create_search_memory_tool().name
    'search_memory'
    """
    search = _Search(
        _Scope(_template(namespace), store, keyring),
        include_private,
        response_format == "content_and_artifact",
    )
    return StructuredTool.from_function(
        func=search.run,
        coroutine=search.arun,
        name=name,
        description=instructions,
        args_schema=_SearchArgs,
        response_format=response_format,
    )
