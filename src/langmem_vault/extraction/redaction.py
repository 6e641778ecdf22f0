"""PII redaction of what extract proposes, before anything of it is stored.

Every text of an extraction (fact text and evidence, episode summary, instruction text) goes
through :func:`langmem_vault.privacy.redact`. A fact whose text or evidence holds an entity the
policy keeps as private (a date of birth; with :meth:`RedactionPolicy.strict`, any name or
place) or touches one of the policy's ``private_topics`` (health, money...) is flagged
``private``, so it is sealed and never indexed downstream (its owner's inject still recalls it).

>>> from langmem_vault.memory.models import Extraction, ProposedFact
>>> out = redact_extraction(Extraction(facts=[ProposedFact(
...     text="My email is jane@example.com", evidence="my email is jane@example.com")]))
>>> out.facts[0].text
'My email is <EMAIL>'
"""

from __future__ import annotations

from langmem_vault.memory.models import Extraction
from langmem_vault.privacy.redaction.pii import redact
from langmem_vault.privacy.redaction.policy import DEFAULT_POLICY, RedactionPolicy
from langmem_vault.privacy.redaction.sensitive import sensitive_topics


def redact_extraction(
    extraction: Extraction, policy: RedactionPolicy = DEFAULT_POLICY
) -> Extraction:
    """A copy of ``extraction`` with every text redacted under ``policy``."""
    facts = []
    for fact in extraction.facts:
        text = redact(fact.text, policy=policy)
        evidence = redact(fact.evidence, policy=policy) if fact.evidence else None
        topics = sensitive_topics(text.text, [evidence.text] if evidence else [])
        private = (
            fact.private
            or text.private
            or bool(evidence and evidence.private)
            or bool(topics & policy.private_topics)
        )
        facts.append(
            fact.model_copy(
                update={
                    "text": text.text,
                    "evidence": evidence.text if evidence else None,
                    "private": private,
                }
            )
        )
    episode = extraction.episode
    if episode is not None:
        episode = episode.model_copy(
            update={"summary": redact(episode.summary, policy=policy).text}
        )
    instructions = [
        i.model_copy(update={"text": redact(i.text, policy=policy).text})
        for i in extraction.instructions
    ]
    return extraction.model_copy(
        update={"facts": facts, "episode": episode, "instructions": instructions}
    )


def redact_text(text: str, policy: RedactionPolicy | None) -> str:
    """``text`` redacted under ``policy``; unchanged when ``policy`` is None (redaction off)."""
    return redact(text, policy=policy).text if policy is not None and text else text
