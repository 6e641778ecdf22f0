"""Typed values for the three memory kinds, and the schema extract hands to reconcile.

Values are stored as JSON dicts in any BaseStore (``model.to_store()``) and read back with
``SemanticFact.from_store(item.value)``. Every field is validated: a bad value raises a
pydantic ``ValidationError`` naming the field and the limit, before anything is written.

>>> fact = SemanticFact(text="Prefers window seats", category="preference", confidence=0.9)
>>> SemanticFact.from_store(fact.to_store()).text
'Prefers window seats'
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal, Self, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from langmem_vault.memory._conditions import parse_condition
from langmem_vault.memory._entities import Entity, Relation
from langmem_vault.memory._layers import Layer

__all__ = [
    "CATEGORIES",
    "Episode",
    "Extraction",
    "FactCategory",
    "FactSource",
    "FactStatus",
    "Instruction",
    "MemoryLayer",
    "MemoryModel",
    "ProposedEpisode",
    "ProposedFact",
    "ProposedInstruction",
    "SemanticFact",
    "TimedModel",
    "index_fields_for",
]

FactCategory = Literal[
    "preference",
    "decision",
    "relationship",
    "project",
    "company",
    "personal",
    "skill",
    "knowledge",
    "commitment",
    "strategic",
    "general",
]
CATEGORIES: tuple[str, ...] = get_args(FactCategory)
FactSource = Literal["manual", "conversation", "import"]
FactStatus = Literal["active", "pending_confirmation", "superseded"]
EpisodeSource = Literal["conversation", "compaction", "manual", "import"]
#: see memory.layers: short-term (this session, 2 h), working (recent, 7 d), long-term
MemoryLayer = Layer

MAX_TEXT = 2000
MAX_EVIDENCE = 2000
MAX_SUMMARY = 4000
MAX_TAGS = 20
MAX_TAG = 50
MAX_ENTITIES = 20


def utcnow() -> datetime:
    """The current time, timezone-aware (every stored timestamp is UTC)."""
    return datetime.now(UTC)


def _clean_text(value: str) -> str:
    cleaned = " ".join(value.split())
    if not cleaned:
        raise ValueError("must not be empty or only whitespace")
    return cleaned


def _clean_tags(tags: list[str]) -> list[str]:
    if len(tags) > MAX_TAGS:
        raise ValueError(f"at most {MAX_TAGS} tags, got {len(tags)}")
    seen: list[str] = []
    for tag in tags:
        norm = " ".join(tag.split()).lower()
        if not norm:
            continue
        if len(norm) > MAX_TAG:
            raise ValueError(f"tag {norm[:20]!r}... longer than {MAX_TAG} characters")
        if norm not in seen:
            seen.append(norm)
    return seen


def _aware(value: datetime | None) -> datetime | None:
    # Naive datetimes are read as UTC so comparisons never mix naive and aware values.
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


CleanText = Annotated[str, AfterValidator(_clean_text)]
Tags = Annotated[list[str], AfterValidator(_clean_tags)]
Stamp = Annotated[datetime, AfterValidator(_aware)]


class MemoryModel(BaseModel):
    """Base for stored memory values: strict fields, JSON round trip through a store."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    #: the value fields the store's vector/full-text index should cover
    index_fields: ClassVar[list[str]] = ["text"]

    def to_store(self) -> dict[str, Any]:
        """The JSON-safe dict to put into a BaseStore."""
        return self.model_dump(mode="json")

    @classmethod
    def from_store(cls, value: dict[str, Any]) -> Self:
        """Rebuild from a stored dict (unknown keys are ignored)."""
        return cls.model_validate(value)


class TimedModel(MemoryModel):
    """When a memory was said (``observed_at``) and when it holds in the world (``valid_from``,
    ``valid_to``; None where unknown: open-ended). See :mod:`langmem_vault.memory._dates`.

    A value stored before ``observed_at`` existed was said when it was created:
    :meth:`said_at`.

    >>> old = SemanticFact.from_store({"text": "Likes tea", "created_at": "2021-03-04T00:00:00Z"})
    >>> old.observed_at, old.said_at().year, old.valid_from
    (None, 2021, None)
    """

    observed_at: Stamp | None = None
    valid_from: Stamp | None = None
    valid_to: Stamp | None = None

    def said_at(self) -> datetime:
        """When it was said: ``observed_at``, else its creation."""
        return self.observed_at or getattr(self, "created_at", None) or utcnow()

    @model_validator(mode="after")
    def _check_validity(self) -> Self:
        start, end = self.valid_from, self.valid_to
        if start is not None and end is not None and end < start:
            raise ValueError("valid_to must not be earlier than valid_from")
        return self


class SemanticFact(TimedModel):
    """A fact about the user: what it says, how sure we are, where it came from, when valid.

    A superseded fact is closed (``valid_to`` set, ``status="superseded"``), never deleted:
    see :meth:`closed`.

    >>> SemanticFact(text="Works at Acme", category="company").status
    'active'
    """

    kind: Literal["semantic"] = "semantic"
    text: CleanText = Field(min_length=1, max_length=MAX_TEXT)
    category: FactCategory = "general"
    tags: Tags = Field(default_factory=list)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    source: FactSource = "manual"
    source_thread_id: str | None = None
    source_message_ids: list[str] = Field(default_factory=list)
    evidence: str | None = Field(default=None, max_length=MAX_EVIDENCE)
    created_at: Stamp = Field(default_factory=utcnow)
    updated_at: Stamp = Field(default_factory=utcnow)
    status: FactStatus = "active"
    private: bool = False
    access_count: int = Field(default=0, ge=0)
    last_accessed: Stamp | None = None
    #: learned usefulness in [0, 1]; 0.5 is neutral (raised when the model cites the fact)
    utility: float = Field(default=0.5, ge=0.0, le=1.0)
    #: how many times extraction proposed this fact again (reconcile raises confidence)
    mentions: int = Field(default=1, ge=1)
    supersedes: str | None = None
    superseded_by: str | None = None
    #: the lifecycle layer (memory.layers); values stored before layers existed never
    #: expired, so they read as long-term
    layer: MemoryLayer = "long_term"
    #: who and what it names, and how they relate (memory._entities): sealed with the text of
    #: a private fact, indexed in the store's entity tables otherwise
    entities: list[Entity] = Field(default_factory=list, max_length=MAX_ENTITIES)
    relations: list[Relation] = Field(default_factory=list, max_length=MAX_ENTITIES)

    def closed(self, at: datetime, *, by: str | None = None, now: datetime | None = None) -> Self:
        """This fact superseded (kept, never deleted): it stopped holding at ``at`` (the new
        fact's start, or when it was said), never before it began nor after an end it already
        had; ``by`` is the key of the fact that replaces it.

        >>> from datetime import datetime, UTC
        >>> porto = SemanticFact(text="Lives in Porto", valid_from=datetime(2019, 1, 1, tzinfo=UTC))
        >>> porto.closed(datetime(2021, 1, 1, tzinfo=UTC), by="k2").valid_to.year
        2021
        """
        end = at if self.valid_to is None else min(at, self.valid_to)
        if self.valid_from is not None:
            end = max(end, self.valid_from)
        update: dict[str, Any] = {
            "status": "superseded",
            "valid_to": end,
            "updated_at": now or utcnow(),
        }
        if by is not None:
            update["superseded_by"] = by
        return self.model_copy(update=update)

    def start(self) -> datetime:
        """When this fact began to hold, as far as we know: ``valid_from``, else when it was
        said. A fact that replaces another closes the old one here."""
        return self.valid_from or self.said_at()

    def is_current(self, now: datetime | None = None) -> bool:
        """Active and inside its validity interval."""
        moment = now or utcnow()
        return self.status == "active" and (self.valid_to is None or self.valid_to > moment)


class Episode(TimedModel):
    """What happened in a span of a conversation.

    >>> Episode(summary="Planned the Rome trip", importance=0.7, thread_id="t1").topics
    []
    """

    index_fields: ClassVar[list[str]] = ["summary"]

    kind: Literal["episode"] = "episode"
    summary: CleanText = Field(min_length=1, max_length=MAX_SUMMARY)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    thread_id: str | None = None
    started_at: Stamp = Field(default_factory=utcnow)
    ended_at: Stamp = Field(default_factory=utcnow)
    outcome: str | None = Field(default=None, max_length=500)
    topics: Tags = Field(default_factory=list)
    source: EpisodeSource = "conversation"
    source_message_ids: list[str] = Field(default_factory=list)
    created_at: Stamp = Field(default_factory=utcnow)
    access_count: int = Field(default=0, ge=0)
    last_accessed: Stamp | None = None
    layer: MemoryLayer = "long_term"
    #: who and what it names: the store's entity index links them as it links a fact's
    entities: list[Entity] = Field(default_factory=list, max_length=MAX_ENTITIES)
    relations: list[Relation] = Field(default_factory=list, max_length=MAX_ENTITIES)

    @model_validator(mode="after")
    def _check_range(self) -> Self:
        if self.ended_at < self.started_at:
            raise ValueError("ended_at must not be earlier than started_at")
        return self


class Instruction(MemoryModel):
    """A standing instruction ("always answer in French"), optionally conditional.

    ``condition`` uses the syntax of :mod:`langmem_vault.memory._conditions`
    ("topic contains travel", "weekday is Monday", joined by " and ").

    >>> Instruction(text="Answer in French", priority=8, condition="topic contains paris").active
    True
    """

    kind: Literal["instruction"] = "instruction"
    text: CleanText = Field(min_length=1, max_length=MAX_TEXT)
    priority: int = Field(default=5, ge=1, le=10)
    condition: str | None = Field(default=None, max_length=500)
    expires_at: Stamp | None = None
    active: bool = True
    usage_count: int = Field(default=0, ge=0)
    source: FactSource = "manual"
    source_thread_id: str | None = None
    created_at: Stamp = Field(default_factory=utcnow)
    updated_at: Stamp = Field(default_factory=utcnow)

    @field_validator("condition")
    @classmethod
    def _check_condition(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parse_condition(value)  # raises ValueError naming the clause
        return " ".join(value.split())

    def applies(self, message: str | None, now: datetime | None = None) -> bool:
        """Active, not expired, and its condition holds for this message and time."""
        moment = now or utcnow()
        if not self.active or (self.expires_at is not None and self.expires_at <= moment):
            return False
        return parse_condition(self.condition).holds(message, moment)


def index_fields_for(value: dict[str, Any]) -> list[str]:
    """The fields to index for a stored memory dict, from its ``kind``.

    Rewrites that may change the text re-index; counter updates pass ``index=False``, which
    keeps the existing index on InMemoryStore, PostgresStore and VaultStore alike.
    """
    return ["summary"] if value.get("kind") == "episode" else ["text"]


# --- what extract proposes (after aliases are resolved to real store keys) -----------------


class ProposedFact(BaseModel):
    """A fact extract proposes. ``same_as``/``supersedes`` are existing fact KEYS.

    >>> ProposedFact(text="Lives in Lyon", category="personal", confidence=0.9).private
    False
    """

    model_config = ConfigDict(extra="ignore")

    text: CleanText = Field(min_length=1, max_length=MAX_TEXT)
    category: FactCategory = "general"
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    evidence: str | None = Field(default=None, max_length=MAX_EVIDENCE)
    tags: Tags = Field(default_factory=list)
    private: bool = False
    same_as: str | None = None
    supersedes: str | None = None
    entities: list[Entity] = Field(default_factory=list, max_length=MAX_ENTITIES)
    relations: list[Relation] = Field(default_factory=list, max_length=MAX_ENTITIES)
    #: when it holds in the world, resolved against when it was said (memory.dates)
    valid_from: Stamp | None = None
    valid_to: Stamp | None = None


class ProposedEpisode(BaseModel):
    """An episode extract proposes for the span it read."""

    model_config = ConfigDict(extra="ignore")

    summary: CleanText = Field(min_length=1, max_length=MAX_SUMMARY)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    outcome: str | None = Field(default=None, max_length=500)
    topics: Tags = Field(default_factory=list)


class ProposedInstruction(BaseModel):
    """A standing instruction extract found in what the user said."""

    model_config = ConfigDict(extra="ignore")

    text: CleanText = Field(min_length=1, max_length=MAX_TEXT)
    priority: int = Field(default=5, ge=1, le=10)
    condition: str | None = Field(default=None, max_length=500)

    @field_validator("condition")
    @classmethod
    def _check_condition(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parse_condition(value)
        return " ".join(value.split())


class Extraction(BaseModel):
    """Everything one extraction call proposes; reconcile applies it in one atomic batch.

    >>> Extraction(facts=[ProposedFact(text="Likes tea")]).episode is None
    True
    """

    model_config = ConfigDict(extra="ignore")

    facts: list[ProposedFact] = Field(default_factory=list, max_length=100)
    episode: ProposedEpisode | None = None
    instructions: list[ProposedInstruction] = Field(default_factory=list, max_length=20)
    #: provenance, filled by extract (not by the model)
    thread_id: str | None = None
    message_ids: list[str] = Field(default_factory=list)
    started_at: Stamp | None = None
    ended_at: Stamp | None = None
    #: when the span was said (its last message's time, a session date, or the extraction's)
    observed_at: Stamp | None = None
