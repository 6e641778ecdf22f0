"""MemoryVault.recall: branches fused by reciprocal rank, score parts, as_of, plug-in branches
(InMemoryStore and VaultStore on the embedded Postgres, sync and async)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from langgraph.store.base import BaseStore, Item, SearchItem

from langmem_vault.db._steps import run_steps
from langmem_vault.memory import MemoryVault, Recalled
from langmem_vault.memory._models import utcnow
from langmem_vault.memory._recall.fusion import fuse, fuse_more
from langmem_vault.memory._recall.recall_plan import Candidate, RecallQuery, recall_plan
from langmem_vault.offline import find_entities
from langmem_vault.store import AsyncVaultStore, VaultStore

FACTS = [
    "Lives in Lyon since 2023",
    "Works as a nurse at the Croix-Rousse hospital",
    "Plays chess with Priya on Sundays",
    "Allergic to peanuts",
]


def _check_parts(hits: Sequence[Recalled], store: BaseStore) -> None:
    assert hits and all(isinstance(h, Recalled) for h in hits)
    assert hits[0].value.text == "Plays chess with Priya on Sundays"
    best = hits[0]
    assert best.fused > 0 and best.score is not None
    assert best.parts["vector"].rank == 1 and best.parts["vector"].score > 0
    if isinstance(store, VaultStore | AsyncVaultStore):
        # the store reports the keyword part: "chess" and "Priya" are the query's words
        assert best.parts["keyword"].rank == 1 and best.parts["keyword"].score > 0
    # fused scores rank the results (the usual blend keeps them in that order here)
    assert [h.fused for h in hits] == sorted((h.fused for h in hits), reverse=True)


def test_recall_returns_score_parts(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for text in FACTS:
        vault.remember(text)
    _check_parts(vault.recall("who do I play chess with, Priya?", limit=3), store)


async def test_arecall_returns_score_parts(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for text in FACTS:
        await vault.aremember(text)
    _check_parts(await vault.arecall("who do I play chess with, Priya?", limit=3), astore)


def test_fusion_puts_two_branches_above_one() -> None:
    # "b" tops the vector list alone; "a" is second there and first by keyword
    fused = fuse({"vector": [("b", 0.9), ("a", 0.8)], "keyword": [("a", 0.4)]})
    assert [f.key for f in fused] == ["a", "b"]
    assert set(fused[0].parts) == {"vector", "keyword"} and set(fused[1].parts) == {"vector"}


def test_fusing_one_more_list_ranks_as_fusing_all_at_once() -> None:
    lists = {
        "vector": [("a", 0.9), ("b", 0.8), ("c", 0.7)],
        "keyword": [("c", 0.6), ("a", 0.5)],
        "neighbour": [("d", 0.3), ("b", 0.2), ("b", 0.1)],
    }
    weights = {"keyword": 1.5, "neighbour": 0.6}
    first = fuse({n: lists[n] for n in ("vector", "keyword")}, weights)
    more = fuse_more(first, "neighbour", lists["neighbour"], 0.6)
    assert [(f.key, pytest.approx(f.score), f.parts) for f in more] == [
        (f.key, pytest.approx(f.score), f.parts) for f in fuse(lists, weights)
    ]


def _dated(vault: MemoryVault) -> tuple[str, str]:
    paris = vault.remember("The user lives in Paris").key
    vault.update(
        paris,
        valid_from=datetime(2019, 1, 1, tzinfo=UTC),
        valid_to=datetime(2023, 5, 1, tzinfo=UTC),
        status="superseded",
    )
    lyon = vault.remember("The user lives in Lyon").key
    vault.update(lyon, valid_from=datetime(2023, 5, 1, tzinfo=UTC))
    return paris, lyon


def test_as_of_answers_from_what_held_then(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    paris, lyon = _dated(vault)
    question = "where does the user live"
    assert [m.key for m in vault.recall(question)] == [lyon]
    assert [m.key for m in vault.recall(question, as_of=datetime(2021, 6, 1, tzinfo=UTC))] == [
        paris
    ]
    assert vault.recall(question, as_of=datetime(2010, 1, 1, tzinfo=UTC)) == []


async def test_as_of_async(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    paris = (await vault.aremember("The user lives in Paris")).key
    await vault.aupdate(
        paris,
        valid_from=datetime(2019, 1, 1, tzinfo=UTC),
        valid_to=datetime(2023, 5, 1, tzinfo=UTC),
        status="superseded",
    )
    then = datetime(2021, 6, 1, tzinfo=UTC)
    assert [m.key for m in await vault.arecall("where", as_of=then)] == [paris]
    assert await vault.arecall("where") == []


class Pinned:
    """A branch that ranks one stored fact first (found by its own store op)."""

    name = "pinned"

    def __init__(self, namespace: tuple[str, ...], key: str) -> None:
        self.namespace, self.key = namespace, key

    def ops(self, query: RecallQuery) -> Sequence[Any]:
        from langgraph.store.base import GetOp

        return [GetOp(self.namespace, self.key)]

    def rank(
        self, query: RecallQuery, results: Sequence[Any], pool: Mapping[Any, Candidate]
    ) -> Sequence[tuple[SearchItem | Item, float]]:
        return [(item, 1.0) for item in results if item is not None]


def test_a_branch_plugs_in_as_one_more_list(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    keys = [vault.remember(text).key for text in FACTS]
    # no built-in branch but vector and keyword ranks for this question ("who..." would ask
    # the instances branch for people's names)
    query = RecallQuery(vault.ns.semantic, "do I play chess with anyone", candidates=50)
    plain = run_steps(recall_plan(query, utcnow()), store)
    assert plain[0].key == keys[2]
    pinned = run_steps(
        recall_plan(query, utcnow(), branches=[Pinned(vault.ns.semantic, keys[3])]), store
    )
    assert pinned[0].key == keys[3]  # peanuts: first in its own list
    assert pinned[0].parts["pinned"].rank == 1


SISTER = ["My sister is Priya.", "Priya recommended Dune.", "Tom plays chess.", "I live in Lyon."]


def _sister_hits(hits: Sequence[Recalled]) -> None:
    dune = [h for h in hits if h.value.text == "Priya recommended Dune."]
    assert dune and dune[0].parts["entity"].rank <= 2
    assert hits[0].parts.get("entity") is not None


def test_recall_expands_the_entities_the_query_names(
    pg_uri: str, schema: str, index: dict[str, Any]
) -> None:
    with VaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        store.setup()
        vault = MemoryVault(store, user_id="u1", entity_finder=find_entities)
        for text in SISTER:
            vault.remember(text)
        _sister_hits(vault.recall("what did my sister recommend?", limit=3))


async def test_arecall_expands_the_entities_the_query_names(
    pg_uri: str, schema: str, index: dict[str, Any]
) -> None:
    async with AsyncVaultStore.from_conn_string(pg_uri, index=index, schema=schema) as store:  # type: ignore[arg-type]
        await store.setup()
        vault = MemoryVault(store, user_id="u1", entity_finder=find_entities)
        for text in SISTER:
            await vault.aremember(text)
        _sister_hits(await vault.arecall("what did my sister recommend?", limit=3))


def _at(year: int, month: int, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


DINNERS = [
    ("Cooked a mushroom risotto for dinner", _at(2023, 1, 14)),
    ("Cooked lasagna for dinner", _at(2023, 5, 9)),
    ("Cooked a vegetable curry for dinner", _at(2023, 7, 2)),
]


def test_a_question_with_a_date_ranks_what_happened_then(store: BaseStore) -> None:
    # three dinners alike but for when: the time branch picks May's
    vault = MemoryVault(store, user_id="u1")
    for text, said in DINNERS:
        vault.remember(text, observed_at=said)
    hits = vault.recall("What did I cook for dinner in May 2023?", limit=3)
    assert hits[0].value.text == "Cooked lasagna for dinner"
    assert hits[0].parts["time"].rank == 1
    assert all("time" not in h.parts for h in hits[1:])  # said in January and July
    # no date in the question: no time branch
    assert all("time" not in h.parts for h in vault.recall("What did I cook for dinner?"))


async def _moves(vault: MemoryVault) -> tuple[str, str]:
    porto = await vault.aremember(
        "Lived in Porto", valid_from=_at(2015, 9), valid_to=_at(2022, 3), observed_at=_at(2016, 1)
    )
    lyon = await vault.aremember("Moved to Lyon", valid_from=_at(2022, 3), observed_at=_at(2022, 3))
    return porto.key, lyon.key


async def test_before_an_event_finds_the_fact_that_held_then(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    porto, lyon = await _moves(vault)
    # Porto's validity ended in 2022: plain recall no longer returns it...
    assert [m.key for m in await vault.arecall("Where do I live?")] == [lyon]
    # ...a question before the move (its time read from the Lyon fact) does
    hits = await vault.arecall("Where did I live before I moved to Lyon?")
    assert [m.key for m in hits] == [porto]
    assert hits[0].parts["time"].rank == 1
    # a place standing for the event, and a date's window, admit it the same way
    assert [m.key for m in await vault.arecall("Where did I live before Lyon?")] == [porto]
    assert [m.key for m in await vault.arecall("Where did I live in 2019?")] == [porto]


INSTRUMENTS = [
    "Maya asked which shop sells musical instruments cheaply",
    "Maya plays tennis on Saturdays",
    "Maya practised the violin for an hour",
    "Maya wants to play in a band with friends",
    "Maya bought a second-hand piano",
]


def _check_instances(hits: Sequence[Recalled]) -> None:
    # neither answer says "instruments": the lexicon names violin and piano as instances
    assert {h.value.text for h in hits} == {INSTRUMENTS[2], INSTRUMENTS[4]}
    assert all(h.parts["instances"].rank in (1, 2) for h in hits)


def test_a_question_for_a_category_finds_its_instances(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for text in INSTRUMENTS:
        vault.remember(text)
    _check_instances(vault.recall("Which instruments does Maya play?", limit=2))
    # no category in the question: no instances branch
    assert all("instances" not in h.parts for h in vault.recall("What does Maya play?"))


async def test_a_question_for_a_category_finds_its_instances_async(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for text in INSTRUMENTS:
        await vault.aremember(text)
    _check_instances(await vault.arecall("Which instruments does Maya play?", limit=2))


# one conversation (a question and its answer), then five other threads
CHAT = [
    ("chat", "Ana: How has your family supported you during the move?"),
    ("chat", "Maya: Honestly, I could not have done it without them."),
    ("a", "Maya: My parents relocated to Porto last year."),
    ("b", "Maya: Relocating across the country is stressful."),
    ("c", "Maya: My cousins live near the new flat."),
    ("d", "Maya: Packing boxes took the whole weekend."),
    ("e", "Maya: My relatives phoned me every day last week."),
]
SUPPORT = "How did I feel about my family's support during the move?"


def _said(n: int) -> datetime:
    return datetime(2024, 3, 2, 18, 0, n, tzinfo=UTC)


def _check_neighbours(best: Sequence[Recalled], every: Sequence[Recalled]) -> None:
    # the reply shares no word with the question: it ranks by being said right after the
    # best match, in the same conversation
    assert {h.value.text for h in best} == {CHAT[0][1], CHAT[1][1]}
    reply = next(h for h in best if h.value.text == CHAT[1][1])
    assert reply.parts["neighbour"].rank == 1
    # said just after the answer, but in another thread: no neighbour of it
    porto = next(h for h in every if h.value.text == CHAT[2][1])
    assert "neighbour" not in porto.parts


def test_the_reply_to_the_best_match_ranks_beside_it(store: BaseStore) -> None:
    vault = MemoryVault(store, user_id="u1")
    for n, (thread, text) in enumerate(CHAT):
        vault.remember(text, thread_id=thread, observed_at=_said(n))
    _check_neighbours(vault.recall(SUPPORT, limit=2), vault.recall(SUPPORT, limit=len(CHAT)))


async def test_the_reply_to_the_best_match_ranks_beside_it_async(astore: BaseStore) -> None:
    vault = MemoryVault(astore, user_id="u1")
    for n, (thread, text) in enumerate(CHAT):
        await vault.aremember(text, thread_id=thread, observed_at=_said(n))
    _check_neighbours(
        await vault.arecall(SUPPORT, limit=2), await vault.arecall(SUPPORT, limit=len(CHAT))
    )
