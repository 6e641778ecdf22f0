"""PII redaction of what extract proposes, before anything of it is stored.

Every text of an extraction (fact text and evidence, episode summary, instruction text) goes
through :func:`langmem_vault.privacy.redact`. A fact whose text or evidence holds an entity the
policy keeps as private (a date of birth; with :meth:`RedactionPolicy.strict`, any name or
place) or touches one of the policy's ``private_topics`` (health, money...) is flagged
``private``, so it is sealed and never indexed downstream (its owner's inject still recalls it).
A fact keeps only the entities its redacted text still names: a name redaction took out of the
text does not stay beside it (``memory._entities.mentioned_in``).

>>> from langmem_vault.memory._models import Extraction, ProposedFact
>>> out = redact_extraction(Extraction(facts=[ProposedFact(
...     text="My email is jane@example.com", evidence="my email is jane@example.com")]))
>>> out.facts[0].text
'My email is <EMAIL>'
"""

from __future__ import annotations

from langmem_vault.extraction._messages import clean_text
from langmem_vault.memory._entities import mentioned_in
from langmem_vault.memory._models import Extraction, FactCategory, ProposedFact
from langmem_vault.privacy._redaction.pii import redact, redact_many
from langmem_vault.privacy._redaction.policy import DEFAULT_POLICY, RedactionPolicy
from langmem_vault.privacy._redaction.sensitive import sensitive_topics


def redact_extraction(
    extraction: Extraction, policy: RedactionPolicy = DEFAULT_POLICY
) -> Extraction:
    """A copy of ``extraction`` with every text redacted under ``policy``, in one batch."""
    facts_in = extraction.facts
    episode = extraction.episode
    texts = [f.text for f in facts_in] + [f.evidence or "" for f in facts_in]
    texts += [i.text for i in extraction.instructions]
    texts += [episode.summary] if episode is not None else []
    results = iter(redact_many(texts, policy=policy))
    fact_texts = [next(results) for _ in facts_in]
    evidences = [next(results) for _ in facts_in]
    instructions = [
        i.model_copy(update={"text": next(results).text}) for i in extraction.instructions
    ]
    if episode is not None:
        episode = episode.model_copy(update={"summary": next(results).text})
    facts = []
    for fact, text, evidence in zip(facts_in, fact_texts, evidences, strict=True):
        has_evidence = bool(fact.evidence)
        topics = sensitive_topics(text.text, [evidence.text] if has_evidence else [])
        private = (
            fact.private
            or text.private
            or (has_evidence and evidence.private)
            or bool(topics & policy.private_topics)
        )
        entities, relations = mentioned_in(text.text, fact.entities, fact.relations)
        facts.append(
            fact.model_copy(
                update={
                    "text": text.text,
                    "evidence": evidence.text if has_evidence else None,
                    "private": private,
                    "entities": entities,
                    "relations": relations,
                }
            )
        )
    return extraction.model_copy(
        update={"facts": facts, "episode": episode, "instructions": instructions}
    )


def stated_fact(
    text: str,
    *,
    category: FactCategory = "general",
    private: bool = False,
    supersedes: str | None = None,
    policy: RedactionPolicy | None = DEFAULT_POLICY,
) -> Extraction:
    """A fact stated outright (an agent's memory tool, an MCP client), as a redacted extraction.

    Told directly, so fully confident, and its words are its evidence; the text is cleaned
    first, as memory reads any text (:func:`~langmem_vault.extraction._messages.clean_text`);
    reconcile then treats it like any extracted fact (``policy`` None: redaction off).

    >>> stated_fact("Mail me at jane@example.com").facts[0].text
    'Mail me at <EMAIL>'
    """
    text = clean_text(text)
    fact = ProposedFact(
        text=text,
        category=category,
        confidence=1.0,
        evidence=text,
        private=private,
        supersedes=supersedes,
    )
    extraction = Extraction(facts=[fact])
    return redact_extraction(extraction, policy) if policy is not None else extraction


def redact_text(text: str, policy: RedactionPolicy | None) -> str:
    """``text`` redacted under ``policy``; unchanged when ``policy`` is None (redaction off)."""
    return redact(text, policy=policy).text if policy is not None and text else text
