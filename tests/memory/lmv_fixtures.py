"""Store fixtures and a scripted chat model shared by the memory, node and graph tests.

Imported by tests/memory/conftest.py, tests/graphs/conftest.py and the node test modules
(``from memory.lmv_fixtures import ...``): ``tests/`` is on sys.path through its conftest.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from pydantic import Field

from langmem_vault.embeddings import local_embeddings

USER = {"configurable": {"user_id": "u1"}}


def thread(user: str, thread_id: str) -> dict[str, Any]:
    """A run config for one user's thread."""
    return {"configurable": {"user_id": user, "thread_id": thread_id}}


@pytest.fixture(scope="session")
def index() -> dict[str, Any]:
    return {"dims": 384, "embed": local_embeddings(), "fields": ["text"]}


@pytest.fixture(params=["memory", "vault"])
def store(request: pytest.FixtureRequest, index: dict[str, Any]) -> Iterator[BaseStore]:
    """A sync store: InMemoryStore and VaultStore on the embedded Postgres."""
    if request.param == "memory":
        yield InMemoryStore(index=index)  # type: ignore[arg-type]
        return
    from langmem_vault.store import VaultStore

    pg_uri = request.getfixturevalue("pg_uri")
    schema = request.getfixturevalue("schema")
    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as vault:  # type: ignore[arg-type]
        vault.setup()
        yield vault


@pytest.fixture(params=["memory", "vault"])
async def astore(request: pytest.FixtureRequest, index: dict[str, Any]) -> AsyncIterator[BaseStore]:
    """An async store: InMemoryStore and AsyncVaultStore on the embedded Postgres."""
    if request.param == "memory":
        yield InMemoryStore(index=index)  # type: ignore[arg-type]
        return
    from langmem_vault.store import AsyncVaultStore

    pg_uri = request.getfixturevalue("pg_uri")
    schema = request.getfixturevalue("schema")
    async with AsyncVaultStore.from_conn_string(pg_uri, index=index, schema=schema) as vault:  # type: ignore[arg-type]
        await vault.setup()
        yield vault


class ScriptedModel(BaseChatModel):
    """Replies from a script, in order, and records every prompt it was given."""

    replies: list[str]
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.prompts.append(list(messages))
        reply = self.replies[min(len(self.prompts) - 1, len(self.replies) - 1)]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])

    def system_text(self, turn: int = -1) -> str:
        """The system message of a recorded prompt."""
        return "\n".join(str(m.content) for m in self.prompts[turn] if isinstance(m, SystemMessage))
