"""What the service returns and takes: typed, JSON-ready records, queries and pages.

One flat :class:`MemoryRecord` covers the three memory kinds (a fact, an instruction, an
episode), so a table, a JSON dump and an API response show the same fields. ``value`` holds
the whole stored value (private text opened when the service has the key).

Statuses are derived from the stored value, the same way for every surface:

========== =============================================================================
active     a current fact, an active unexpired instruction, an episode
pending    a fact waiting for confirmation (stored ``pending_confirmation``)
superseded a fact closed by a newer one (``superseded_by`` set)
forgotten  a fact closed by hand (``forget``/``reject``): restorable
expired    a fact past its ``valid_to``, an instruction past its ``expires_at``
disabled   an instruction turned off
========== =============================================================================

The rule is :data:`STATUS_RULES`, data that :func:`status_of` reads in Python and the listings
and counts read in SQL (store/_labels.py), so the two cannot drift.

>>> from datetime import UTC, datetime
>>> status_of("semantic", {"status": "pending_confirmation"}, datetime.now(UTC))
'pending'
>>> MemoryQuery(status=["pending"], limit=10).model_dump()["status"]
['pending']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langmem_vault.memory._models import FactCategory
from langmem_vault.memory._recall.scoring import as_datetime
from langmem_vault.memory._writes import is_private
from langmem_vault.store._labels import Is, Labeling, Past, Rule, Truthy, label_of

__all__ = [
    "KINDS",
    "STATUSES",
    "STATUS_RULES",
    "TOTAL_LIMIT",
    "Identity",
    "Kind",
    "MatchType",
    "MemoryPage",
    "MemoryQuery",
    "MemoryRecord",
    "SearchHit",
    "SearchResults",
    "SearchType",
    "Status",
    "StatusCounts",
    "record_of",
    "status_of",
]

Kind = Literal["semantic", "instruction", "episode"]
KINDS: tuple[str, ...] = get_args(Kind)
Status = Literal["active", "pending", "superseded", "forgotten", "expired", "disabled"]
STATUSES: tuple[str, ...] = get_args(Status)
SearchType = Literal["text", "semantic", "hybrid"]
MatchType = Literal["text", "semantic", "both"]
MAX_LIMIT = 1000
#: The deepest page a listing jumps to by ``offset``; past it, page by ``after`` (a page's
#: ``next``: 2.7-2.9 ms p95 at any depth). A page at an offset walks the entries it skips; with
#: a status it also reads and judges each skipped row. At 10,000 memories a status page at
#: offset 1,000 took 5.5-5.7 ms p95 and one at 500 3.3-3.4 (bench/RESULTS.md, issue 28,
#: session 12), where a page may take 5 ms.
MAX_OFFSET = 500


class Identity(BaseModel):
    """Who is acting: a user (may act for ``user_id`` only) or an admin (for anyone).

    ``name`` is what the audit log records as the actor.

    >>> Identity.for_user("alice").may_act_for("bob")
    False
    >>> Identity.admin("ops@cli").may_act_for("bob")
    True
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, max_length=256)
    user_id: str | None = None
    is_admin: bool = False

    @classmethod
    def for_user(cls, user_id: str, *, name: str | None = None) -> Identity:
        """An identity that may act for ``user_id`` only."""
        return cls(name=name or user_id, user_id=user_id)

    @classmethod
    def admin(cls, name: str = "admin") -> Identity:
        """An identity that may act for every user and list them."""
        return cls(name=name, is_admin=True)

    def may_act_for(self, user_id: str) -> bool:
        """Whether this identity may read or change ``user_id``'s data."""
        return self.is_admin or self.user_id == user_id


class MemoryRecord(BaseModel):
    """One stored memory of any kind, flattened for tables and JSON.

    Fields that do not apply to a kind are None (``category`` of an instruction...).
    """

    key: str
    user_id: str
    kind: Kind
    text: str
    status: Status
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    confidence: float | None = None
    priority: int | None = None
    private: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None
    #: why a private memory cannot be opened (its sealing key is not held) and how to
    #: recover; None when it was read
    unreadable: str | None = None
    #: the whole stored value (fact, instruction or episode fields), private text opened
    value: dict[str, Any] = Field(default_factory=dict)


class SearchHit(MemoryRecord):
    """A search result: the record, its relevance in [0, 1] and how it was found."""

    relevance: float
    match_type: MatchType


#: how many matches a listing by kind counts unless asked for the exact total
TOTAL_LIMIT = 1000


class MemoryPage(BaseModel):
    """A page of a listing: ``items`` holds this page; ``total`` counts the matches.

    On VaultStore a listing by kind alone counts at most ``TOTAL_LIMIT`` (1,000) matches
    unless the query asks for ``exact_total``: when more match, ``total`` is 1,000 and
    ``total_capped`` True (show "1,000+"). A listing with a filter on a derived field
    (``status``, ``category``, ``tags``, ``since``/``until``) counts only when asked
    (``exact_total``, on a page asked for without a cursor): else ``total`` is None. Either
    way a page costs what its rows cost, not what the user holds. Whether a next page exists
    is ``next``, never ``total``."""

    total: int | None
    limit: int
    offset: int
    items: list[MemoryRecord]
    #: True when the user holds more memories than one call reads (the service's
    #: ``max_rows``): ``total`` and ``items`` then come from the part that was read
    truncated: bool = False
    #: True when more than ``total`` match (the count stopped at ``TOTAL_LIMIT``)
    total_capped: bool = False
    #: the cursor of the next page (pass it as ``after``); None on the last page
    next: str | None = None


class StatusCounts(BaseModel):
    """How many of a user's memories have each status (a status none has is absent).

    Counted as a listing's total is: a count above ``TOTAL_LIMIT`` (1,000) is 1,000, its
    status in ``capped`` (show "1,000+").

    >>> StatusCounts.of({"active": 1500, "pending": 2}).total(["active", "pending"])
    (1000, True)
    """

    counts: dict[Status, int]
    capped: list[Status] = Field(default_factory=list)

    @classmethod
    def of(cls, exact: Mapping[Any, int]) -> StatusCounts:
        """The counts of ``exact`` (status to count), capped."""
        counts = {s: min(n, TOTAL_LIMIT) for s, n in exact.items() if s in STATUSES}
        return cls(counts=counts, capped=[s for s in counts if exact[s] > TOTAL_LIMIT])

    def total(self, statuses: Sequence[Status]) -> tuple[int, bool]:
        """How many memories have one of ``statuses``, and whether more than that do."""
        n = sum(self.counts.get(s, 0) for s in statuses)
        capped = n > TOTAL_LIMIT or any(s in self.capped for s in statuses)
        return min(n, TOTAL_LIMIT), capped


class SearchResults(BaseModel):
    """Search hits, best first."""

    query: str
    search_type: SearchType
    items: list[SearchHit]
    #: True when the lexical side saw only the most recently updated ``max_rows`` memories
    truncated: bool = False


class MemoryQuery(BaseModel):
    """Filters of a memory listing (every one optional; ``status`` None means every status).

    ``since``/``until`` bound the creation time (``since`` inclusive, ``until`` exclusive);
    ``tags`` must all be present. Validated: a bad value raises naming the field.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Kind | None = None
    status: list[Status] | None = None
    category: FactCategory | None = None
    tags: list[str] = Field(default_factory=list)
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(default=50, ge=1, le=MAX_LIMIT)
    #: at most MAX_OFFSET: deeper pages are reached by ``after``
    offset: int = Field(default=0, ge=0)
    #: a page's ``next`` cursor: the page after it (boundaries stay put while memories
    #: are added); ``offset`` then counts from there
    after: str | None = Field(default=None, max_length=1000)
    #: count every match for ``total`` (:class:`MemoryPage` says what it costs)
    exact_total: bool = False

    @field_validator("offset")
    @classmethod
    def _shallow(cls, offset: int) -> int:
        if offset > MAX_OFFSET:
            raise ValueError(
                f"must be at most {MAX_OFFSET}, got {offset}: page further with after "
                "(the next cursor of the page before), which costs the same at any depth"
            )
        return offset

    @field_validator("tags")
    @classmethod
    def _norm_tags(cls, tags: list[str]) -> list[str]:
        return [" ".join(t.split()).lower() for t in tags if t.strip()]

    def matches(self, record: MemoryRecord) -> bool:
        """Whether ``record`` passes every filter (paging aside)."""
        if self.kind is not None and record.kind != self.kind:
            return False
        if self.status is not None and record.status not in self.status:
            return False
        if self.category is not None and record.category != self.category:
            return False
        if self.tags and not set(self.tags) <= set(record.tags):
            return False
        created = record.created_at
        if self.since is not None and (created is None or created < _aware(self.since)):
            return False
        return not (
            self.until is not None and created is not None and created >= _aware(self.until)
        )


def _aware(moment: datetime) -> datetime:
    return as_datetime(moment) or moment


#: each kind's status rule (the first that holds): the table of the module docstring
STATUS_RULES: dict[str, Labeling] = {
    "semantic": (
        Rule("pending", (Is("status", "pending_confirmation"),)),
        Rule("superseded", (Is("status", "superseded"), Truthy("superseded_by"))),
        Rule("forgotten", (Is("status", "superseded"),)),
        Rule("expired", (Past("valid_to"),)),
        Rule("active"),
    ),
    "instruction": (
        Rule("disabled", (Is("active", False),)),
        Rule("expired", (Past("expires_at"),)),
        Rule("active"),
    ),
    "episode": (Rule("active"),),
}


def status_of(kind: str, value: Mapping[str, Any], now: datetime) -> Status:
    """The derived status of a stored value (see the module docstring)."""
    return label_of(STATUS_RULES[kind], value, now)  # type: ignore[return-value]


def record_of(
    kind: str, user_id: str, key: str, value: Mapping[str, Any], now: datetime
) -> MemoryRecord:
    """The record of one stored (and opened) value."""
    text = value.get("summary") if kind == "episode" else value.get("text")
    tags = value.get("topics") if kind == "episode" else value.get("tags")
    return MemoryRecord(
        key=key,
        user_id=user_id,
        kind=kind,  # type: ignore[arg-type]
        text=str(text or ""),
        status=status_of(kind, value, now),
        category=value.get("category") if kind == "semantic" else None,
        tags=list(tags or []),
        confidence=value.get("confidence") if kind == "semantic" else None,
        priority=value.get("priority") if kind == "instruction" else None,
        private=is_private(value),
        created_at=as_datetime(value.get("created_at")),
        updated_at=as_datetime(value.get("updated_at")),
        unreadable=value.get("unreadable"),
        value=dict(value),
    )
