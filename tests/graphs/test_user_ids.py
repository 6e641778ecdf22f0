"""Where the user id comes from (configurable, langgraph_user_id, the run context), and ids
that are not valid store labels as they are (emails)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langmem_vault.graphs import ExtractOptions, build_memory_graph
from langmem_vault.memory import MemoryNamespaces, MissingConfigKeyError
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel
from langmem_vault.privacy._audit.owners import owner_of
from langmem_vault.privacy._subject_rights.erase import erase_user
from langmem_vault.privacy._subject_rights.portability import export_user

EMAIL = "dana.smith@example.com"


def _graph(store: BaseStore) -> Any:
    return build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=OfflineExtractor(use_spacy=False),
        summarizer=None,
        extract_options=ExtractOptions(every_n_messages=2),
    )


def _texts(vault: MemoryVault) -> list[str]:
    return [m.value.text for m in vault.list()]


def test_user_id_from_the_run_context_and_an_email(store: BaseStore) -> None:
    graph = _graph(store)
    run = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [HumanMessage("I live in Lyon.")]}, run, context={"user_id": EMAIL})
    out = graph.invoke(
        {"messages": [HumanMessage("Where do I live?")]},
        {"configurable": {"thread_id": "t2"}},
        context={"user_id": EMAIL},
    )
    assert "Lyon" in str(out["messages"][-1].content)
    assert _texts(MemoryVault(store, user_id=EMAIL)) == ["User lives in Lyon"]
    # stored under the encoded label, read back as the email
    spaces = store.list_namespaces(prefix=("memories",))
    assert ("memories", "dana%2Esmith@example%2Ecom", "semantic") in spaces
    ns = MemoryNamespaces()
    templates = [ns.semantic, ns.episodes, ns.instructions]
    assert {owner_of(ns, templates) for ns in spaces} == {EMAIL}
    # another user (and "dana" without the dots) sees nothing
    assert _texts(MemoryVault(store, user_id="dana")) == []
    out = graph.invoke(
        {"messages": [HumanMessage("Where do I live?")]},
        {"configurable": {"thread_id": "t3"}},
        context={"user_id": "danasmith@example%2Ecom"},  # the encoded form is another id
    )
    assert out["memory_context"] == ""


def test_export_and_erase_find_an_email_users_data(store: BaseStore) -> None:
    graph = _graph(store)
    for thread, user in (("t1", EMAIL), ("o1", "olga")):
        graph.invoke(
            {"messages": [HumanMessage("I live in Lyon.")]},
            {"configurable": {"thread_id": thread, "user_id": user}},
        )
    doc = export_user(store, EMAIL)
    assert doc["user_id"] == EMAIL
    assert "User lives in Lyon" in str(doc)
    report = erase_user(store, EMAIL)
    assert report.store_items >= 1
    assert _texts(MemoryVault(store, user_id=EMAIL)) == []
    assert _texts(MemoryVault(store, user_id="olga")) == ["User lives in Lyon"]


async def test_user_id_from_the_run_context_async(astore: BaseStore) -> None:
    graph = _graph(astore)
    await graph.ainvoke(
        {"messages": [HumanMessage("I work at Acme Robotics.")]},
        {"configurable": {"thread_id": "t1"}},
        context={"user_id": EMAIL},
    )
    vault = MemoryVault(astore, user_id=EMAIL)
    assert [m.value.text for m in await vault.alist()] == ["User works at Acme Robotics"]


def test_langgraph_user_id_as_the_checkpointer_reads_it(store: BaseStore) -> None:
    graph = _graph(store)
    graph.invoke(
        {"messages": [HumanMessage("I live in Lyon.")]},
        {"configurable": {"thread_id": "t1", "langgraph_user_id": "dana"}},
    )
    assert _texts(MemoryVault(store, user_id="dana")) == ["User lives in Lyon"]


def test_configurable_wins_over_the_context_and_a_missing_id_says_where_to_put_it() -> None:
    ns = MemoryNamespaces()
    config = {"configurable": {"user_id": "a"}}
    assert ns.resolve(config, context={"user_id": "b"}).semantic == ("memories", "a", "semantic")
    with pytest.raises(MissingConfigKeyError, match=r"context=\{'user_id': \.\.\.\}"):
        ns.resolve({"configurable": {}})


@pytest.mark.parametrize(
    ("run", "context", "where"),
    [
        ({"user_id": ""}, None, "configurable['user_id']"),
        ({"user_id": "   "}, None, "configurable['user_id']"),
        ({"langgraph_user_id": " \t"}, None, "configurable['langgraph_user_id']"),
        ({}, {"user_id": "  "}, "the run context"),
    ],
)
def test_a_blank_user_id_is_one_clear_error(
    run: dict[str, Any], context: Any, where: str, store: BaseStore
) -> None:
    """The graph, the tools and the service apply one rule (run_config.check_user_id)."""
    from langmem_vault._run_config import UserIdError
    from langmem_vault.integrations._tools import create_search_memory_tool
    from langmem_vault.service import MemoryService

    graph = _graph(store)
    config = {"configurable": {"thread_id": "t1", **run}}
    with pytest.raises(UserIdError, match=rf"^user_id \(from {re.escape(where)}\): must be a"):
        graph.invoke({"messages": [HumanMessage("I live in Lyon.")]}, config, context=context)
    assert store.search(("memories",)) == []  # nothing was written under a blank id
    search = create_search_memory_tool(("memories", "{user_id}"), store=store)
    if context is None:  # a tool reads the configurable (its run has no context here)
        with pytest.raises(UserIdError, match=re.escape(where)):
            search.invoke({"query": "Lyon"}, config)
    with pytest.raises(Exception, match=r"user_id.*must be a non-empty string"):
        MemoryService(store).list_memories("   ")
    # a usable id elsewhere wins over a blank one
    fine = {"configurable": {"thread_id": "t2", "user_id": "", "langgraph_user_id": "ana"}}
    graph.invoke({"messages": [HumanMessage("I live in Lyon.")]}, fine)
