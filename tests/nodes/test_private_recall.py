"""Private must not mean forgotten: the owner's inject recalls private facts, nobody else does.

A user with hundreds of memories tells the graph their name, city and sister in one thread and
asks in a new one; inject must include them, with the default policy (names and places public)
and with the strict one (all private, sealed under a key). Another user never sees them.
"""

from __future__ import annotations

import base64
import itertools
import os
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from langmem_vault.graphs import build_memory_graph
from langmem_vault.graphs._options import ExtractOptions
from langmem_vault.memory._models import SemanticFact
from langmem_vault.memory._sealing import ENV_KEY, Keyring, is_sealed
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.nodes._inject import create_inject_node
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.offline._model import RecallChatModel
from langmem_vault.privacy._redaction.policy import RedactionPolicy
from tests.support.stores import thread

NAMES = ["Ana", "Bram", "Chen", "Dmitri", "Elif", "Femi", "Greta", "Hiro", "Ivo", "Jana"]
CITIES = ["Lisbon", "Oslo", "Turin", "Quito", "Perth", "Leeds", "Graz", "Hanoi", "Cork", "Lima"]
THINGS = ["a red bike", "a chess set", "a tent", "a kettle", "a lamp", "a drone"]
TOLD = ["My name is Dana.", "I live in Rotterdam.", "My sister is called Priya."]


def _distractors(n: int) -> list[str]:
    combos = itertools.product(NAMES, CITIES, THINGS)
    out = []
    for i, (name, city, thing) in enumerate(combos):
        if i >= n:
            break
        kind = i % 3
        if kind == 0:
            out.append(f"User's colleague {name} moved to {city} with {thing}")
        elif kind == 1:
            out.append(f"User's friend {name} bought {thing} in {city}")
        else:
            out.append(f"User met {name} for coffee in {city} and got {thing}")
    return out


def _seed(store: BaseStore, user: str, n: int = 300) -> None:
    ns = ("memories", user, "semantic")
    ops = [
        PutOp(ns, f"d{i}", SemanticFact(text=t, source="import").to_store(), index=["text"])
        for i, t in enumerate(_distractors(n))
    ]
    store.batch(ops)


def _tell(store: BaseStore, user: str, policy: RedactionPolicy) -> None:
    graph = build_memory_graph(
        RecallChatModel(),
        store=store,
        checkpointer=InMemorySaver(),
        extractor=OfflineExtractor(),
        summarizer=None,
        compact=False,
        extract_options=ExtractOptions(every_n_messages=2, redaction=policy),
    )
    for line in TOLD:
        graph.invoke({"messages": [HumanMessage(line)]}, thread(user, "t1"))


def _context(node: Any, user: str, question: str) -> str:
    update = node.node.invoke({"messages": [HumanMessage(question)]}, thread(user, "t2"))
    return str(update["memory_context"])


@pytest.mark.parametrize("strict", [False, True], ids=["default policy", "strict + key"])
def test_own_name_city_and_sister_recalled_in_a_new_thread(
    store: BaseStore, strict: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if strict:
        monkeypatch.setenv(ENV_KEY, base64.b64encode(os.urandom(32)).decode())
    else:
        monkeypatch.delenv(ENV_KEY, raising=False)
    _seed(store, "dana")
    _tell(store, "dana", RedactionPolicy.strict() if strict else RedactionPolicy())
    told = [i for i in store.search(("memories", "dana", "semantic"), limit=1000)]
    told = [i for i in told if i.value.get("source") == "conversation"]
    assert len(told) == 3
    # strict: every told fact is private and sealed; default: name, city, sister stay public
    assert all(is_sealed(i.value) is strict for i in told)
    assert all(bool(i.value.get("private")) is strict for i in told)
    # no episodes: the facts themselves must be injected, not a summary of the first thread
    inject = create_inject_node(store=store, record_access=False, max_episodes=0)
    assert "Dana" in _context(inject, "dana", "What's my name again?")
    assert "Rotterdam" in _context(inject, "dana", "Which city is my home?")
    assert "Priya" in _context(inject, "dana", "What's my sister's name?")


def test_private_facts_never_reach_another_user(store: BaseStore) -> None:
    ring = Keyring.generate()
    MemoryVault(store, user_id="alice", keyring=ring).remember("User's name is Alice", private=True)
    MemoryVault(store, user_id="alice").remember("User takes insulin daily", private=True)
    MemoryVault(store, user_id="bob").remember("User's name is Bob")
    for keyring in (ring, None):
        inject = create_inject_node(store=store, record_access=False, keyring=keyring)
        context = _context(inject, "bob", "What's my name? Do I take insulin?")
        assert "Bob" in context
        assert "Alice" not in context and "insulin" not in context
    # the owner gets both (the sealed one only with its key)
    inject = create_inject_node(store=store, record_access=False, keyring=ring)
    context = _context(inject, "alice", "What's my name? Do I take insulin?")
    assert "Alice" in context and "insulin" in context
    inject = create_inject_node(store=store, record_access=False, keyring=Keyring.generate())
    context = _context(inject, "alice", "What's my name? Do I take insulin?")
    assert "Alice" not in context and "insulin" in context


def test_include_private_false_leaves_private_facts_out(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1", keyring=None)
    vault.remember("User's name is Dana", private=True)
    vault.remember("User likes green tea")
    question = "What's my name, and what do I drink?"
    kept = create_inject_node(store=store, record_access=False)
    assert "Dana" in _context(kept, "u1", question)
    dropped = create_inject_node(store=store, record_access=False, include_private=False)
    context = _context(dropped, "u1", question)
    assert "green tea" in context and "Dana" not in context


async def test_private_facts_ranked_on_the_async_path(astore: BaseStore) -> None:
    ring = Keyring.generate()
    vault = MemoryVault(astore, user_id="u1", keyring=ring)
    await vault.aremember("User lives in Rotterdam", private=True, category="personal")
    await vault.aremember("User's sister is called Priya", private=True)
    for i, text in enumerate(_distractors(60)):
        await astore.aput(
            ("memories", "u1", "semantic"), f"d{i}", SemanticFact(text=text).to_store()
        )
    inject = create_inject_node(store=astore, record_access=False, keyring=ring, max_facts=3)
    update = await inject.node.ainvoke(
        {"messages": [HumanMessage("Which city is my home?")]}, thread("u1", "t2")
    )
    context = update["memory_context"]
    # ranked by meaning, not just listed: the city beats the sister in a 3-fact budget
    assert "Rotterdam" in context and "Priya" not in context


def test_a_store_without_embeddings_ranks_private_facts_by_words() -> None:
    store = InMemoryStore()
    vault = MemoryVault(store, user_id="u1", keyring=None)
    vault.remember("User's sister is called Priya", private=True)
    vault.remember("User's name is Dana", private=True)
    for i in range(30):
        vault.remember(f"User owns plant number {i}")
    inject = create_inject_node(store=store, record_access=False, max_facts=2)
    context = _context(inject, "u1", "what is my name")
    assert "Dana" in context and "Priya" not in context
