"""The schema the extraction model fills: facts (with the entities and relations each names),
an episode, instructions, under aliases.

Types are loose on purpose (a float where a range is meant, a free string for the category):
:mod:`~langmem_vault.extraction._checks` clamps values instead of failing the whole call.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from langmem_vault.memory._models import CATEGORIES


class AliasEntity(BaseModel):
    """Someone or something a fact names."""

    name: str = Field(description="Proper name as said: 'Priya', 'Acme', 'Lyon', 'Mochi'.")
    kind: str = Field(default="thing", description="person, place, organisation, pet or thing")
    aliases: list[str] = Field(
        default_factory=list,
        description="How the user refers to them, first person: 'my sister', 'my boss'.",
    )


class AliasRelation(BaseModel):
    """A relation between two entities of the same fact."""

    subject: str = Field(description="An entity's name.")
    predicate: str = Field(description="Short verb phrase: 'recommended', 'works at'.")
    object: str = Field(description="Another entity's name.")


class AliasFact(BaseModel):
    """A fact about the user, stated in the conversation."""

    text: str = Field(description="The fact, as a short third-person statement.")
    category: str = Field(default="general", description="One of: " + ", ".join(CATEGORIES))
    confidence: float = Field(default=0.7, description="0-1: how clearly the user stated it.")
    evidence: str = Field(default="", description="Exact quote from the conversation.")
    tags: list[str] = Field(default_factory=list)
    same_as: str | None = Field(
        default=None, description="Alias (F1...) of a known fact it repeats."
    )
    supersedes: str | None = Field(
        default=None, description="Alias (F1...) of a known fact it contradicts or replaces."
    )
    entities: list[AliasEntity] = Field(default_factory=list)
    relations: list[AliasRelation] = Field(default_factory=list)
    valid_from: str | None = Field(
        default=None,
        description="When it started to hold, only if the turn says (YYYY, YYYY-MM or "
        "YYYY-MM-DD), relative dates resolved against the date the message was said.",
    )
    valid_to: str | None = Field(
        default=None, description="When it stopped holding, only if the turn says; same form."
    )


class AliasEpisode(BaseModel):
    """What happened in these turns, if worth remembering."""

    summary: str
    importance: float = Field(default=0.5, description="0-1")
    outcome: str | None = None
    topics: list[str] = Field(default_factory=list)


class AliasInstruction(BaseModel):
    """A standing instruction the USER gave for future conversations."""

    text: str = Field(description="The instruction, imperative form.")
    priority: int = Field(default=5, description="1-10")
    condition: str | None = Field(
        default=None, description="Optional: 'topic contains X' or 'weekday is Monday'."
    )
    evidence: str = Field(default="", description="Exact quote of the user's words.")


class ExtractionProposal(BaseModel):
    """Facts, an optional episode and standing instructions found in the new turns."""

    facts: list[AliasFact] = Field(default_factory=list)
    episode: AliasEpisode | None = None
    instructions: list[AliasInstruction] = Field(default_factory=list)
