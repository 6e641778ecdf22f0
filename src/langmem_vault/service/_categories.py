"""Categories of a user's facts: the built-in ones and the user's own, with colours, counts and
when each was last used.

A fact's ``category`` is one of the built-in :data:`~langmem_vault.memory._models.CATEGORIES`.
A user's own category (``"rome-trip"``, parent ``"project"``) groups facts by a *tag* of the
same name, so user categories need no change to the fact schema and every store and node
keeps working. Definitions (and colour/description overrides of built-ins) live at
``("memories", "{user_id}", "categories")``, under the user's own prefix, so export and
erase cover them with the rest.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.db._steps import run_steps
>>> from langmem_vault.memory._vault import MemoryVault
>>> store = InMemoryStore()
>>> _ = MemoryVault(store, user_id="u1").remember("Likes espresso", category="preference")
>>> cats = run_steps(categories_plan("u1"), store)
>>> [(c.name, c.count, c.colour) for c in cats if c.count]
[('preference', 1, '#2563eb')]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Self

from langgraph.store.base import GetOp, Item, PutOp
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from langmem_vault.db._steps import Step, Steps, Within
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._models import CATEGORIES, utcnow
from langmem_vault.memory._namespaces import MemoryNamespaces, resolve_namespace
from langmem_vault.memory._recall.retrieval import scan_op, scan_plan
from langmem_vault.memory._recall.scoring import as_datetime
from langmem_vault.memory._recall.usage import read_usage_plan
from langmem_vault.service._base import ServiceBase
from langmem_vault.service._errors import InvalidInput, from_validation
from langmem_vault.store._pages import runs_pages
from langmem_vault.store._tallies import TallyOp
from langmem_vault.store._validation import MAX_PAGE

__all__ = [
    "CATEGORY_NAMESPACE",
    "DEFAULT_COLOURS",
    "CategoriesMixin",
    "CategoryInfo",
    "CategorySpec",
    "categories_plan",
    "colour_of",
    "save_category_plan",
]

CATEGORY_NAMESPACE = ("memories", "{user_id}", "categories")

#: one distinct colour per built-in category (Tailwind 600 shades: readable on white)
DEFAULT_COLOURS: dict[str, str] = {
    "preference": "#2563eb",
    "decision": "#7c3aed",
    "relationship": "#db2777",
    "project": "#ea580c",
    "company": "#0891b2",
    "personal": "#16a34a",
    "skill": "#ca8a04",
    "knowledge": "#4f46e5",
    "commitment": "#dc2626",
    "strategic": "#0d9488",
    "general": "#64748b",
}
USER_COLOUR = "#475569"
ACTIVE = {"status": "active"}
_NAME = re.compile(r"^[a-z0-9][a-z0-9 _-]{0,49}$")


class CategorySpec(BaseModel):
    """What a user may set on a category (all optional on an edit)."""

    model_config = ConfigDict(extra="forbid")

    colour: str | None = Field(default=None, pattern=r"^#[0-9a-fA-F]{6}$")
    description: str | None = Field(default=None, max_length=500)
    parent: str | None = Field(default=None, max_length=50)

    @field_validator("parent")
    @classmethod
    def _parent(cls, value: str | None) -> str | None:
        return value.strip().lower() or None if value is not None else None


class CategoryInfo(BaseModel):
    """A category as listed: definition, how many current facts it holds, last use."""

    name: str
    builtin: bool
    colour: str
    description: str | None = None
    parent: str | None = None
    count: int = 0
    last_used: datetime | None = None
    #: the count covers the service's ``max_rows`` most recently updated facts and reached
    #: it: the user may hold more of them (show "N+")
    capped: bool = False

    @classmethod
    def of(cls, name: str, stored: Mapping[str, Any] | None) -> Self:
        stored = stored or {}
        builtin = name in CATEGORIES
        return cls(
            name=name,
            builtin=builtin,
            colour=stored.get("colour") or DEFAULT_COLOURS.get(name, USER_COLOUR),
            description=stored.get("description"),
            parent=None if builtin else stored.get("parent"),
        )


def colour_of(name: str | None) -> str:
    """The default colour of a category name (user categories share one grey).

    >>> colour_of("preference"), colour_of("rome-trip")
    ('#2563eb', '#475569')
    """
    return DEFAULT_COLOURS.get(name or "general", USER_COLOUR)


def _namespace(user_id: str) -> tuple[str, ...]:
    return resolve_namespace(CATEGORY_NAMESPACE, {"configurable": {"user_id": user_id}})


def _latest(*stamps: Any) -> datetime | None:
    found = [s for s in map(as_datetime, stamps) if s is not None]
    return max(found, default=None)


def categories_plan(
    user_id: str,
    namespaces: MemoryNamespaces | None = None,
    *,
    max_rows: int | None = None,
    counted: bool = True,
    in_sql: bool = False,
) -> StorePlan[list[CategoryInfo]]:
    """Every category (built-in first, then the user's own by name, all of them) with the
    number of the user's current facts in it and when one of them was last injected or
    written (counted over the ``max_rows`` most recently updated facts, when given: each
    category then says ``capped`` when they were that many); ``counted=False``: the
    categories alone (count 0, never used), without reading the facts. A fact is in its
    ``category`` (a string; "general" when it has none) and in each user category its
    ``tags`` (a list) name. ``in_sql`` (a store that runs
    :class:`~langmem_vault.store._tallies.TallyOp`): counted in one statement, the facts
    and their usage records left on the server."""
    semantic = (namespaces or MemoryNamespaces()).resolve({"configurable": {"user_id": user_id}})
    # every one of the user's own: max_rows bounds the facts counted, not the names listed
    defined = yield from scan_plan(_namespace(user_id))
    infos = {name: CategoryInfo.of(name, None) for name in CATEGORIES}
    for item in sorted(defined, key=lambda i: i.key):
        infos[item.key] = CategoryInfo.of(item.key, item.value)
    if not counted:
        return list(infos.values())
    own = tuple(name for name in infos if name not in CATEGORIES)
    if in_sql:
        search = scan_op(semantic.semantic, ACTIVE, 0, MAX_PAGE if max_rows is None else max_rows)
        op: Any = TallyOp(search, "category", "general", "tags", own)  # Batch takes Any op
        (tallies,) = yield Batch([op])
        for name, tally in tallies.groups.items():
            if (info := infos.get(name)) is not None:
                info.count = tally.items
                info.last_used = _latest(tally.newest, *tally.odd)
        return _capped(infos, tallies.items, max_rows)
    # every current fact and its usage record: 0.4 s at 10,000 (bench/RESULTS.md)
    facts = yield from scan_plan(semantic.semantic, ACTIVE, limit=max_rows)
    usage = yield from read_usage_plan((tuple(i.namespace), i.key) for i in facts)
    for fact in facts:
        used = usage.get((tuple(fact.namespace), fact.key)) or {}
        when = _latest(fact.value.get("updated_at"), used.get("last_accessed"))
        for name in _groups(fact.value, own):
            if (info := infos.get(name)) is not None:
                info.count += 1
                info.last_used = _latest(info.last_used, when)
    return _capped(infos, len(facts), max_rows)


def _capped(infos: dict[str, CategoryInfo], read: int, max_rows: int | None) -> list[CategoryInfo]:
    """The listing, each count marked capped when the facts read reached ``max_rows``."""
    for info in infos.values():
        info.capped = max_rows is not None and read >= max_rows
    return list(infos.values())


def _groups(value: Mapping[str, Any], own: tuple[str, ...]) -> set[str]:
    """The categories a fact is in, as :class:`~langmem_vault.store._tallies.TallyOp` groups it."""
    category = value.get("category", "general")
    tags = value.get("tags")
    names = {category} if isinstance(category, str) else set()
    if isinstance(tags, list):
        names.update(t for t in tags if isinstance(t, str) and t in own)
    return names


def save_category_plan(
    user_id: str, name: str, spec: CategorySpec | Mapping[str, Any]
) -> StorePlan[CategoryInfo]:
    """Create or edit a category. Built-ins take a colour and description only; a user's
    category may name a parent (any existing category, never itself or a descendant).
    :class:`~langmem_vault.service._errors.InvalidInput` naming the field, before anything
    is written."""
    norm = " ".join(name.split()).lower()
    if not _NAME.match(norm):
        raise InvalidInput(
            "name",
            "must be 1-50 lowercase letters, digits, spaces, '-' or '_', "
            f"starting with a letter or digit; got {name[:60]!r}",
        )
    try:
        spec = spec if isinstance(spec, CategorySpec) else CategorySpec.model_validate(spec)
    except ValidationError as exc:
        raise from_validation(exc) from None
    ns = _namespace(user_id)
    changes = spec.model_dump(exclude_unset=True)
    if norm in CATEGORIES and changes.get("parent"):
        raise InvalidInput("parent", f"built-in category {norm!r} cannot have a parent")
    (old,) = yield Batch([GetOp(ns, norm)])
    value: dict[str, Any] = dict(old.value) if isinstance(old, Item) else {"created_at": None}
    value.update(changes)
    if parent := value.get("parent"):
        defined = yield from scan_plan(ns)
        parents = {i.key: i.value.get("parent") for i in defined}
        if parent not in CATEGORIES and parent not in parents:
            raise InvalidInput("parent", f"no category named {parent!r}")
        seen, walk = {norm}, parent
        while walk is not None:  # the new parent chain must not lead back here
            if walk in seen:
                raise InvalidInput("parent", f"{parent!r} would make a cycle through {norm!r}")
            seen.add(walk)
            walk = parents.get(walk)
    now = utcnow().isoformat()
    value["created_at"] = value.get("created_at") or now
    value["updated_at"] = now
    yield Batch([PutOp(ns, norm, value, index=False)])
    return CategoryInfo.of(norm, value)


class CategoriesMixin(ServiceBase):
    """Category operations of :class:`~langmem_vault.service.MemoryService`."""

    def _save_category_steps(
        self, user_id: str, name: str, spec: CategorySpec | Mapping[str, Any]
    ) -> Steps[CategoryInfo]:
        info: CategoryInfo = yield Within(self.store, save_category_plan(user_id, name, spec))
        ns = _namespace(user_id)
        yield from self._audited(user_id, "edit", key=info.name, namespace=ns)
        return info

    def _categories_steps(self, user_id: str, counted: bool) -> Steps[list[CategoryInfo]]:
        plan = categories_plan(
            self._authorize(user_id),
            self.namespaces,
            max_rows=self.max_rows,
            counted=counted,
            in_sql=runs_pages(self.store),
        )
        return _one(Within(self.store, plan))

    def list_categories(self, user_id: str, *, counted: bool = True) -> list[CategoryInfo]:
        """Built-in and the user's own categories with counts and last use (``counted=False``:
        without them, reading only the categories, not the user's facts)."""
        return self._run(self._categories_steps(user_id, counted))

    async def alist_categories(self, user_id: str, *, counted: bool = True) -> list[CategoryInfo]:
        """Async :meth:`list_categories`."""
        return await self._arun(self._categories_steps(user_id, counted))

    def save_category(
        self, user_id: str, name: str, spec: CategorySpec | Mapping[str, Any]
    ) -> CategoryInfo:
        """Create or edit a category (see :func:`save_category_plan`); audited."""
        return self._run(self._save_category_steps(self._authorize(user_id), name, spec))

    async def asave_category(
        self, user_id: str, name: str, spec: CategorySpec | Mapping[str, Any]
    ) -> CategoryInfo:
        """Async :meth:`save_category`."""
        return await self._arun(self._save_category_steps(self._authorize(user_id), name, spec))


def _one(step: Step) -> Steps[Any]:
    return (yield step)
