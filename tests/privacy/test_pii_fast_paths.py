"""The redactor's shortcuts change nothing it finds: the NER pre-check (names.needs_ner), the
digit gates that keep recognizers off texts they cannot match, and batching (redact_many)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spacy.lang.en import English

from langmem_vault.privacy import RedactionPolicy, detect_many, redact, redact_many
from langmem_vault.privacy._redaction import pii
from langmem_vault.privacy._redaction.engine import get_engines
from langmem_vault.privacy._redaction.names import needs_ner

PII_SET = Path(__file__).parents[2] / "bench" / "data" / "pii" / "pii_sentences.json"
POLICY = RedactionPolicy.redact_all()

# Cases near the edges of the shortcuts, beside a sample of the labelled set.
EDGE_CASES = [
    "i met anna yesterday and she said hi",
    "we moved to leeds last year",
    "originally from lyon, now in paris",
    "lunch with (Zoe) tomorrow",
    "ask zoe-Marie about it",
    "User likes Python and Rust",
    "My daughter Zoe just turned seven",
    "the router is at fe80::1ff:fe23:4567:890a",
    "the router is at abcd:ef::cafe",
    "ip 10.0.0.1",
    "born 1985",
    "my pin is 4321",
    "call 555 0199",
    "ssn 078-05-1120",
    "nothing personal here at all",
    "   ",
    "",
]


def _sample() -> list[str]:
    records = json.loads(PII_SET.read_text())["records"]
    return [r["text"] for r in records[::8]] + EDGE_CASES


def _all_entities(text: str, policy: RedactionPolicy) -> list[str]:
    return [e.value for e in policy.actions]


def test_shortcuts_find_what_the_full_pipeline_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _sample()
    fast = detect_many(texts, policy=POLICY)
    # The slow path: the model on every text, every recognizer on every text.
    monkeypatch.setattr("langmem_vault.privacy._redaction.engine.needs_ner", lambda doc: True)
    monkeypatch.setattr(pii, "_entities_for", _all_entities)
    slow = detect_many(texts, policy=POLICY)
    differences = [(t, f, s) for t, f, s in zip(texts, fast, slow, strict=True) if f != s]
    assert not differences
    assert sum(bool(hits) for hits in slow) > len(texts) // 2  # the sample does hold PII


def test_the_pre_check_skips_the_model_only_without_a_candidate() -> None:
    nlp = English()
    needs = {t: needs_ner(nlp.make_doc(t)) for t in EDGE_CASES}
    # A residence cue, or a capitalised word that is neither common nor a known non-name
    # (also inside brackets or after a hyphen), sends the text to the model.
    assert [t for t, need in needs.items() if need] == [
        "we moved to leeds last year",
        "originally from lyon, now in paris",
        "lunch with (Zoe) tomorrow",
        "ask zoe-Marie about it",
        "My daughter Zoe just turned seven",
        "born 1985",
    ]


def test_the_model_runs_once_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    nlp_engine = get_engines().analyzer.nlp_engine
    pipeline = nlp_engine.nlp["en"]  # type: ignore[index]
    calls: list[int] = []
    real_pipe = type(pipeline).pipe

    def counting_pipe(self: object, docs: list[object], **kw: object) -> object:
        docs = list(docs)
        calls.append(len(docs))
        return real_pipe(self, docs, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(type(pipeline), "pipe", counting_pipe)
    texts = ["Zoe lives in Leeds", "i like tea", "Call Priya on 555-010-9999", "Ben said hi"]
    results = redact_many(texts, policy=POLICY)
    assert calls == [3]  # one model pass over the three texts with a candidate
    assert [r.text for r in results] == [redact(t, policy=POLICY).text for t in texts]


def test_redact_many_matches_redact_and_validates_first() -> None:
    texts = ["mail jo@example.com", "", "I had lunch with Priya Patel", "card 4111 1111 1111 1111"]
    assert redact_many(texts, policy=POLICY) == [redact(t, policy=POLICY) for t in texts]
    assert redact_many([]) == []
    with pytest.raises(ValueError, match="NUL"):
        redact_many(["fine text", "bad\x00text"])
    with pytest.raises(TypeError, match="expected str"):
        redact_many(["fine text", 3])  # type: ignore[list-item]
