"""The LoCoMo evaluation on a small LoCoMo-format file (tests/eval/data), on a real VaultStore,
with InMemoryStore as the reference and a scripted model as answerer and judge."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.store.memory import InMemoryStore

from langmem_vault.db._connection import open_pool
from langmem_vault.embeddings import default_index, local_embeddings
from langmem_vault.eval._locomo import LocomoResult, run_locomo, steps
from langmem_vault.eval._locomo_data import (
    NOT_MENTIONED,
    LocomoFormatError,
    load_locomo,
    parse_locomo,
)
from langmem_vault.memory._entities import Entity, Relation
from langmem_vault.memory._vault import MemoryVault
from langmem_vault.offline._extractor import OfflineExtractor
from langmem_vault.store import VaultStore
from tests.eval.scripted import scripted_model

DATA = Path(__file__).parent / "data" / "mini_locomo.json"


@pytest.fixture(scope="module")
def embeddings() -> Any:
    return local_embeddings()


@pytest.fixture
def store(pg_uri: str, schema: str, embeddings: Any) -> Iterator[VaultStore]:
    with open_pool(pg_uri, max_size=2) as pool:
        vault_store = VaultStore(pool, schema=schema, index=default_index(embeddings))
        vault_store.setup()
        yield vault_store


def by_name(result: LocomoResult) -> dict[str, Any]:
    return {row.name: row for row in result.by_category()}


def test_the_file_is_read_with_categories_dates_and_loose_evidence() -> None:
    first, second = load_locomo(DATA)
    assert (first.sample_id, first.speakers, len(first.turns)) == ("mini-1", ("Ana", "Ben"), 12)
    assert first.turns[4].said_at is not None and first.turns[4].said_at.isoformat() == (
        "2023-06-12T16:30:00+00:00"
    )
    # a session's turns are said a second apart, in order
    assert [t.said_at - first.turns[4].said_at for t in first.turns[4:7]] == [
        timedelta(seconds=n) for n in range(3)
    ]
    assert first.turns[3].text.endswith("[shares a photo of a chess board]")
    questions = {q.question: q for q in first.questions}
    moved = questions["Where did Ana move?"]
    assert (moved.evidence, moved.unknown_evidence) == (("D1:1",), ("D3:9",))
    assert questions["What has Ana done with her sister?"].evidence == ("D2:1", "D3:1")
    trap = questions["What is the name of Ana's cat?"]
    assert (trap.category_name, trap.answer) == ("adversarial", NOT_MENTIONED)
    assert steps([first, second]) == 12 + 8 + 2 + 2


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "non-empty JSON list"),
        ([{"sample_id": "s", "conversation": {}, "qa": []}], "sample 0 (s).conversation: no"),
        (
            [
                {
                    "sample_id": "s",
                    "conversation": {
                        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]
                    },
                    "qa": [{"question": "q", "answer": "a", "evidence": [], "category": 9}],
                }
            ],
            "sample 0 (s).qa[0].category: must be 1 to 5, got 9",
        ),
        (
            [
                {
                    "sample_id": "s",
                    "conversation": {
                        "session_1_date_time": "yesterday",
                        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
                    },
                    "qa": [],
                }
            ],
            "session_1_date_time: date 'yesterday'",
        ),
    ],
)
def test_a_malformed_file_names_the_field(data: Any, message: str) -> None:
    with pytest.raises(LocomoFormatError, match=re.escape(message)):
        parse_locomo(data)


def test_recall_coverage_and_tokens_by_category(store: VaultStore, embeddings: Any) -> None:
    reference = InMemoryStore(index={"dims": 384, "embed": embeddings, "fields": ["text"]})
    seen: list[str] = []
    result = run_locomo(load_locomo(DATA), store, k=2, reference=reference, on_step=seen.append)
    rows = by_name(result)
    assert list(rows) == [
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
        "all four (1-4)",
    ]
    recall = {name: row.recall for name, row in rows.items()}
    # Multi-hop: both hospital turns found, one of the sister's two (the bakery is third).
    assert recall == pytest.approx(
        {
            "multi-hop": 0.75,
            "temporal": 1.0,
            "open-domain": 1.0,
            "single-hop": 1.0,
            "adversarial": 1.0,
            "all four (1-4)": 17 / 18,
        }
    )
    # The reference misses "Where did Ana move?" (its top two are the sister's and the job).
    assert rows["single-hop"].reference_recall == pytest.approx(0.8)
    assert rows["all four (1-4)"].reference_recall == pytest.approx(15 / 18)
    # The block holds the tournament turn and its date ("yesterday" said on 12 June 2023):
    # "11 June 2023" is all there.
    assert rows["temporal"].coverage == 1.0
    assert rows["single-hop"].coverage == 1.0
    assert rows["multi-hop"].coverage == pytest.approx((1.0 + 3 / 5) / 2)
    assert rows["adversarial"].coverage is None
    assert all(row.tokens > 20 for row in rows.values())
    assert len(seen) == 24 and seen[-1] == "mini-2: asking"
    # Each turn is one fact, dated by its session (a second per turn before it there, so the
    # session's turns keep their order), its turn named as its source.
    facts = MemoryVault(store, user_id="locomo-mini-1").list(limit=50)
    assert len(facts) == 12
    fact = next(f for f in facts if f.value.source_message_ids == ["D2:4"])
    assert fact.value.text == "Ben: I won the chess tournament at the club yesterday!"
    assert fact.value.observed_at.isoformat() == "2023-06-12T16:30:03+00:00"  # the 4th
    assert fact.value.valid_from.isoformat() == "2023-06-11T00:00:00+00:00"  # "yesterday"
    row = next(q for q in result.questions if q.question == "What is Cleo's cat called?")
    assert (row.sample_id, row.found[0], row.recall) == ("mini-2", "D1:1", 1.0)
    # Every answer is JSON.
    doc = json.loads(json.dumps(result.to_json()))
    assert len(doc["questions"]) == 10 and doc["k"] == 2


def test_a_model_answers_from_the_block_and_a_judge_scores_it(store: VaultStore) -> None:
    model = scripted_model()
    data = load_locomo(DATA)[:1]
    result = run_locomo(data, store, k=2, model=model)
    rows = by_name(result)
    # single-hop: Miso right, Paris wrong, the violin "Not mentioned": 1 of 3.
    assert rows["single-hop"].j == pytest.approx(1 / 3)
    assert rows["single-hop"].f1 == pytest.approx(1 / 3)
    assert rows["multi-hop"].j == pytest.approx(0.5)
    assert rows["multi-hop"].f1 == pytest.approx(0.5)
    # The trap's "Miso" is wrong; "Not mentioned" would have been right.
    assert (rows["adversarial"].j, rows["adversarial"].f1) == (0.0, 0.0)
    assert rows["all four (1-4)"].j == pytest.approx(2 / 7)
    # The answering prompt carries what inject selected for that question.
    asked = [p for p in model.prompts if str(p[-1].content) == "What is the name of Ben's cat?"]
    assert "Ben: Congrats! I just adopted a grey cat called Miso." in str(asked[0][0].content)
    assert model.calls == 2 * len(data[0].questions)


def test_the_pipeline_stores_what_extraction_keeps(store: VaultStore) -> None:
    data = load_locomo(DATA)[1:]
    # Patterns alone, no redaction: spaCy and Presidio would take a minute to load here.
    extractor = OfflineExtractor(use_spacy=False)
    result = run_locomo(data, store, k=2, pipeline=True, extractor=extractor, redaction=None)
    facts = MemoryVault(store, user_id="locomo-mini-2").list()
    assert sorted(tuple(f.value.source_message_ids) for f in facts) == [("D1:1",), ("D1:2",)]
    assert by_name(result)["single-hop"].recall == 1.0


def test_k_must_be_positive(store: VaultStore) -> None:
    with pytest.raises(ValueError, match="k must be at least 1, got 0"):
        run_locomo(load_locomo(DATA), store, k=0)


def _sister_finder(text: str) -> tuple[list[Entity], list[Relation]]:
    """A scripted entity finder: Priya, who goes by "sister" where the turn says so."""
    if "Priya" not in text:
        return [], []
    aliases = ["sister"] if "sister" in text else []
    return [Entity(name="Priya", kind="person", aliases=aliases)], []


def test_an_entity_finder_names_each_turns_entities_for_recall(store: VaultStore) -> None:
    data = load_locomo(DATA)[:1]
    sister = next(
        q for q in data[0].questions if q.question == "What has Ana done with her sister?"
    )
    plain = run_locomo(data, store, k=2)
    # without entities the bakery turn, which names Priya but no sister, is third
    assert next(q for q in plain.questions if q.question == sister.question).recall == 0.5
    named = run_locomo(data, store, k=2, entity_finder=_sister_finder)
    row = next(q for q in named.questions if q.question == sister.question)
    assert sorted(row.found) == ["D2:1", "D3:1"] and row.recall == 1.0
    facts = MemoryVault(store, user_id="locomo-mini-1").list(limit=50)
    bakery = next(f for f in facts if f.value.source_message_ids == ["D3:1"])
    assert [e.name for e in bakery.value.entities] == ["Priya"]


def test_each_conversation_is_analyzed_before_its_questions(store: VaultStore, pg_uri: str) -> None:
    # The keyword weights come from Postgres's statistics of the stored texts. The second
    # conversation's turns are too few for the first search's staleness check (it analyzes
    # once the table doubles past common_rows) and for autovacuum (50 rows): without an
    # ANALYZE of its own, its questions would be ranked by the first conversation's
    # statistics, or by whichever autovacuum left, differently from run to run.
    data = load_locomo(DATA)
    run_locomo(data, store, k=2)
    with psycopg.connect(pg_uri) as conn:
        (analyzed,) = conn.execute(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass",
            (f"{store.schema}.store_items",),
        ).fetchone()  # type: ignore[misc]
    # every turn of both (the inject accounting written in the background may add a row)
    assert analyzed >= sum(len(conv.turns) for conv in data) == 14
